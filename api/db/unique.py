"""Inserting rows whose key must be unique, race-free."""

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from api.db.models import Base
from api.errors import InvalidInput


def add_unique(session: Session, row: Base, *, field: str, message: str) -> None:
    """Insert `row`; a duplicate `field` is invalid input, never a 500.

    The database's unique constraint decides, inside a savepoint: a check-then-insert would
    let two concurrent requests both pass the check.
    """
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError:
        raise InvalidInput(field, message) from None
