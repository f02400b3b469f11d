"""The answer to placing or deciding a hand is written straight from the service's
`HandDetails` (`api.domain.hands.answer`), without `HandView`: it must be the JSON that
`HandView` dumps, key for key and in the same order, whatever the hand."""

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from freezegun import freeze_time
from hypothesis import given
from hypothesis import strategies as st

from api.domain.hands.answer import HandAnswer
from api.domain.hands.details import Engine, Fairness, HandDetails, WarCards
from api.domain.hands.schemas import HandView
from api.domain.tables.schemas import Rules
from api.http.schemas import DecidedBy
from casino.hand import Action, HandStatus, Outcome
from casino.rules import TableRules

_INT64 = st.integers(-(2**63), 2**63 - 1)
_IDS = st.integers(1, 2**63 - 1)
_TIMES = (
    st.datetimes(
        timezones=st.sampled_from([UTC, timezone(timedelta(0)), timezone(timedelta(hours=2))])
    )
    | st.datetimes()
)


def _rules_field(annotation: Any) -> st.SearchStrategy[Any]:
    return {bool: st.booleans(), int: _INT64, str: st.text()}[annotation]


_RULE_NAMES = list(Rules.model_fields)
# In `Rules`' order, as `TableRules.as_dict` gives them (the last test holds it to that).
_RULES = st.tuples(*(_rules_field(field.annotation) for field in Rules.model_fields.values())).map(
    lambda values: dict(zip(_RULE_NAMES, values, strict=True))
)


def _values(enum: Any) -> st.SearchStrategy[str | None]:
    return st.none() | st.sampled_from([member.value for member in enum])


_HANDS = st.builds(
    HandDetails,
    id=_IDS,
    table_id=_IDS,
    player_id=_IDS,
    status=st.sampled_from([status.value for status in HandStatus]),
    currency=st.text(),
    bet=_INT64,
    tie_bet=_INT64,
    raise_amount=_INT64,
    player_card=st.text(),
    dealer_card=st.text(),
    war=st.none() | st.builds(WarCards, st.tuples(st.text(), st.text()), st.text(), st.text()),
    decision=_values(Action),
    decided_by=_values(DecidedBy),
    outcome=_values(Outcome),
    total_staked=_INT64,
    total_returned=st.none() | _INT64,
    net=st.none() | _INT64,
    balance_before=_INT64,
    balance_after=st.none() | _INT64,
    fairness=st.builds(Fairness, st.text(), st.text(), _INT64, st.none() | st.text()),
    rules=_RULES,
    created_at=_TIMES,
    settled_at=st.none() | _TIMES,
    engine=st.none() | st.builds(Engine, st.text(), st.none() | st.text()),
)


def _as_the_model_dumps_it(details: HandDetails) -> str:
    dumped = HandView.model_validate(details).model_dump(mode="json", by_alias=True)
    return json.dumps(dumped)


@given(_HANDS)
def test_a_hands_answer_is_the_json_its_view_dumps_in_the_same_order(
    details: HandDetails,
) -> None:
    assert json.dumps(HandAnswer(details).bodies()[0]) == _as_the_model_dumps_it(details)


@given(_HANDS)
def test_a_hands_answer_is_recorded_as_it_is_sent(details: HandDetails) -> None:
    sent, recorded = HandAnswer(details).bodies()

    assert recorded == sent


def test_a_hands_view_keeps_no_field_from_its_record() -> None:
    # `HandAnswer` records the body it sends: were a field of `HandView` made secret, the
    # answer would have to null it in the record as `ResponseBody.bodies` does.
    assert not HandView.SECRET_FIELDS


def test_a_hand_dealt_under_a_frozen_clock_has_its_times_written_as_its_view_writes_them() -> None:
    with freeze_time("2026-11-27 12:00:00.250000"):
        now = datetime.now(UTC)
    details = HandDetails(
        id=1,
        table_id=2,
        player_id=3,
        status="settled",
        currency="USD",
        bet=500,
        tie_bet=0,
        raise_amount=0,
        player_card="AS",
        dealer_card="KD",
        war=None,
        decision=None,
        decided_by=None,
        outcome="player_win",
        total_staked=500,
        total_returned=1000,
        net=500,
        balance_before=10_000,
        balance_after=10_500,
        fairness=Fairness("ab" * 32, "client", 7, None),
        rules=TableRules().as_dict(),
        created_at=now,
        settled_at=now,
        engine=Engine("1", "cd" * 32),
    )

    answer = HandAnswer(details).bodies()[0]

    assert answer["created_at"] == "2026-11-27T12:00:00.250000Z"
    assert json.dumps(answer) == _as_the_model_dumps_it(details)


def test_a_tables_rules_are_listed_in_the_order_of_the_view_of_its_hands() -> None:
    assert list(TableRules().as_dict()) == _RULE_NAMES
