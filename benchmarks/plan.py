"""How long and how big each measurement is: the full run, the quick run, and the test's."""

from dataclasses import dataclass, field, replace


@dataclass(frozen=True, slots=True)
class Plan:
    """Sizes of one benchmark run; every measurement reads its sizes from here."""

    mode: str
    duration_seconds: float  # measured time per load point (HTTP, pgbench, raw SQLite)
    warmup_seconds: float  # load applied before measuring starts, per point
    clients: tuple[int, ...] = (1, 8, 32)
    sqlite_workers: int = 1  # SQLite serialises writers: more processes only queue
    postgresql_workers: int = 2
    ledger_seconds: float = 3.0
    audit_sizes: tuple[int, ...] = (25_000, 50_000, 100_000)
    audit_chunk: int | None = None  # hands per parallel chunk; None: the audit's default
    # Hands of the smaller audit counted in instructions (`benchmarks.instructions`, on the
    # audit's own database); None: not counted (valgrind runs the audit twice, and slowly).
    audit_instruction_hands: int | None = 1_000
    # Units settled (hands; do-nothing requests for the endpoint) by the smaller and the
    # larger served run counted in instructions (`benchmarks.server_instructions`: SQLite's
    # hot path and the do-nothing request, each under valgrind for a minute or two); None:
    # not counted.
    served_instruction_hands: tuple[int, int] | None = (200, 600)
    simulation_hands: int = 200_000
    pgbench_scale: int = 8  # >= the goal's 8 clients, so branches are not one hot row
    bet: int = 100
    deposit: int = 10**12  # each player's wallet, funded once
    cashier_amount: int = 100  # each deposit of the deposits' load
    # Hands the history point's players hold between them before it is measured, at
    # `history_clients` clients (one of `clients`, to compare with the fresh point).
    history_hands: int = 100_000
    history_clients: int = 8
    databases: tuple[str, ...] = field(default=("sqlite", "postgresql"))

    def with_databases(self, databases: tuple[str, ...]) -> "Plan":
        return replace(self, databases=databases)


FULL = Plan(mode="full", duration_seconds=10.0, warmup_seconds=2.0)

QUICK = Plan(
    mode="quick",
    duration_seconds=0.35,
    warmup_seconds=0.1,
    ledger_seconds=0.3,
    audit_sizes=(50, 100, 200),
    audit_chunk=20,  # so that these sizes still make several chunks for the worker pool
    audit_instruction_hands=None,
    served_instruction_hands=None,
    simulation_hands=10_000,
    history_hands=2_000,
)

TINY = Plan(
    mode="tiny",
    duration_seconds=0.3,
    warmup_seconds=0.1,
    clients=(1, 2),
    ledger_seconds=0.2,
    audit_sizes=(50, 100),
    audit_chunk=20,
    audit_instruction_hands=None,
    served_instruction_hands=None,
    simulation_hands=1_000,
    pgbench_scale=1,
    history_hands=200,
    history_clients=2,
)
