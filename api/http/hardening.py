"""The HTTP edge's hygiene: bodies checked before they are decoded, headers on every response.

Bodies are checked by a small ASGI middleware before Litestar decodes them, because the
cases below are where a decoder fails badly: a body nested a thousand deep exhausts the
recursion limit (a 500), a body that is not UTF-8 is not JSON at all, and a `text/plain`
body was decoded as JSON anyway. Every response, a 404 or 405 from the router included,
gets the headers that keep browsers and caches from doing anything clever with tokens and
seeds (`security_headers`, an app-level `before_send` hook). Both cost a few microseconds a
request: a hand's body is a few dozen bytes.
"""

import json
from typing import Any, Final, cast

from litestar.types import ASGIApp, HTTPResponseStartEvent, Message, Receive, Scope, Send

from api.http.problems import Problem

MAX_DEPTH: Final = 32
MAX_BODY_BYTES: Final = 1_000_000
_JSON: Final = b"application/json"
_BODY_METHODS: Final = frozenset({"POST", "PUT", "PATCH"})
_SECURITY_HEADERS: Final = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)
_NO_STORE: Final = (b"cache-control", b"no-store")
_API_PREFIX: Final = "/v1"


class BodyCheckMiddleware:
    """Refuses a request body a JSON route must not try to decode (`body_refusal`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") in _BODY_METHODS:  # websockets have no method
            body = await read_body(receive)
            refusal = body_refusal(_content_type(scope), body)
            if refusal is not None:
                await _problem(send, Problem(*refusal))
                return
            receive = replay_body(body)
        await self.app(scope, receive, send)


async def security_headers(message: Message, scope: Scope) -> None:
    """`before_send`: nosniff and no referrer everywhere; `no-store` on the API, whose
    answers carry tokens, seeds and balances that no cache should keep."""
    if message["type"] == "http.response.start":
        headers = cast(list[tuple[bytes, bytes]], message.setdefault("headers", []))
        headers.extend(_SECURITY_HEADERS)
        if scope["path"].startswith(_API_PREFIX):
            headers.append(_NO_STORE)


def body_refusal(content_type: bytes | None, body: bytes) -> tuple[int, str, str] | None:
    """Why a JSON route cannot take this body, or None: 415 for another media type, 400
    `malformed_body` for text that is not UTF-8 or JSON nested deeper than `MAX_DEPTH`."""
    if not body:
        return None
    media_type = (content_type or b"").split(b";", 1)[0].strip().lower()
    if media_type != _JSON:
        shown = media_type.decode("latin-1") or "none"
        return 415, "unsupported_media_type", f"the body must be application/json, not {shown}"
    if len(body) > MAX_BODY_BYTES:
        return 400, "malformed_body", f"the body is larger than {MAX_BODY_BYTES} bytes"
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return 400, "malformed_body", "the body is not UTF-8"
    if body.count(b"[") + body.count(b"{") > MAX_DEPTH and _depth(body) > MAX_DEPTH:
        return 400, "malformed_body", f"the body is nested deeper than {MAX_DEPTH} levels"
    return None


def _depth(body: bytes) -> int:
    """The deepest nesting of arrays and objects, outside strings."""
    deepest = depth = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


def _content_type(scope: Scope) -> bytes | None:
    for name, value in scope["headers"]:
        if name == b"content-type":
            return bytes(value)
    return None


async def read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message: Any = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def replay_body(body: bytes) -> Receive:
    sent = False

    async def receive() -> Any:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _problem(send: Send, problem: Problem) -> None:
    body = json.dumps(problem.body()).encode()
    start: HTTPResponseStartEvent = {
        "type": "http.response.start",
        "status": problem.status,
        "headers": [
            (b"content-type", b"application/problem+json"),
            (b"content-length", str(len(body)).encode()),
        ],
    }
    await send(start)
    await send({"type": "http.response.body", "body": body, "more_body": False})
