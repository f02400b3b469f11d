"""Idempotent execution of state-changing requests.

The record of a key is written in the same database transaction as the request's effects,
so a retried request can never bet twice: either both committed or neither did. Refusals are
not recorded (a refused request leaves no trace), so a retry after a refusal runs afresh.
"""

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from litestar import Response
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from api.auth import Principal
from api.db.database import Database
from api.db.models import IdempotencyRecord
from api.problems import Problem
from api.schemas import ResponseBody

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255

M = TypeVar("M", bound=ResponseBody)


def fingerprint(method: str, path: str, body: Any) -> str:
    """What 'the same request' means: the same method, path and (canonical) JSON body."""
    canonical = json.dumps([method, path, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def advisory_lock_key(caller: str, key: str) -> int:
    digest = hashlib.sha256(f"{caller}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _claim(session: Session, database: Database, caller: str, key: str) -> None:
    """Refuse a second request with a key whose first request is still running.

    On PostgreSQL an advisory lock held for the transaction marks the key in flight; on
    SQLite every write transaction is serialised, so a second request waits and replays.
    """
    if not database.is_postgresql:
        return
    acquired = session.scalar(
        text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": advisory_lock_key(caller, key)}
    )
    if not acquired:
        raise Problem(
            409, "idempotency_in_flight", "a request with this Idempotency-Key is still running"
        )


def run_idempotent(
    database: Database,
    principal: Principal,
    key: str,
    request_fingerprint: str,
    model: type[M],
    operation: Callable[[Session], M],
    *,
    status_code: int,
) -> Response[M]:
    """Run `operation` once per (caller, key); replay its first response afterwards."""
    with database.transaction() as session:
        _claim(session, database, principal.caller, key)
        record = session.scalar(
            select(IdempotencyRecord).where(
                IdempotencyRecord.caller == principal.caller, IdempotencyRecord.key == key
            )
        )
        if record is not None:
            if record.request_hash != request_fingerprint:
                raise Problem(
                    422,
                    "idempotency_key_reused",
                    "this Idempotency-Key was used with a different request",
                )
            return Response(
                model.model_validate(record.response_body),
                status_code=record.response_status,
                headers={REPLAYED_HEADER: "true"},
            )
        result = operation(session)
        session.add(
            IdempotencyRecord(
                caller=principal.caller,
                key=key,
                request_hash=request_fingerprint,
                response_status=status_code,
                response_body=result.stored_form(),
                created_at=datetime.now(UTC),
            )
        )
    return Response(result, status_code=status_code)
