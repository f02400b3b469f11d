"""One line per request, and a request id on every response.

The log is `casino_war.access`, configured through Litestar's logging config (plain text, or
JSON lines when `CASINO_WAR_LOG_FORMAT=json`): method, path, status, duration and request
id, never a header or a body (they carry tokens). The id is the client's `X-Request-ID`
when it sent a sane one, else a fresh one, so a client's report and the server's line can be
matched.

It wraps the whole application (`wrap`), 404s and 405s from the router included, and costs
a few microseconds a request.
"""

import json
import logging
import re
import secrets
import time
from typing import Any, Final

from litestar.logging.config import LoggingConfig
from litestar.types import ASGIApp, Message, Receive, Scope, Send

ACCESS_LOGGER: Final = "casino_war.access"
HEADER: Final = b"x-request-id"
_LINE: Final = "%s %s %s %.1fms %s"
_SANE_ID: Final = re.compile(rb"[A-Za-z0-9._-]{1,64}")

logger = logging.getLogger(ACCESS_LOGGER)


def wrap(app: ASGIApp) -> ASGIApp:
    async def logged(scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method")
        if method is None:  # lifespan and websockets: nothing to log
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = _request_id(scope)
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", ()))
                headers.append((HEADER, request_id))
                message["headers"] = headers
            await send(message)

        try:
            await app(scope, receive, sending)
        finally:
            duration_ms = (time.perf_counter() - started) * 1000
            _log_line(method, scope["path"], status, duration_ms, request_id.decode())

    return logged


def _log_line(method: object, path: str, status: int, duration_ms: float, request_id: str) -> None:
    """The access line, as `logger.info` would log it but for the caller's place: its
    record names this module, with no line or function. `logger.info` walks the stack for
    them (`findCaller`), for every request, and no format of the service prints them: that
    walk was 1.3% of a hand's instructions (docs/performance-log.md, "The access line
    without its caller's place, and the chain's hash index dropped")."""
    if logger.isEnabledFor(logging.INFO):
        arguments = (method, path, status, duration_ms, request_id)
        logger.handle(
            logger.makeRecord(ACCESS_LOGGER, logging.INFO, __file__, 0, _LINE, arguments, None)
        )


def _request_id(scope: Scope) -> bytes:
    for name, value in scope["headers"]:
        if name == HEADER and _SANE_ID.fullmatch(value):
            return bytes(value)
    return secrets.token_hex(8).encode()


class PlainFormatter(logging.Formatter):
    """`logging.Formatter`, its time worked out once a second: converting and formatting it
    for every line was a fifth of an access line's cost (2.4 of 13 µs). The same text, for
    the second's text depends on nothing but the second and the format."""

    _second: tuple[int, str | None, str] = (-1, None, "")
    """The last second formatted, its format, and its text (one tuple: one assignment)."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        second = int(record.created)
        cached_second, cached_format, text = self._second
        if second != cached_second or datefmt != cached_format:
            moment = self.converter(record.created)
            text = time.strftime(datefmt or self.default_time_format, moment)
            self._second = (second, datefmt, text)
        if datefmt or not self.default_msec_format:
            return text
        return self.default_msec_format % (text, record.msecs)


class JsonLinesFormatter(PlainFormatter):
    """An access line as one JSON object: {"time", "method", "path", "status",
    "duration_ms", "request_id"}; other records as {"time", "level", "logger", "message"}."""

    def format(self, record: logging.LogRecord) -> str:
        moment = self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z"
        if record.name == ACCESS_LOGGER and isinstance(record.args, tuple):
            method, path, status, duration, request_id = record.args
            document: dict[str, Any] = {
                "time": moment,
                "method": method,
                "path": path,
                "status": status,
                "duration_ms": round(float(duration), 3),  # type: ignore[arg-type]
                "request_id": request_id,
            }
        else:
            document = {
                "time": moment,
                "level": record.levelname.lower(),
                "logger": record.name,
                "message": record.getMessage(),
            }
        return json.dumps(document)


JsonLinesFormatter.converter = time.gmtime


def logging_config(*, json_lines: bool, access_log: bool) -> LoggingConfig:
    formatter = "json" if json_lines else "plain"
    handler = {"class": "logging.StreamHandler", "formatter": formatter}
    return LoggingConfig(
        configure_root_logger=False,
        formatters={
            "plain": {
                "()": PlainFormatter,
                "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            },
            "json": {"()": JsonLinesFormatter},
        },
        handlers={"console": handler},
        loggers={
            ACCESS_LOGGER: {
                "level": "INFO" if access_log else "WARNING",
                "handlers": ["console"],
                "propagate": False,
            },
            "casino_war.api": {"level": "INFO", "handlers": ["console"], "propagate": False},
        },
        log_exceptions="never",
    )
