"""A War game's log as plain data: what the API stores and returns, and what `casino-war
war verify` reads back. The replay compares these forms, so both sides agree to the byte.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from casino.errors import InvalidChoice
from casino.war.state import GameEnd, GameState, TurnInput, TurnRecord


def end_to_dict(end: GameEnd | None) -> dict[str, Any] | None:
    return None if end is None else {"reason": end.reason, "winner": end.winner}


def record_to_dict(record: TurnRecord) -> dict[str, Any]:
    return {
        "turn": record.turn,
        "choices": list(record.choices),
        "event": record.event,
        "plays": [
            {"seat": play.seat, "card": play.card, "face_up": play.face_up} for play in record.plays
        ],
        "steals": [
            {"thief": steal.thief, "victim": steal.victim, "cards": steal.cards}
            for steal in record.steals
        ],
        "wars": record.wars,
        "winner": record.winner,
        "recycled": [{"seat": seat, "sort": sort} for seat, sort in record.recycled],
        "out": list(record.out),
        "end": end_to_dict(record.end),
    }


def input_to_dict(given: TurnInput) -> dict[str, Any]:
    return {
        "choices": {str(seat): choice for seat, choice in sorted(given.choices.items())},
        "sort": given.sort,
    }


def input_from_dict(data: Mapping[str, Any]) -> TurnInput:
    """A turn's input from its stored or posted form (seats are JSON object keys)."""
    choices: dict[int, str] = {}
    for key, choice in dict(data.get("choices") or {}).items():
        if not str(key).isdigit():
            raise InvalidChoice("choices", f"seat {key!r} is not a seat number")
        choices[int(key)] = str(choice)
    sort = data.get("sort")
    return TurnInput(choices=choices, sort=None if sort is None else str(sort))


def state_to_dict(state: GameState) -> dict[str, Any]:
    """The state as stored between turns (every field: the next turn resumes from it)."""
    return {
        "draw": [list(pile) for pile in state.draw],
        "won": [list(pile) for pile in state.won],
        "dead": list(state.dead),
        "turn": state.turn,
        "position": state.position,
        "checkpoint": state.checkpoint,
        "power": state.power,
        "since": state.since,
        "end": end_to_dict(state.end),
    }


def state_from_dict(data: Mapping[str, Any]) -> GameState:
    end = data["end"]
    return GameState(
        draw=tuple(tuple(pile) for pile in data["draw"]),
        won=tuple(tuple(pile) for pile in data["won"]),
        dead=tuple(data["dead"]),
        turn=data["turn"],
        position=data["position"],
        checkpoint=data["checkpoint"],
        power=data["power"],
        since=data["since"],
        end=None if end is None else GameEnd(end["reason"], end["winner"]),
    )


def records_to_dicts(records: Sequence[TurnRecord]) -> list[dict[str, Any]]:
    return [record_to_dict(record) for record in records]
