"""Writes sent alongside another PostgreSQL statement, as its data-modifying CTEs
(`ledger.driver.Driver.alongside`): a statement fewer costs the server 20-65 µs."""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

_WITH = re.compile(r"\s*WITH\s+", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def starts_with_with(text: str) -> bool:
    """Whether `text` has a WITH of its own (a CTE cannot hold one)."""
    return _WITH.match(text) is not None


@dataclass(slots=True)
class Queued:
    """A statement to send, with the writes that go alongside it as its CTEs."""

    text: str
    parameters: Mapping[str, Any]
    alongside: list[tuple[str, Mapping[str, Any]]] = field(default_factory=list)

    def composed(self) -> tuple[str, Mapping[str, Any]]:
        """The text and parameters sent: each write alongside as a data-modifying CTE, its
        parameters renamed apart from the statement's own and from one another's."""
        if not self.alongside:
            return self.text, self.parameters
        parameters = dict(self.parameters)
        for index, (_, values) in enumerate(self.alongside):
            prefix = _alongside_prefix(index)
            parameters.update({prefix + name: value for name, value in values.items()})
        return _with_alongside(tuple(text for text, _ in self.alongside), self.text), parameters


def _alongside_prefix(index: int) -> str:
    return f"alongside{index}_"


@lru_cache(maxsize=64)
def _with_alongside(alongside: tuple[str, ...], target: str) -> str:
    """`target` with each of `alongside` as a data-modifying CTE (PostgreSQL runs each once,
    to completion, whether or not it is referred to), its parameters renamed apart."""
    ctes = ", ".join(
        f"alongside{index} AS ({_renamed(text, _alongside_prefix(index))})"
        for index, text in enumerate(alongside)
    )
    with_clause = _WITH.match(target)
    if with_clause is not None:
        return f"WITH {ctes}, {target[with_clause.end() :]}"
    return f"WITH {ctes} {target.lstrip()}"


def _renamed(text: str, prefix: str) -> str:
    """The `%(name)s` placeholders of `text` as `%(<prefix>name)s`."""
    return _PLACEHOLDER.sub(lambda found: f"%({prefix}{found[1]})s", text)
