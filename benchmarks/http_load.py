"""Closed-loop HTTP load: N clients, each its own connection, player and funded wallet.

Every client plays hand after hand: `POST /v1/hands`, and when the first deal ties,
`POST /v1/hands/{id}/decision` with `war`, each POST with a fresh Idempotency-Key. The same
loop drives deposits (`POST /v1/cashier/deposits` by the operator, each client to a player of
its own) and the do-nothing endpoint (one POST per unit). Load runs for a warm-up, then for
the measured window; only requests that complete inside the window count.
"""

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from api.db.database import Database
from api.domain.tokens.service import Role, issue_token
from benchmarks.cpu import Meter
from benchmarks.plan import Plan
from benchmarks.servers import tls_context
from benchmarks.stats import latency_summary, rate

_keys = itertools.count()
REQUEST_TIMEOUT_SECONDS = 120.0
CURRENCY = "USD"


@dataclass
class Window:
    """What the clients record; `measuring` is on only during the measured window."""

    measuring: bool = False
    stopping: bool = False
    latencies: list[float] = field(default_factory=list)
    units: int = 0
    requests: int = 0
    errors: int = 0
    wars: int = 0
    first_error: str | None = None


@dataclass(frozen=True, slots=True)
class Player:
    token: str
    player_id: int


Step = Callable[[httpx.AsyncClient, Window], Awaitable[None]]


def _key() -> str:
    return f"bench-{next(_keys)}"


async def _post(
    client: httpx.AsyncClient, window: Window, path: str, body: dict[str, Any]
) -> dict[str, Any] | None:
    """One timed POST; None (and an error counted) unless it succeeded."""
    started = time.perf_counter()
    try:
        response = await client.post(path, json=body, headers={"Idempotency-Key": _key()})
    except httpx.HTTPError as error:  # the server went away: count it, do not spin
        if window.measuring:
            window.errors += 1
        if window.first_error is None:
            window.first_error = f"{path}: {type(error).__name__}: {error}"
        await asyncio.sleep(0.1)
        return None
    elapsed = time.perf_counter() - started
    if window.measuring:
        window.requests += 1
        window.latencies.append(elapsed)
    if response.status_code >= 300:
        if window.measuring:
            window.errors += 1
        if window.first_error is None:
            window.first_error = f"{path}: {response.status_code} {response.text[:300]}"
        return None
    result: dict[str, Any] = response.json()
    return result


def hand_step(table_id: int, bet: int) -> Step:
    """Play one hand to settlement; a tie goes to war (a failed decision is retried)."""
    pending: dict[int, int] = {}  # id(client) -> hand awaiting a decision after an error

    async def step(client: httpx.AsyncClient, window: Window) -> None:
        hand_id = pending.pop(id(client), None)
        if hand_id is None:
            hand = await _post(client, window, "/v1/hands", {"table_id": table_id, "bet": bet})
            if hand is None:
                return
            if hand["status"] != "awaiting_decision":
                if window.measuring:
                    window.units += 1
                return
            hand_id = int(hand["id"])
        decided = await _post(client, window, f"/v1/hands/{hand_id}/decision", {"action": "war"})
        if decided is None:
            pending[id(client)] = hand_id
        elif window.measuring:
            window.units += 1
            window.wars += 1

    return step


def deposit_step(player_ids: Sequence[int], amount: int) -> Step:
    """One deposit of `amount` to the client's own player: each new client takes the next of
    `player_ids`, so that no two clients wait on one player's lock, as no two players' hands
    do."""
    assigned: dict[int, int] = {}  # id(client) -> player it deposits to

    async def step(client: httpx.AsyncClient, window: Window) -> None:
        player_id = assigned.get(id(client))
        if player_id is None:
            player_id = assigned[id(client)] = player_ids[len(assigned)]
        body = {"player_id": player_id, "amount": amount, "currency": CURRENCY}
        receipt = await _post(client, window, "/v1/cashier/deposits", body)
        if receipt is not None and window.measuring:
            window.units += 1

    return step


