"""Liveness and readiness probes for the orchestrator."""

from anyio import CapacityLimiter
from anyio.to_thread import run_sync
from litestar import get

from api.http.problems import RETRY_AFTER_SECONDS, Problem
from api.http.routing import DatabaseDependency


@get("/health", tags=["operations"], sync_to_thread=False)
def get_health() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@get("/ready", tags=["operations"])
async def get_readiness(database: DatabaseDependency) -> dict[str, str]:
    """The database answers. Probed in a thread of its own, on a connection of its own
    (`Database.probe`): a server whose threads and pool are all at work is busy, not unready,
    and its probe must not queue behind the requests it serves."""
    try:
        await run_sync(database.probe, limiter=CapacityLimiter(1))
    except Exception as error:
        raise Problem(
            503,
            "database_unavailable",
            "the database does not answer",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        ) from error
    return {"status": "ready"}
