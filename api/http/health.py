"""Liveness and readiness probes for the orchestrator."""

from anyio import CapacityLimiter
from anyio.lowlevel import RunVar
from anyio.to_thread import run_sync
from litestar import get

from api.http.problems import RETRY_AFTER_SECONDS, Problem
from api.http.routing import DatabaseDependency

_PROBES = RunVar[CapacityLimiter]("casino_war_readiness_probes")


def probe_turns() -> CapacityLimiter:
    """One readiness probe at a time per server process (per event loop): a probe opens a
    connection of its own, and a flood of `/ready`, which needs no token, must not open one
    each."""
    try:
        return _PROBES.get()
    except LookupError:
        turns = CapacityLimiter(1)
        _PROBES.set(turns)
        return turns


@get("/health", tags=["operations"], sync_to_thread=False)
def get_health() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@get("/ready", tags=["operations"])
async def get_readiness(database: DatabaseDependency) -> dict[str, str]:
    """The database answers. Probed in a thread of its own, on a connection of its own
    (`Database.probe`), one probe at a time: a server whose threads and pool are all at work
    is busy, not unready, and its probe must not queue behind the requests it serves."""
    try:
        await run_sync(database.probe, limiter=probe_turns())
    except Exception as error:
        raise Problem(
            503,
            "database_unavailable",
            "the database does not answer",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        ) from error
    return {"status": "ready"}
