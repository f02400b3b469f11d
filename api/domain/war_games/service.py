"""Free War games for players: set up, played a turn a request, stored, replayable.

No money moves. The engine (`casino.war`) decides every card; this module keeps what it
needs between turns (the state, which only the engine reads) and what an auditor needs
after (each turn's input and record, appended once). A game has its own seed pair: the
server seed is committed to at creation and revealed when the game ends.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.db.models import WarGameRecord, WarGameTurn
from api.errors import NotFound
from casino.fairness import HandSeeds, new_client_seed, new_server_seed, server_seed_hash
from casino.war.engine import play_turn, start
from casino.war.log import (
    end_to_dict,
    input_from_dict,
    input_to_dict,
    record_to_dict,
    state_from_dict,
    state_to_dict,
)
from casino.war.replay import Verdict, verify
from casino.war.rules import WarRules, variant_rules
from casino.war.simulate import default_seats
from casino.war.state import GameState, Policy, WarGame, as_policy

Status = Literal["in_progress", "finished"]


@dataclass(frozen=True, slots=True)
class SeatPile:
    """What everyone at the table sees of a seat: pile sizes and the won pile's top card
    (face up in Steal War); never the order of the face-down cards."""

    seat: int
    policy: str
    draw: int
    won: int
    won_top: str | None


@dataclass(frozen=True, slots=True)
class PlayedTurn:
    input: dict[str, Any]
    record: dict[str, Any]


@dataclass(frozen=True, slots=True)
class WarGameView:
    game_id: int
    variant: str
    players: int
    rules: dict[str, Any]
    status: Status
    turn: int
    seats: tuple[SeatPile, ...]
    out_of_play: int
    end: dict[str, Any] | None
    server_seed_hash: str
    server_seed: str | None
    client_seed: str
    nonce: int
    created_at: datetime
    finished_at: datetime | None
    turns: tuple[PlayedTurn, ...]


@dataclass(frozen=True, slots=True)
class TurnResult:
    turn: PlayedTurn
    game: WarGameView


@dataclass(frozen=True, slots=True)
class WarGameAudit:
    game_id: int
    status: Status
    turns: int
    matches: bool
    first_difference: int | None
    server_seed_hash_matches: bool


def create_game(
    session: Session,
    player_id: int,
    variant: str,
    players: int | None,
    seats: list[Policy] | None,
    options: dict[str, Any],
    client_seed: str | None,
    actor_token_id: int | None = None,
) -> WarGameView:
    """Deal a new game: seat 0 is the player's unless `seats` says otherwise."""
    count = players if players is not None else (len(seats) if seats else None)
    rules = variant_rules(variant, count, options)
    seat_policies = tuple(seats) if seats else _player_against_the_house(rules)
    server_seed = new_server_seed()
    seeds = HandSeeds(server_seed, client_seed or new_client_seed(), 0)
    game = WarGame(rules, seat_policies, seeds)  # validates the seats against the rules
    state = start(game)
    record = WarGameRecord(
        player_id=player_id,
        variant=variant,
        rules=rules.as_dict(),
        seats=list(seat_policies),
        server_seed=server_seed,
        server_seed_hash=server_seed_hash(server_seed),
        client_seed=seeds.client_seed,
        nonce=seeds.nonce,
        status="in_progress",
        turns=0,
        state=state_to_dict(state),
        created_at=datetime.now(UTC),
        created_by_token=actor_token_id,
    )
    session.add(record)
    session.flush()
    return _view(record, state, ())


def _player_against_the_house(rules: WarRules) -> tuple[Policy, ...]:
    """The default table: the player in seat 0, the house's seats on the simulator's policy."""
    return ("human", *default_seats(rules)[1:])


