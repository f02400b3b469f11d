"""Liveness and readiness probes for the orchestrator."""

from litestar import get
from sqlalchemy import text

from api.http.problems import RETRY_AFTER_SECONDS, Problem
from api.http.routing import DatabaseDependency


@get("/health", tags=["operations"], sync_to_thread=False)
def get_health() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@get("/ready", tags=["operations"], sync_to_thread=True)
def get_readiness(database: DatabaseDependency) -> dict[str, str]:
    """The database answers."""
    try:
        with database.reading() as session:
            session.execute(text("SELECT 1"))
    except Exception as error:
        raise Problem(
            503,
            "database_unavailable",
            "the database does not answer",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        ) from error
    return {"status": "ready"}
