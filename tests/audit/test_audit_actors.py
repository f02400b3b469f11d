"""The tokens a hand record names against those hashed into its postings: the placing
token on the stake, the deciding token on a decided hand's raise and settlement."""

from typing import Any

from sqlalchemy import update

from api.db.database import Database
from api.db.models import hands_table
from api.db.snapshot import read_snapshot
from api.domain.audit.batch import audit_hands
from api.domain.audit.results import Difference
from api.domain.hands import service as hands
from casino.hand import Action
from tests.audit.support import hand_transaction_ids, new_player, standard_table

PLACING_TOKEN = 7
DECIDING_TOKEN = 8
FORGED_TOKEN = 99


def _placed(database: Database, player_id: int) -> Any:
    with database.transaction() as session:
        return hands.open_hand(
            session, player_id, standard_table(database), 1000, 0, actor_token_id=PLACING_TOKEN
        )


def _decided(database: Database, hand_id: int, player_id: int, action: Action) -> Any:
    with database.transaction() as session:
        return hands.decide_hand(
            session, hand_id, action, player_id=player_id, actor_token_id=DECIDING_TOKEN
        )


def _settled_at_once(database: Database, player_id: int) -> Any:
    """A hand that settled on its first deal; a tie on the way (which would refuse the next
    hand) is surrendered."""
    for _ in range(1000):
        hand = _placed(database, player_id)
        if hand.status == "settled":
            return hand
        _decided(database, hand.id, player_id, Action.SURRENDER)
    raise AssertionError("no hand settled on its first deal in 1000")


def _tied(database: Database, player_id: int) -> Any:
    """The first tie: every hand before it settled at once."""
    for _ in range(1000):
        hand = _placed(database, player_id)
        if hand.status == "awaiting_decision":
            return hand
    raise AssertionError("no tie in 1000 hands")


def _decided_with_war(database: Database, player_id: int) -> Any:
    tie = _tied(database, player_id)
    return _decided(database, tie.id, player_id, Action.WAR)


def _forge(database: Database, hand_id: int, **values: object) -> None:
    with database.engine.begin() as connection:
        connection.execute(update(hands_table).where(hands_table.c.id == hand_id).values(values))


def _differences(database: Database, hand_id: int) -> list[Difference]:
    with read_snapshot(database.engine) as connection:
        result = audit_hands(connection)
    return [d for m in result.mismatches if m.hand_id == hand_id for d in m.differences]


def _named(
    database: Database, hand_id: int, field: str, token: int, kinds: tuple[str, ...]
) -> list[Difference]:
    """The forged token's difference, named `field`, once for each of the hand's postings of
    `kinds` (each kind posted exactly once), in that order."""
    return [
        Difference(field, FORGED_TOKEN, token, (txn_id,))
        for kind in kinds
        for txn_id in _one(hand_transaction_ids(database.engine, hand_id, kind))
    ]


def _one(txn_ids: list[int]) -> list[int]:
    assert len(txn_ids) == 1, txn_ids
    return txn_ids


def test_a_forged_placing_token_is_named_with_the_stake_and_the_settlement(
    database: Database,
) -> None:
    player = new_player(database)
    hand = _settled_at_once(database, player)
    _forge(database, hand.id, placed_by_token=FORGED_TOKEN)

    assert _differences(database, hand.id) == _named(
        database, hand.id, "placed_by_token", PLACING_TOKEN, ("stake", "settlement")
    )


def test_a_forged_deciding_token_is_named_with_the_raise_and_the_settlement(
    database: Database,
) -> None:
    player = new_player(database)
    hand = _decided_with_war(database, player)
    _forge(database, hand.id, decided_by_token=FORGED_TOKEN)

    assert _differences(database, hand.id) == _named(
        database, hand.id, "decided_by_token", DECIDING_TOKEN, ("raise", "settlement")
    )


def test_a_hand_awaiting_its_decision_names_only_its_placing_token(database: Database) -> None:
    player = new_player(database)
    tie = _tied(database, player)
    _forge(database, tie.id, placed_by_token=FORGED_TOKEN)

    assert _differences(database, tie.id) == _named(
        database, tie.id, "placed_by_token", PLACING_TOKEN, ("stake",)
    )


def test_hands_whose_tokens_match_their_postings_match(database: Database) -> None:
    player = new_player(database)
    _settled_at_once(database, player)
    _decided_with_war(database, player)
    _tied(database, player)

    with read_snapshot(database.engine) as connection:
        assert audit_hands(connection).mismatches == ()
