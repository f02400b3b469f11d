"""The access log's formatters write what `logging`'s own would, their time worked out once
a second."""

import logging

from hypothesis import given
from hypothesis import strategies as st

from api.http.access import PlainFormatter

_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
_MOMENTS = st.floats(min_value=0, max_value=4_000_000_000, allow_nan=False)


def _record(created: float) -> logging.LogRecord:
    record = logging.LogRecord("casino_war.access", logging.INFO, __file__, 0, "a line", (), None)
    record.created = created
    record.msecs = int((created - int(created)) * 1000) + 0.0
    return record


@given(st.lists(_MOMENTS, min_size=1, max_size=20))
def test_a_plain_line_is_the_one_logging_writes_whatever_the_order_of_its_moments(
    moments: list[float],
) -> None:
    ours, logging_s = PlainFormatter(_FORMAT), logging.Formatter(_FORMAT)
    for created in moments:
        assert ours.format(_record(created)) == logging_s.format(_record(created))


@given(_MOMENTS, st.sampled_from(["%H:%M:%S", "%Y-%m-%dT%H:%M:%S", None]))
def test_a_time_in_any_format_is_the_one_logging_writes_after_another_format_in_the_same_second(
    created: float, datefmt: str | None
) -> None:
    ours, logging_s = PlainFormatter(_FORMAT), logging.Formatter(_FORMAT)
    ours.formatTime(_record(created), "%d")  # the same second, cached in another format
    assert ours.formatTime(_record(created), datefmt) == logging_s.formatTime(
        _record(created), datefmt
    )
