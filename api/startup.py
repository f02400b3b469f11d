"""Starting up: configuration and connection errors in one line, and the app for servers
that import it by name.

A traceback tells an operator nothing they can act on; `casino-war --debug COMMAND` shows
it when it is wanted. Anything not recognised here is a bug and keeps its traceback.
"""

import errno
import re
import socket
import sys
from typing import NoReturn

from litestar import Litestar
from pydantic import ValidationError
from pydantic_settings import SettingsError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

ENV_PREFIX = "CASINO_WAR_"


def one_line(error: BaseException) -> str | None:
    """The sentence for a known configuration or connection error, else None."""
    if isinstance(error, ValidationError):
        return _settings(error)
    if isinstance(error, SettingsError):
        return _unparsed_setting(error)
    if isinstance(error, OSError) and error.errno == errno.EADDRINUSE:
        return "the address is already in use: stop what listens there, or pass --port"
    if isinstance(error, OSError) and error.errno == errno.EADDRNOTAVAIL:
        return "the address is not one of this machine's: pass --host with a local address"
    if isinstance(error, socket.gaierror):
        return f"cannot resolve the --host name ({error.strerror}): pass a local address"
    if isinstance(error, NoSuchModuleError | ArgumentError):
        return (
            f"{ENV_PREFIX}DATABASE_URL is not a database this service runs on: use "
            "sqlite:///PATH or postgresql://USER@HOST/DATABASE"
        )
    if isinstance(error, DBAPIError):
        first = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
        if "unable to open database file" in first:
            return (
                f"cannot open the SQLite database ({first}): does its folder exist, and may "
                "this user write there?"
            )
        if any(sign in first.lower() for sign in _UNREACHABLE):
            return f"cannot reach the database ({first}): is it running, and is the URL right?"
    return None


# What psycopg says when the database cannot be reached ("connection timeout expired"
# included). Not a bare "timeout": a statement or lock timeout is a reachable database.
_UNREACHABLE = ("connect", "refused", "resolve", "host name", "timed out")


def _settings(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        name = ENV_PREFIX + "_".join(str(part) for part in item["loc"]).upper()
        given = item.get("input")
        if name == f"{ENV_PREFIX}DATABASE_URL" and isinstance(given, str):
            given = shown_url(given)  # never a password on the screen or in a log
        problems.append(f"{name}: {item['msg']} (got {given!r})")
    return "invalid setting " + "; ".join(problems)


def _unparsed_setting(error: SettingsError) -> str:
    """pydantic-settings names the field; the operator sets the variable. The settings it
    cannot parse at all are the structured ones (lists), which are JSON."""
    field = _FIELD.search(str(error))
    name = ENV_PREFIX + field.group(1).upper() if field else "a setting"
    return f'invalid setting {name}: it must be JSON, e.g. ["https://a.example"]'


_FIELD = re.compile(r'field "(\w+)"')


def shown_url(url: str) -> str:
    """A database URL with its password hidden, for start-up lines and messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # a port that is not a number raises ValueError
        return "(an unparseable URL)"


def checked_app() -> Litestar:
    """The app for `uvicorn api.asgi:app` and `litestar run`: the settings valid, the
    database reachable and at the newest schema, or one line saying what to do and exit 2
    (those servers do not migrate: several workers would race to)."""
    # Imported here: the command line imports this module for `one_line` alone.
    import migrations
    from api.app import create_app
    from api.settings import get_settings

    try:
        settings = get_settings()
        if not migrations.is_current(settings.database_url):
            _exit(
                f"the database at {shown_url(settings.database_url)} is not at the newest "
                "schema: run `casino-war db upgrade` (or serve with `casino-war serve`, "
                "which does)"
            )
        return create_app(settings)
    except Exception as error:
        sentence = one_line(error)
        if sentence is None:
            raise
        _exit(sentence)


def _exit(sentence: str) -> NoReturn:
    print(f"casino-war: error: {sentence}", file=sys.stderr)
    raise SystemExit(2)
