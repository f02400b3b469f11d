"""The answer to a command that deals or decides a hand, written without its model."""

from datetime import datetime
from typing import Any

import msgspec

from api.domain.hands.details import HandDetails


class HandAnswer(msgspec.Struct, frozen=True):
    """`HandView`'s JSON, written straight from the service's `HandDetails`.

    Placing and deciding hands are nearly all of the traffic, and validating the service's
    own values into `HandView` and dumping them again cost a hand 5.4% of its instructions
    (docs/performance-log.md, "A hand's answer without its model, and the value objects a
    hand builds"). `HandDetails` is typed as `HandView` is, field for field, in its order
    and under its names, so the two write the same JSON: `tests/api/test_hand_answer.py`
    holds them to it. `HandView` stays the documented schema of those routes, and the body
    of every read."""

    details: HandDetails

    def bodies(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """A hand's answer keeps no secret from its record: an unrevealed server seed is
        never in it."""
        body: dict[str, Any] = msgspec.to_builtins(self.details, enc_hook=_subclassed_datetime)
        return body, body


def _subclassed_datetime(value: Any) -> str:
    """A `datetime` of a subclass (freezegun's, under a frozen clock), which msgspec does not
    write of its own accord, written as it writes a `datetime`: UTC as `Z`."""
    if not isinstance(value, datetime):
        raise NotImplementedError(f"no JSON for {type(value).__name__}")
    text = value.isoformat()
    utc = text.removesuffix("+00:00")
    return utc + "Z" if utc != text else text
