"""The hot path: the commands that are nearly all of the traffic, served without the
framework's per-request work.

Placing a hand and deciding one are what players do all day. Through Litestar each pays for
routing, a guard, dependency injection, a signature model and the response machinery:
about as much CPU as the unit of work itself (docs/performance.md). A `HotCommand` runs the
same unit of work, through the same `Idempotency`, for a request that Litestar would accept
as it is, and sends the same bytes.

A request takes this path only where every check the framework would make is known to
pass: a POST to exactly the command's path, with no query string; a JSON body that
`body_refusal` accepts and the command's request model validates; an Idempotency-Key the
route's parameter accepts; a token the authenticator accepts (from memory, or looked up as
the framework's guard looks it up: a player who plays a hand every few seconds finds their
token gone from memory each time), of a role the command serves; no cross-origin request
where CORS is configured. Anything else goes on to Litestar with the body it came with, so
every refusal of the request itself is the framework's own; what the command answers, its
refusals included, is the `Answer` the route would send, encoded as Litestar encodes it
(msgspec), with the same headers: the path sits inside `Litestar.__call__`, whose
`before_send` hooks (`security_headers`) wrap its `send` as they wrap the routes'.
`tests/api/test_hot_path.py` holds the two paths to the same bytes.
"""

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from litestar.datastructures import State
from litestar.types import ASGIApp, HTTPResponseStartEvent, Receive, Scope, Send
from pydantic import ValidationError

from api.domain.tokens.service import Authenticator, Principal, Role
from api.http import idempotency
from api.http.hardening import body_refusal, read_body, replay_body
from api.http.idempotency import Answer, Idempotency, Operation, problem_answer
from api.http.problems import problem_of
from api.http.schemas import MAX_ID, PRINTABLE, RequestBody
from api.settings import Settings

_KEY_HEADER: Final = idempotency.HEADER.lower().encode()
_PRINTABLE: Final = re.compile(PRINTABLE)


class HotCall(msgspec.Struct, frozen=True):
    """What a hot command's operation is built from: what its route's handler receives."""

    path_ids: tuple[int, ...]
    body: Any
    principal: Principal
    settings: Settings


@dataclass(frozen=True, slots=True)
class HotCommand:
    """A route's command on the hot path: the same request model, roles, status code and
    unit of work as its Litestar handler (which stays the documented route, and serves
    every request this path passes on)."""

    path: re.Pattern[str]
    """Matched against the whole path; each group is an id (1 to 2**63 - 1)."""
    body: type[RequestBody]
    roles: frozenset[Role]
    status_code: int
    operation: Callable[[HotCall], Operation]


def hot_path(app: ASGIApp, commands: Sequence[HotCommand], state: State) -> ASGIApp:
    """`app` with `commands` served in front of it."""
    authenticator: Authenticator = state.authenticator
    runner: Idempotency = state.idempotency
    settings: Settings = state.settings

    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        # websockets and lifespan have no method
        if scope.get("method") != "POST" or scope.get("query_string"):
            await app(scope, receive, send)
            return
        for command in commands:
            matched = command.path.fullmatch(scope["path"])
            if matched is not None:
                break
        else:
            await app(scope, receive, send)
            return
        body = await read_body(receive)
        try:
            call = await _accepted(command, matched, body, scope, authenticator, settings)
            answer = None if call is None else await _answered(runner, command, scope, *call)
        except Exception as error:  # as the framework's exception handlers answer it
            answer = problem_answer(problem_of(error))
        if answer is None:
            await app(scope, replay_body(body), send)
            return
        await _send(answer, send)

    return serve


async def _answered(
    runner: Idempotency, command: HotCommand, scope: Scope, key: str, call: HotCall
) -> Answer:
    return await runner.execute(
        call.principal,
        key,
        # The path as Litestar's `request.url.path` spells it, so that a retry served by
        # either path is the same request.
        idempotency.fingerprint(
            "POST", scope.get("root_path", "") + scope["path"], call.body.model_dump(mode="json")
        ),
        command.operation(call),
        status_code=command.status_code,
    )


async def _accepted(
    command: HotCommand,
    matched: re.Match[str],
    body: bytes,
    scope: Scope,
    authenticator: Authenticator,
    settings: Settings,
) -> tuple[str, HotCall] | None:
    """The key and the call, where Litestar would accept the request as it is; None where
    it would do anything else. The caller is checked last: a token not in memory costs a
    look-up in the database (whose outage is answered as the framework's guard answers
    it), which a request the framework will refuse anyway should not make. A token refused
    here is looked up again by the framework's guard, which refuses it and counts the
    failure: refusals are rare, and the throttle bounds them (by default 20 a minute an
    address, `Settings.auth_failures_per_minute`)."""
    headers = _single_headers(scope["headers"])
    if headers is None or (settings.cors_allowed_origins and b"origin" in headers):
        return None
    path_ids = _ids(matched.groups())
    key = headers.get(_KEY_HEADER, b"").decode("latin-1")
    if path_ids is None or not body or not _acceptable_key(key):
        return None
    if body_refusal(headers.get(b"content-type"), body) is not None:
        return None
    try:
        data = command.body.model_validate(msgspec.json.decode(body))
    except (msgspec.DecodeError, ValidationError):
        return None
    client = scope.get("client")
    address = client[0] if client else "unknown"
    authorization = headers.get(b"authorization")
    principal = await authenticator.known_caller(
        authorization.decode("latin-1") if authorization is not None else None, address
    )
    if principal is None or principal.role not in command.roles:
        return None
    return key, HotCall(path_ids, data, principal, settings)


def _ids(groups: Iterable[str]) -> tuple[int, ...] | None:
    ids = tuple(int(group) for group in groups)
    return ids if all(1 <= id_ <= MAX_ID for id_ in ids) else None


def _acceptable_key(key: str) -> bool:
    return 0 < len(key) <= idempotency.MAX_KEY_LENGTH and _PRINTABLE.match(key) is not None


def _single_headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[bytes, bytes] | None:
    """The headers by name, or None when one comes twice: which of two the framework would
    take is its business, so such a request goes to it."""
    headers: dict[bytes, bytes] = {}
    for name, value in raw:
        if name in headers:
            return None
        headers[name] = value
    return headers


async def _send(answer: Answer, send: Send) -> None:
    body = msgspec.json.encode(answer.body)
    start: HTTPResponseStartEvent = {
        "type": "http.response.start",
        "status": answer.status,
        "headers": [
            *(
                (name.lower().encode("latin-1"), value.encode("latin-1"))
                for name, value in answer.headers.items()
            ),
            (b"content-type", answer.media_type.encode()),
            (b"content-length", str(len(body)).encode()),
        ],
    }
    await send(start)
    await send({"type": "http.response.body", "body": body, "more_body": False})