def play_game_turn(
    session: Session,
    player_id: int,
    game_id: int,
    given: dict[str, Any],
    actor_token_id: int | None = None,
) -> TurnResult:
    """Play the next turn with the player's choices; the game's row is locked meanwhile."""
    record = _owned(session, player_id, game_id, for_update=True)
    game = _engine_game(record)
    turn_input = input_from_dict(given)
    state, turn = play_turn(game, state_from_dict(record.state), turn_input)
    played = PlayedTurn(input_to_dict(turn_input), record_to_dict(turn))
    now = datetime.now(UTC)
    session.add(
        WarGameTurn(
            game_id=record.id,
            turn=state.turn,
            input=played.input,
            record=played.record,
            created_at=now,
            played_by_token=actor_token_id,
        )
    )
    record.state = state_to_dict(state)
    record.turns = state.turn
    if state.end is not None:
        record.status = "finished"
        record.finished_at = now
    session.flush()
    return TurnResult(played, _view(record, state, None))


def game_view(session: Session, player_id: int, game_id: int) -> WarGameView:
    record = _owned(session, player_id, game_id)
    return _view(record, state_from_dict(record.state), _turns(session, record.id))


def audit_game(session: Session, game_id: int) -> WarGameAudit:
    """Replay the game from its seeds and stored inputs and compare every stored turn."""
    record = session.get(WarGameRecord, game_id)
    if record is None:
        raise NotFound("war game")
    return _audit(session, record)


def audit_all_games(session: Session) -> Iterator[WarGameAudit]:
    """Every stored game replayed, oldest first (`casino-war war audit`)."""
    for record in session.scalars(select(WarGameRecord).order_by(WarGameRecord.id)):
        yield _audit(session, record)


def _audit(session: Session, record: WarGameRecord) -> WarGameAudit:
    game_id = record.id
    turns = _turns(session, game_id)
    verdict: Verdict = verify(
        _engine_game(record),
        [input_from_dict(turn.input) for turn in turns],
        [turn.record for turn in turns],
    )
    consistent = verdict.matches and len(turns) == record.turns
    return WarGameAudit(
        game_id=record.id,
        status=_status(record.status),
        turns=len(turns),
        matches=consistent,
        first_difference=verdict.first_difference,
        server_seed_hash_matches=server_seed_hash(record.server_seed) == record.server_seed_hash,
    )


def _owned(
    session: Session, player_id: int, game_id: int, *, for_update: bool = False
) -> WarGameRecord:
    query = select(WarGameRecord).where(
        WarGameRecord.id == game_id, WarGameRecord.player_id == player_id
    )
    record = session.scalar(query.with_for_update() if for_update else query)
    if record is None:
        raise NotFound("war game")
    return record


def _engine_game(record: WarGameRecord) -> WarGame:
    rules = WarRules().with_options(record.rules)
    seats = tuple(as_policy(name, "seats") for name in record.seats)
    return WarGame(rules, seats, HandSeeds(record.server_seed, record.client_seed, record.nonce))


def _turns(session: Session, game_id: int) -> tuple[PlayedTurn, ...]:
    rows = session.scalars(
        select(WarGameTurn).where(WarGameTurn.game_id == game_id).order_by(WarGameTurn.turn)
    )
    return tuple(PlayedTurn(row.input, row.record) for row in rows)


def _status(value: str) -> Status:
    return "finished" if value == "finished" else "in_progress"


def _view(
    record: WarGameRecord, state: GameState, turns: tuple[PlayedTurn, ...] | None
) -> WarGameView:
    finished = state.end is not None
    return WarGameView(
        game_id=record.id,
        variant=record.variant,
        players=len(record.seats),
        rules=dict(record.rules),
        status=_status(record.status),
        turn=state.turn,
        seats=tuple(
            SeatPile(
                seat=seat,
                policy=policy,
                draw=len(state.draw[seat]),
                won=len(state.won[seat]),
                won_top=state.won[seat][-1] if state.won[seat] else None,
            )
            for seat, policy in enumerate(record.seats)
        ),
        out_of_play=len(state.dead),
        end=end_to_dict(state.end),
        server_seed_hash=record.server_seed_hash,
        server_seed=record.server_seed if finished else None,
        client_seed=record.client_seed,
        nonce=record.nonce,
        created_at=record.created_at,
        finished_at=record.finished_at,
        turns=turns or (),
    )
