"""A stored War game read back from its published form, for a replay anyone can run.

The API's game view (`GET /v1/war-games/{id}`, once the game has ended and its server
seed is revealed) is a complete record: rules, seats, seeds, and every turn's input and
result. `replay_document` re-derives the turns from it with the engine alone.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from casino.errors import InvalidChoice
from casino.fairness import HandSeeds, server_seed_hash
from casino.war.log import input_from_dict
from casino.war.replay import Verdict, verify
from casino.war.rules import WarRules
from casino.war.state import WarGame, as_policy


@dataclass(frozen=True, slots=True)
class DocumentReplay:
    verdict: Verdict
    commitment_matches: bool


def replay_document(document: Mapping[str, Any]) -> DocumentReplay:
    """Replay a published game; refuses a document without its revealed server seed."""
    server_seed = document.get("server_seed")
    if not server_seed:
        raise InvalidChoice("server_seed", "is revealed only when the game has ended")
    rules = WarRules().with_options(document["rules"])
    seats = tuple(as_policy(seat["policy"], "seats") for seat in document["seats"])
    game = WarGame(rules, seats, HandSeeds(server_seed, document["client_seed"], document["nonce"]))
    turns = document.get("turns", [])
    verdict = verify(
        game,
        [input_from_dict(turn["input"]) for turn in turns],
        [turn["record"] for turn in turns],
    )
    committed = document.get("server_seed_hash")
    return DocumentReplay(verdict, committed == server_seed_hash(server_seed))
