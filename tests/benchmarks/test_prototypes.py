"""The prototypes of `benchmarks.lean_hand` and `benchmarks.bare_hand` measure the hand path
only if they do the hand's work: on a database the service set up, each places hands and
decides ties itself, and every hand passes `casino-war audit`, which replays each from its
seeds and holds the ledger to it."""

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from api.http.idempotency import advisory_lock_key
from benchmarks import bare_hand, http_load, lean_hand, servers
from benchmarks.lean_hand import prepared
from benchmarks.plan import TINY
from ledger.database import make_engine


def _hands_and_wars(database_url: str) -> tuple[int, int]:
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            query = "SELECT COUNT(*), COUNT(*) FILTER (WHERE decision = 'war') FROM hands"
            row = connection.exec_driver_sql(query).one()
    finally:
        engine.dispose()
    return int(row[0]), int(row[1])


Serving = Callable[[str], AbstractContextManager[servers.Server]]


@pytest.mark.parametrize(
    ("serving", "database_url"),
    [
        pytest.param(lean_hand.serving, "sqlite", id="lean-sqlite"),
        pytest.param(bare_hand.serving, "sqlite", id="bare-sqlite"),
        pytest.param(bare_hand.serving, "postgresql", id="bare-postgresql"),
        pytest.param(
            partial(bare_hand.serving, combined=True), "postgresql", id="combined-postgresql"
        ),
        pytest.param(partial(bare_hand.serving, grouped=True), "sqlite", id="grouped-sqlite"),
        pytest.param(
            partial(bare_hand.serving, optimistic=True), "postgresql", id="optimistic-postgresql"
        ),
        pytest.param(
            partial(bare_hand.serving, exchanged=True), "postgresql", id="exchanged-postgresql"
        ),
    ],
    indirect=["database_url"],
)
def test_the_prototype_plays_hands_and_wars_that_pass_the_audit(
    serving: Serving, database_url: str
) -> None:
    service = prepared(database_url, TINY)
    hands_before, wars_before = _hands_and_wars(database_url)
    with serving(database_url) as server:
        point = http_load.hands_point(
            replace(service, base_url=server.base_url), replace(TINY, duration_seconds=3.0), 2
        )
    hands_after, wars_after = _hands_and_wars(database_url)
    assert point["errors"] == 0, point["first_error"]
    assert hands_after - hands_before >= point["hands_per_second"] * 3.0 * 0.9
    assert wars_after > wars_before
    audit = subprocess.run(
        [sys.executable, "-m", "api.cli", "audit"],
        env={**os.environ, "CASINO_WAR_DATABASE_URL": database_url},
        cwd=servers.ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "audit: clean" in audit.stdout


_TABLES = (
    "hands",
    "seed_pairs",
    "ledger_accounts",
    "ledger_transactions",
    "ledger_entries",
    "ledger_chain_head",
    "idempotency_records",
)


def _settled_copies(source: Path, *names: str) -> list[Path]:
    with closing(sqlite3.connect(source)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    copies = [source.with_name(name) for name in names]
    for copy in copies:
        shutil.copyfile(source, copy)
    return copies


def _rows(database: Path) -> dict[str, list[tuple[object, ...]]]:
    with closing(sqlite3.connect(database)) as connection:
        return {
            table: connection.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
            for table in _TABLES
        }


Run = Callable[[str, str, str, dict[str, Any]], tuple[int, bytes]]


def _play(run: Run, tokens: list[str], table_id: int, hands: int) -> None:
    for number in range(hands):
        token = tokens[number % len(tokens)]
        body = {"table_id": table_id, "bet": 100}
        status, answer = run(token, f"h{number}", "/v1/hands", body)
        assert status == 201, answer
        hand = json.loads(answer)
        if hand["status"] == "awaiting_decision":
            path = f"/v1/hands/{hand['id']}/decision"
            run(token, f"w{number}", path, {"action": "war"})


@contextmanager
def _bare(database: Path) -> Iterator[bare_hand.BareHands]:
    engine = make_engine(f"sqlite:///{database}")
    pooled = engine.raw_connection()
    try:
        yield bare_hand.BareHands(bare_hand.Bare(pooled.driver_connection, postgresql=False))
    finally:
        pooled.close()
        engine.dispose()


def _one_by_one(hands: bare_hand.BareHands) -> Run:
    return lambda *request: hands.run(hands.command(*request))


def test_the_bare_prototype_writes_the_rows_the_lean_one_writes(tmp_path: Path) -> None:
    source = tmp_path / "prepared.db"
    service = prepared(f"sqlite:///{source}", TINY)
    lean_copy, bare_copy = _settled_copies(source, "lean.db", "bare.db")
    tokens = [player.token for player in service.players]
    lean_engine = make_engine(f"sqlite:///{lean_copy}")
    try:
        with freeze_time("2026-11-25 12:00:00"), lean_engine.connect() as connection:
            _play(lean_hand.LeanHands(connection).run, tokens, service.table_id, 200)
            with _bare(bare_copy) as bare:
                _play(_one_by_one(bare), tokens, service.table_id, 200)
    finally:
        lean_engine.dispose()
    lean_rows, bare_rows = _rows(lean_copy), _rows(bare_copy)
    assert len(lean_rows["hands"]) > 200  # the new hands are there, wars among them
    assert any(row for row in lean_rows["hands"] if "war" in row)
    for table in _TABLES:
        assert bare_rows[table] == lean_rows[table], table


def _rounds_together(
    hands: bare_hand.BareHands, tokens: list[str], table_id: int, rounds: int
) -> None:
    """Each round, every player's hand in one group, then every tie's decision in one."""
    group = bare_hand.GroupCommit(hands)
    for number in range(rounds):
        placing = [
            hands.command(
                token, f"h{number}-{index}", "/v1/hands", {"table_id": table_id, "bet": 100}
            )
            for index, token in enumerate(tokens)
        ]
        placed = group.together(placing)
        deciding = []
        for index, (token, outcome) in enumerate(zip(tokens, placed, strict=True)):
            assert not isinstance(outcome, Exception), outcome
            hand = json.loads(outcome[1])
            if hand["status"] == "awaiting_decision":
                path = f"/v1/hands/{hand['id']}/decision"
                deciding.append(hands.command(token, f"w{number}-{index}", path, {"action": "war"}))
        assert not any(isinstance(outcome, Exception) for outcome in group.together(deciding))


def _rounds_one_by_one(
    hands: bare_hand.BareHands, tokens: list[str], table_id: int, rounds: int
) -> None:
    """The requests of `_rounds_together`, in the same order, each in its own transaction."""
    run = _one_by_one(hands)
    for number in range(rounds):
        deciding = []
        for index, token in enumerate(tokens):
            body = {"table_id": table_id, "bet": 100}
            hand = json.loads(run(token, f"h{number}-{index}", "/v1/hands", body)[1])
            if hand["status"] == "awaiting_decision":
                deciding.append((token, f"w{number}-{index}", f"/v1/hands/{hand['id']}/decision"))
        for token, key, path in deciding:
            run(token, key, path, {"action": "war"})


def test_hands_committed_together_write_the_rows_they_write_one_by_one(tmp_path: Path) -> None:
    source = tmp_path / "prepared.db"
    service = prepared(f"sqlite:///{source}", TINY)
    alone_copy, together_copy = _settled_copies(source, "alone.db", "together.db")
    tokens = [player.token for player in service.players]
    with freeze_time("2026-11-25 12:00:00"):
        with _bare(alone_copy) as alone:
            _rounds_one_by_one(alone, tokens, service.table_id, 40)
        with _bare(together_copy) as together:
            _rounds_together(together, tokens, service.table_id, 40)
    alone_rows, together_rows = _rows(alone_copy), _rows(together_copy)
    assert len(alone_rows["hands"]) >= 40 * len(tokens)
    for table in _TABLES:
        assert together_rows[table] == alone_rows[table], table


def _three_hands_the_second_refused(
    hands: bare_hand.BareHands, tokens: list[str], table_id: int
) -> list[bare_hand.Command]:
    body = {"table_id": table_id, "bet": 100}
    bodies = [body, {**body, "table_id": 999_999}, body]  # no such table: 404
    return [
        hands.command(token, key, "/v1/hands", body)
        for token, key, body in zip(tokens, "abc", bodies, strict=True)
    ]


def _outcomes_alone(hands: bare_hand.BareHands, commands: list[bare_hand.Command]) -> list[Any]:
    outcomes: list[Any] = []
    for command in commands:
        try:
            outcomes.append(hands.run(command))
        except bare_hand.Refusal as refusal:
            outcomes.append(refusal)
    return outcomes


def _comparable(outcomes: list[Any]) -> list[Any]:
    return [
        ("refused", outcome.status) if isinstance(outcome, bare_hand.Refusal) else outcome
        for outcome in outcomes
    ]


def test_a_group_with_a_refusal_writes_and_answers_what_its_commands_would_alone(
    tmp_path: Path,
) -> None:
    """The group is rolled back and its commands run again one by one: the refused one
    leaves nothing, and the others, the one written before it among them, are answered and
    written once, as alone."""
    source = tmp_path / "prepared.db"
    service = prepared(f"sqlite:///{source}", replace(TINY, clients=(1, 3)))  # three players
    alone_copy, together_copy = _settled_copies(source, "alone.db", "together.db")
    tokens = [player.token for player in service.players]
    before = _rows(alone_copy)
    with freeze_time("2026-11-25 12:00:00"):
        with _bare(alone_copy) as alone:
            commands = _three_hands_the_second_refused(alone, tokens, service.table_id)
            answered_alone = _outcomes_alone(alone, commands)
        with _bare(together_copy) as hands:
            commands = _three_hands_the_second_refused(hands, tokens, service.table_id)
            answered_together = bare_hand.GroupCommit(hands).together(commands)
    assert _comparable(answered_together) == _comparable(answered_alone)
    assert [outcome[0] for outcome in _comparable(answered_together)] == [201, "refused", 201]
    after = _rows(together_copy)
    assert after == _rows(alone_copy)
    assert len(after["hands"]) == len(before["hands"]) + 2


def test_requests_awaited_together_are_committed_as_one_group(tmp_path: Path) -> None:
    source = tmp_path / "prepared.db"
    service = prepared(f"sqlite:///{source}", replace(TINY, clients=(1, 3)))  # three players
    tokens = [player.token for player in service.players]
    body = {"table_id": service.table_id, "bet": 100}
    with _bare(source) as hands:
        commands = [
            hands.command(token, key, "/v1/hands", body)
            for token, key in zip(tokens, "xyz", strict=True)
        ]
        group = bare_hand.GroupCommit(hands)

        async def at_once() -> list[tuple[int, bytes]]:
            return await asyncio.gather(*(group.run(command) for command in commands))

        answers = asyncio.run(at_once())
    assert group.sizes == {3: 1}
    assert [status for status, _ in answers] == [201, 201, 201]


class _Overtaken(bare_hand.BareHands):
    """`--optimistic` hands, the first of which another connection overtakes: between the
    hand's read and its write, the player's seed pair moves on, as when a hand of the same
    player is placed elsewhere."""

    def __init__(self, db: bare_hand.Bare, other: Any) -> None:
        super().__init__(db, optimistic=True)
        self._other = other
        self.reads = 0

    def _written(self, command: bare_hand.Command, read_all: Callable[..., Any]) -> Any:
        written = super()._written(command, read_all)
        self.reads += 1
        if self.reads == 1:
            self._other.execute(
                "UPDATE seed_pairs SET next_nonce = next_nonce + 1 "
                "WHERE player_id = %s AND revealed_at IS NULL",
                (command.player_id,),
            )
            self._other.commit()
        return written


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_an_optimistic_hand_whose_read_went_stale_is_dealt_again_and_written_once(
    database_url: str,
) -> None:
    service = prepared(database_url, TINY)
    engine = make_engine(database_url)
    pooled, other = engine.raw_connection(), engine.raw_connection()
    overtaking: Any = other.driver_connection
    try:
        hands = _Overtaken(
            bare_hand.Bare(pooled.driver_connection, postgresql=True, autocommit=True), overtaking
        )
        body = {"table_id": service.table_id, "bet": 100}
        status, answer = hands.run(hands.command(service.players[0].token, "k", "/v1/hands", body))
        nonce, next_nonce = overtaking.execute(
            "SELECT h.nonce, sp.next_nonce FROM hands h JOIN seed_pairs sp "
            "ON sp.id = h.seed_pair_id WHERE h.id = %s",
            (json.loads(answer)["id"],),
        ).fetchone()
        (records,) = overtaking.execute(
            "SELECT count(*) FROM idempotency_records WHERE \"key\" = 'k'"
        ).fetchone()
    finally:
        pooled.close()
        other.close()
        engine.dispose()
    assert status == 201 and hands.reads == 2
    assert next_nonce == nonce + 1  # dealt with the nonce as it stood when written
    assert records == 1


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_hand_in_two_exchanges_refuses_a_key_in_flight_elsewhere_then_places_and_replays(
    database_url: str,
) -> None:
    """`--exchanged` learns of a key in flight from its lock's statement failing: the
    contract's 409, nothing written; once the key is free, one hand, then its replay."""
    service = prepared(database_url, TINY)
    engine = make_engine(database_url)
    pooled, other = engine.raw_connection(), engine.raw_connection()
    holder: Any = other.driver_connection
    try:
        db = bare_hand.Bare(pooled.driver_connection, postgresql=True)
        hands = bare_hand.BareHands(db, exchanged=True)
        body = {"table_id": service.table_id, "bet": 100}
        command = hands.command(service.players[0].token, "k", "/v1/hands", body)
        (before,) = holder.execute("SELECT count(*) FROM hands").fetchone()
        holder.execute(
            "SELECT pg_advisory_xact_lock(%s)", (advisory_lock_key(command.caller, "k"),)
        )
        with pytest.raises(bare_hand.Refusal) as refused:
            hands.run(command)
        holder.rollback()  # the key's lock let go
        placed = hands.run(command)
        replayed = hands.run(command)
        (after,) = holder.execute("SELECT count(*) FROM hands").fetchone()
    finally:
        pooled.close()
        other.close()
        engine.dispose()
    assert refused.value.status == 409
    assert placed[0] == 201 and replayed == placed
    assert after == before + 1
