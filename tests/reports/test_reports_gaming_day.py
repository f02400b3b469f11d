"""Gaming days: start-hour boundaries, days on which the clocks change, and day ranges."""

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.domain.reports.gaming_day import DayRange, day_bounds, day_start, gaming_day
from api.errors import InvalidInput

NEW_YORK = ZoneInfo("America/New_York")


def test_a_hand_at_0559_local_belongs_to_the_previous_gaming_day() -> None:
    before = datetime(2026, 6, 10, 5, 59, tzinfo=NEW_YORK)
    at = datetime(2026, 6, 10, 6, 0, tzinfo=NEW_YORK)
    assert gaming_day(before.astimezone(UTC), NEW_YORK, 6) == date(2026, 6, 9)
    assert gaming_day(at.astimezone(UTC), NEW_YORK, 6) == date(2026, 6, 10)


def test_spring_forward_calendar_day_is_a_23_hour_gaming_day() -> None:
    start, end = day_bounds(date(2026, 3, 8), date(2026, 3, 8), NEW_YORK, 0)
    assert end - start == timedelta(hours=23)


def test_with_a_6am_start_the_gaming_day_holding_the_change_is_the_one_before() -> None:
    # The clocks change at 02:00 on 8 March, inside gaming day 7 March (06:00 to 06:00).
    start, end = day_bounds(date(2026, 3, 7), date(2026, 3, 7), NEW_YORK, 6)
    assert start == datetime(2026, 3, 7, 11, tzinfo=UTC)  # 06:00 EST
    assert end == datetime(2026, 3, 8, 10, tzinfo=UTC)  # 06:00 EDT
    assert end - start == timedelta(hours=23)
    start, end = day_bounds(date(2026, 3, 8), date(2026, 3, 8), NEW_YORK, 6)
    assert end - start == timedelta(hours=24)


def test_fall_back_gaming_day_is_25_hours() -> None:
    start, end = day_bounds(date(2026, 11, 1), date(2026, 11, 1), NEW_YORK, 0)
    assert end - start == timedelta(hours=25)
    start, end = day_bounds(date(2026, 10, 31), date(2026, 10, 31), NEW_YORK, 6)
    assert end - start == timedelta(hours=25)


def test_a_start_hour_inside_the_skipped_hour_still_tiles() -> None:
    assert day_start(date(2026, 3, 8), NEW_YORK, 2) < day_start(date(2026, 3, 9), NEW_YORK, 2)
    moment = day_start(date(2026, 3, 8), NEW_YORK, 2)
    assert gaming_day(moment, NEW_YORK, 2) == date(2026, 3, 8)
    assert gaming_day(moment - timedelta(microseconds=1), NEW_YORK, 2) == date(2026, 3, 7)


@given(
    moment=st.datetimes(
        min_value=datetime(2020, 1, 1), max_value=datetime(2035, 1, 1), timezones=st.just(UTC)
    ),
    hour=st.integers(0, 23),
    zone=st.sampled_from(["America/New_York", "Europe/London", "Australia/Sydney", "UTC"]),
)
def test_every_instant_lies_within_the_bounds_of_its_gaming_day(
    moment: datetime, hour: int, zone: str
) -> None:
    tz = ZoneInfo(zone)
    day = gaming_day(moment, tz, hour)
    start, end = day_bounds(day, day, tz, hour)
    assert start <= moment < end


def test_a_range_of_one_day_is_a_range() -> None:
    days = DayRange(date(2026, 6, 10), date(2026, 6, 10))
    assert (days.first, days.last) == (date(2026, 6, 10), date(2026, 6, 10))


def test_a_range_ending_before_it_starts_is_refused_naming_from() -> None:
    with pytest.raises(InvalidInput) as refused:
        DayRange(date(2026, 6, 11), date(2026, 6, 10))
    assert (refused.value.field, refused.value.message) == ("from", "must not be after `to`")


@pytest.mark.parametrize(
    ("first", "last", "field"),
    [("2026-13-01", "2026-06-10", "from"), ("2026-06-10", "9999-12-31", "to")],
)
def test_parsing_a_range_names_the_field_at_fault(first: str, last: str, field: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        DayRange.parse(first, last)
    assert refused.value.field == field
    assert refused.value.code == "validation_error"


def test_parsing_a_range_reads_both_days() -> None:
    assert DayRange.parse("2026-06-09", "2026-06-10") == DayRange(
        date(2026, 6, 9), date(2026, 6, 10)
    )
