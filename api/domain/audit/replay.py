"""Replaying a hand with the engine that dealt it, caching what repeats across hands: the
rules (per distinct pair of recorded and table rules text) and seed commitments (per seed
pair).

A hand is replayed from its seed pair, nonce and the rules recorded with it (never the
table's current rules), with the recorded decision.
"""

import json
from dataclasses import dataclass
from typing import Any

from api.domain.audit.reads import HandRow
from api.domain.audit.results import Difference
from casino.errors import GameError, InvalidSeed
from casino.fairness import HandSeeds, server_seed_hash
from casino.hand import Action, Hand, play
from casino.rules import TableRules
from casino.version import rules_hash


@dataclass(frozen=True, slots=True)
class RulesVerdict:
    """A hand's recorded rules text read against its table's: worked out once per distinct
    pair of texts (every hand at a table records the same text, so pairs are few)."""

    recorded: TableRules | GameError  # the rules to replay with, or why there are none
    differences: tuple[Difference, ...]  # recorded against the table's, field by field
    wager_rules: TableRules | None  # the table's rules, else the recorded ones, else None
    rules_hash: str | None  # what a hand recording these rules records; None: unreadable


class Replayer:
    """Replays hands, caching what repeats across them: rules and seed commitments."""

    def __init__(self) -> None:
        self._rules: dict[tuple[str, str | None], RulesVerdict] = {}
        self._commitments: dict[int, bool] = {}

    def rules_of(self, row: HandRow) -> RulesVerdict:
        key = (row.rules, row.table_rules)
        found = self._rules.get(key)
        if found is None:
            found = self._rules[key] = _rules_verdict(row.rules, row.table_rules)
        return found

    def commitment_ok(self, row: HandRow) -> bool:
        """SHA-256 of the server seed's raw bytes is the hash shown before play."""
        ok = self._commitments.get(row.seed_pair_id)
        if ok is None:
            try:
                digest = server_seed_hash(row.server_seed) if row.server_seed is not None else ""
            except (InvalidSeed, TypeError, ValueError):
                digest = ""
            ok = self._commitments[row.seed_pair_id] = digest == row.server_seed_hash
        return ok

    def replay(self, row: HandRow) -> Hand:
        """The hand as the engine derives it; raises GameError/ValueError if it cannot."""
        if row.server_seed is None or row.client_seed is None:
            raise GameError(f"seed pair {row.seed_pair_id} does not exist")
        rules = self.rules_of(row).recorded
        if isinstance(rules, GameError):
            # A fresh traceback each time: re-raising the cached error would grow its own.
            raise rules.with_traceback(None)
        action = Action(row.decision) if row.decision is not None else None
        return play(
            rules.game,
            HandSeeds(row.server_seed, row.client_seed, row.nonce),
            row.bet,
            row.tie_bet,
            action,
        )


def _parse_rules(text: str) -> TableRules | GameError:
    try:
        loaded = json.loads(text)
        if not isinstance(loaded, dict):
            raise TypeError("not a JSON object")
        return TableRules.from_dict(loaded)
    except GameError as error:
        return error
    except (ValueError, TypeError) as error:
        return GameError(f"recorded rules are not valid JSON rules: {error}")


def _rules_verdict(recorded: str, table: str | None) -> RulesVerdict:
    """Table rules never change after creation, so every hand at a table records exactly
    them. A wager is held to the table's rules (the recorded ones if the table's cannot be
    read)."""
    mine = _parse_rules(recorded)
    theirs = _parse_rules(table) if table is not None else None
    return RulesVerdict(
        recorded=mine,
        differences=_compare_rules(recorded, table) if table is not None else (),
        wager_rules=next((r for r in (theirs, mine) if isinstance(r, TableRules)), None),
        rules_hash=rules_hash(mine) if isinstance(mine, TableRules) else None,
    )


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        loaded = json.loads(text)
    except ValueError:
        return None
    return loaded if isinstance(loaded, dict) else None


def _compare_rules(recorded: str, table: str) -> tuple[Difference, ...]:
    if recorded == table:
        return ()
    mine, theirs = _json_object(recorded), _json_object(table)
    if mine is None or theirs is None:
        return (Difference("rules", recorded, table),) if mine != theirs else ()
    return tuple(
        Difference(f"rules.{name}", mine.get(name), theirs.get(name))
        for name in sorted(mine.keys() | theirs.keys())
        if mine.get(name) != theirs.get(name)
    )
