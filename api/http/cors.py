"""CORS: off unless `CASINO_WAR_CORS_ALLOWED_ORIGINS` lists the origins of front ends that
call the API from a browser. Tokens travel in the Authorization header, never in cookies,
so credentials are not allowed across origins."""

from litestar.config.cors import CORSConfig

from api.settings import Settings


def cors_config(settings: Settings) -> CORSConfig | None:
    if not settings.cors_allowed_origins:
        return None
    return CORSConfig(
        allow_origins=list(settings.cors_allowed_origins),
        allow_methods=["GET", "POST"],
        allow_headers=["Authorization", "Content-Type", "Idempotency-Key"],
        expose_headers=["Idempotent-Replayed", "Retry-After"],
        allow_credentials=False,
        max_age=600,
    )
