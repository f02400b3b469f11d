"""The pages: each a file inside this package, served as it is (no template, no CDN)."""

from functools import cache
from importlib.resources import files

from litestar import get
from litestar.response import Response

HTML = "text/html; charset=utf-8"


@cache
def page(name: str) -> str:
    return files("api.web").joinpath(name).read_text(encoding="utf-8")


@get("/", include_in_schema=False, sync_to_thread=False)
def index() -> Response[str]:
    """The pages there are, for people who open the service in a browser."""
    return Response(page("index.html"), media_type=HTML)


@get("/pages.js", include_in_schema=False, sync_to_thread=False)
def pages_script() -> Response[str]:
    """The script the signed-in pages share (the verifier shares nothing: it stands alone)."""
    return Response(page("pages.js"), media_type="text/javascript; charset=utf-8")


@get("/play", include_in_schema=False, sync_to_thread=False)
def play_page() -> Response[str]:
    """The player's table: it calls the public API with the token pasted once."""
    return Response(page("play.html"), media_type=HTML)


@get("/war", include_in_schema=False, sync_to_thread=False)
def war_page() -> Response[str]:
    """Free War games: deal one of the family and play it a turn at a time."""
    return Response(page("war.html"), media_type=HTML)


@get("/office", include_in_schema=False, sync_to_thread=False)
def office_page() -> Response[str]:
    """The back office: players, the cashier, tables, hands awaiting a decision, and the
    payout report drawn as a chart, through the public API with an operator token."""
    return Response(page("office.html"), media_type=HTML)


@get("/audit", include_in_schema=False, sync_to_thread=False)
def audit_page() -> Response[str]:
    """The auditor's desk: a hand's replay beside its record, its ledger, the integrity
    checks and the significant events, through the public API with an auditor token."""
    return Response(page("audit.html"), media_type=HTML)


@get("/verify", include_in_schema=False, sync_to_thread=False)
def verify_page() -> Response[str]:
    """The standalone verifier: one self-contained file that also works opened from disk."""
    return Response(page("verify.html"), media_type=HTML)


@get("/verify/download", include_in_schema=False, sync_to_thread=False)
def verify_download() -> Response[str]:
    """The verifier as a file to keep: it needs no server, this one least of all."""
    return Response(
        page("verify.html"),
        media_type=HTML,
        headers={"Content-Disposition": 'attachment; filename="casino-war-verify.html"'},
    )