async def noop_step(client: httpx.AsyncClient, window: Window) -> None:
    """One request to the do-nothing endpoint: the HTTP stack's unit of work."""
    answered = await _post(client, window, "/noop", {"table_id": 1, "bet": 100})
    if answered is not None and window.measuring:
        window.units += 1


async def _client_loop(client: httpx.AsyncClient, window: Window, step: Step) -> None:
    async with client:
        while not window.stopping:
            await step(client, window)


async def _measure(
    clients: list[httpx.AsyncClient],
    step: Step,
    warmup: float,
    duration: float,
    meters: Mapping[str, Meter],
) -> tuple[Window, float, dict[str, float | None]]:
    window = Window()
    tasks = [asyncio.create_task(_client_loop(c, window, step)) for c in clients]
    await asyncio.sleep(warmup)
    window.measuring = True
    cpu_before = _read(meters)
    started = time.perf_counter()
    await asyncio.sleep(duration)
    window.measuring = False
    elapsed = time.perf_counter() - started
    cpu_after = _read(meters)
    window.stopping = True
    await asyncio.gather(*tasks)
    used: dict[str, float | None] = {}
    for name, before in cpu_before.items():
        after = cpu_after[name]
        used[name] = None if before is None or after is None else after - before
    return window, elapsed, used


def _read(meters: Mapping[str, Meter]) -> dict[str, float | None]:
    return {name: meter() for name, meter in meters.items()}


def _per_unit_ms(seconds: float | None, units: int) -> float | None:
    return None if seconds is None or not units else round(seconds / units * 1000, 3)


def client(base_url: str, token: str | None) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(
        base_url=base_url,
        headers=headers,
        timeout=REQUEST_TIMEOUT_SECONDS,
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        verify=tls_context(),
    )


def run_point(
    base_url: str,
    tokens: list[str | None],
    step: Step,
    plan: Plan,
    meters: Mapping[str, Meter] | None = None,
) -> dict[str, Any]:
    """Drive `len(tokens)` concurrent clients through `step`; the point's figures, with the
    CPU each of `meters` used in the measured window per unit."""
    clients = [client(base_url, token) for token in tokens]
    window, elapsed, cpu_seconds = asyncio.run(
        _measure(clients, step, plan.warmup_seconds, plan.duration_seconds, meters or {})
    )
    return {
        "clients": len(tokens),
        "seconds": round(elapsed, 3),
        "units": window.units,
        "units_per_second": rate(window.units, elapsed),
        "requests": window.requests,
        "requests_per_second": rate(window.requests, elapsed),
        "errors": window.errors,
        "first_error": window.first_error,
        "wars": window.wars,
        "latency_ms": latency_summary(window.latencies),
        "cpu_ms_per_unit": {
            name: _per_unit_ms(seconds, window.units) for name, seconds in cpu_seconds.items()
        },
    }


# Setting up players ---------------------------------------------------------------------


def operator_token(database_url: str) -> str:
    """An operator token written straight into the service's database (as the CLI does)."""
    database = Database.connect(database_url)
    try:
        with database.transaction() as session:
            return issue_token(session, Role.OPERATOR, name="benchmark")
    finally:
        database.dispose()


def _checked(response: httpx.Response) -> dict[str, Any]:
    if response.status_code >= 300:
        raise RuntimeError(f"setup request failed: {response.status_code} {response.text}")
    body: dict[str, Any] = response.json()
    return body


async def funded_player(client: httpx.AsyncClient, number: int, deposit: int) -> Player:
    """A player created through the API by the operator `client` speaks for, with `deposit`
    in their wallet."""
    created = _checked(
        await client.post(
            "/v1/players",
            json={"display_name": f"bench {number}"},
            headers={"Idempotency-Key": _key()},
        )
    )
    _checked(
        await client.post(
            "/v1/cashier/deposits",
            json={"player_id": created["id"], "amount": deposit, "currency": CURRENCY},
            headers={"Idempotency-Key": _key()},
        )
    )
    return Player(created["token"], int(created["id"]))


