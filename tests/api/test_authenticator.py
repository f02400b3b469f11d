"""Token resolution: cached briefly, so authenticating costs no query per request."""

import asyncio

import pytest
from sqlalchemy import delete

from api.db.database import Database
from api.db.models import ApiToken
from api.domain.tokens.service import Authenticator, Role, issue_token
from api.errors import DomainError


def _issue(database: Database) -> str:
    with database.transaction() as session:
        return issue_token(session, Role.AUDITOR)


def _forget_every_token(database: Database) -> None:
    with database.transaction() as session:
        session.execute(delete(ApiToken))


def test_a_known_token_is_served_from_memory_within_its_time_to_live(database: Database) -> None:
    token = _issue(database)
    authenticator = Authenticator(database, ttl_seconds=60)
    first = authenticator.principal(f"Bearer {token}")
    _forget_every_token(database)
    assert authenticator.principal(f"Bearer {token}") == first


def test_a_token_is_looked_up_again_once_its_time_to_live_has_passed(database: Database) -> None:
    token = _issue(database)
    authenticator = Authenticator(database, ttl_seconds=0)
    assert authenticator.principal(f"Bearer {token}").role is Role.AUDITOR
    _forget_every_token(database)
    with pytest.raises(DomainError) as refused:
        authenticator.principal(f"Bearer {token}")
    assert refused.value.code == "unauthorized"


def test_an_unknown_token_is_never_remembered(database: Database) -> None:
    authenticator = Authenticator(database, ttl_seconds=60)
    with pytest.raises(DomainError):
        authenticator.principal("Bearer cw_not-yet")
    with pytest.raises(DomainError):
        authenticator.principal("Bearer cw_not-yet")


def test_a_token_not_looked_up_yet_is_not_remembered(database: Database) -> None:
    token = _issue(database)
    authenticator = Authenticator(database, ttl_seconds=60)
    assert authenticator.remembered(f"Bearer {token}") is None
    first = authenticator.principal(f"Bearer {token}")
    assert authenticator.remembered(f"Bearer {token}") == first


def test_a_malformed_header_is_refused_without_a_lookup(database: Database) -> None:
    authenticator = Authenticator(database, ttl_seconds=60)
    with pytest.raises(DomainError) as refused:
        authenticator.remembered("Basic dXNlcjpwYXNz")
    assert refused.value.code == "unauthorized"


def test_resolving_from_the_event_loop_looks_up_a_new_token_then_remembers_it(
    database: Database,
) -> None:
    token = _issue(database)
    authenticator = Authenticator(database, ttl_seconds=60)
    first = asyncio.run(authenticator.resolve(f"Bearer {token}"))
    assert first.role is Role.AUDITOR
    _forget_every_token(database)
    assert asyncio.run(authenticator.resolve(f"Bearer {token}")) == first


def test_resolving_an_unknown_token_from_the_event_loop_is_refused(database: Database) -> None:
    authenticator = Authenticator(database, ttl_seconds=60)
    with pytest.raises(DomainError) as refused:
        asyncio.run(authenticator.resolve("Bearer cw_not-yet"))
    assert refused.value.code == "unauthorized"
