"""The game software's version, recorded with every hand, and the hash of a hand's rules.

Regulators ask that a hand name the game software that dealt it (PA 58 Pa. Code
§810a.11(b)): `ENGINE_VERSION` changes whenever a change to `casino/` could change a card or
a payout, and the audit refuses a hand recorded with a version it does not know.
"""

import hashlib
import json
from functools import cache
from typing import Final

from casino.rules import TableRules

ENGINE_VERSION: Final = "1.0.0"
KNOWN_ENGINE_VERSIONS: Final = frozenset({ENGINE_VERSION})


@cache
def rules_hash(rules: TableRules) -> str:
    """SHA-256 of the rules' canonical JSON (keys sorted, no spaces): the same rules give
    the same hash in any language, so a hand's recorded rules can be checked against it."""
    canonical = json.dumps(rules.as_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