async def _create_players(base_url: str, operator: str, count: int, deposit: int) -> list[Player]:
    headers = {"Authorization": f"Bearer {operator}"}
    async with httpx.AsyncClient(
        base_url=base_url, headers=headers, timeout=60, verify=tls_context()
    ) as client:
        return list(
            await asyncio.gather(*(funded_player(client, n, deposit) for n in range(count)))
        )


def create_players(base_url: str, operator: str, count: int, deposit: int) -> list[Player]:
    """`count` players through the API (concurrently), each with `deposit` in their wallet."""
    return asyncio.run(_create_players(base_url, operator, count, deposit))


def standard_table(base_url: str, token: str) -> int:
    with httpx.Client(base_url=base_url, timeout=60, verify=tls_context()) as client:
        page = _checked(client.get("/v1/tables", headers={"Authorization": f"Bearer {token}"}))
    return standard_table_in(page)


def standard_table_in(tables: dict[str, Any]) -> int:
    """The standard table's id in a page of `GET /v1/tables`."""
    return next(int(t["id"]) for t in tables["items"] if t["name"] == "standard")


def idle_latency_ms(base_url: str, samples: int = 20) -> float:
    """Median `GET /ready` on one keep-alive connection, no load: the per-request floor.

    A floor far above a loopback round trip is Nagle's algorithm meeting delayed ACKs on a
    socket without TCP_NODELAY (uvicorn's --workers N path, Kludex/uvicorn#3149).
    """
    timings: list[float] = []
    with httpx.Client(base_url=base_url, timeout=60, verify=tls_context()) as client:
        client.get("/ready")
        for _ in range(samples):
            started = time.perf_counter()
            client.get("/ready")
            timings.append(time.perf_counter() - started)
    return round(sorted(timings)[len(timings) // 2] * 1000, 3)


@dataclass(frozen=True, slots=True)
class Service:
    """A running service set up for load: an operator, funded players, the standard table."""

    base_url: str
    operator: str
    players: tuple[Player, ...]
    table_id: int


def set_up(base_url: str, database_url: str, plan: Plan) -> Service:
    """An operator token and `max(plan.clients)` players funded with `plan.deposit`."""
    operator = operator_token(database_url)
    players = create_players(base_url, operator, max(plan.clients), plan.deposit)
    return Service(base_url, operator, tuple(players), standard_table(base_url, operator))


def hands_point(
    service: Service, plan: Plan, clients: int, meters: Mapping[str, Meter] | None = None
) -> dict[str, Any]:
    """Settled hands per second with `clients` of the service's players playing."""
    tokens: list[str | None] = [p.token for p in service.players[:clients]]
    point = run_point(service.base_url, tokens, hand_step(service.table_id, plan.bet), plan, meters)
    point["hands_per_second"] = point["units_per_second"]
    return point


def hands_curve(
    service: Service, plan: Plan, meters: Mapping[str, Meter] | None = None
) -> dict[str, dict[str, Any]]:
    """Settled hands per second at each client count, against a running service.

    `meters` are read at the start and end of each measured window (`run_point`).
    """
    return {str(count): hands_point(service, plan, count, meters) for count in plan.clients}


def deposits_curve(
    service: Service, plan: Plan, meters: Mapping[str, Meter] | None = None
) -> dict[str, dict[str, Any]]:
    """Deposits of `plan.cashier_amount` per second at each client count, every client the
    operator depositing to a player of its own."""
    player_ids = [p.player_id for p in service.players]
    points: dict[str, dict[str, Any]] = {}
    for count in plan.clients:
        step = deposit_step(player_ids, plan.cashier_amount)
        point = run_point(service.base_url, [service.operator] * count, step, plan, meters)
        point["deposits_per_second"] = point["units_per_second"]
        points[str(count)] = point
    return points


def noop_curve(
    base_url: str, plan: Plan, meters: Mapping[str, Meter] | None = None
) -> dict[str, dict[str, Any]]:
    """Requests per second of the do-nothing endpoint at each client count."""
    return {
        str(count): run_point(base_url, [None] * count, noop_step, plan, meters)
        for count in plan.clients
    }
