"""Commands that run the service: `serve`, `db upgrade`, `token create`."""

import argparse
import os

import migrations
from api.cli.common import EXIT_OK, Subparsers
from api.db.database import Database
from api.domain.tables.service import ensure_standard_table
from api.domain.tokens.service import Role, issue_token
from api.server import serve
from api.settings import get_settings


def prepare_database() -> Database:
    """Bring the database to the newest schema and make sure the standard table exists."""
    settings = get_settings()
    migrations.upgrade(settings.database_url)
    database = Database.connect(settings.database_url)
    with database.transaction() as session:
        ensure_standard_table(session, settings.currency)
    return database


def _serve(args: argparse.Namespace) -> int:
    prepare_database().dispose()
    os.environ["CASINO_WAR_WORKERS"] = str(args.workers)  # read by every worker's settings
    serve("api.asgi:app", host=args.host, port=args.port, workers=args.workers)
    return EXIT_OK


def _upgrade(_: argparse.Namespace) -> int:
    prepare_database().dispose()
    print("database is at the newest schema")
    return EXIT_OK


def _create_token(args: argparse.Namespace) -> int:
    database = prepare_database()
    try:
        with database.transaction() as session:
            token = issue_token(session, Role(args.role), name=args.name)
    finally:
        database.dispose()
    print(token)
    return EXIT_OK


def register(subparsers: Subparsers) -> None:
    serve = subparsers.add_parser(
        "serve", help="bring the database to the newest schema, then serve the API"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="server processes (%(default)s)")
    serve.set_defaults(handler=_serve)

    db = subparsers.add_parser("db", help="database schema")
    db_commands = db.add_subparsers(dest="db_command", metavar="COMMAND", required=True)
    db_commands.add_parser(
        "upgrade", help="bring the database to the newest schema (Alembic)"
    ).set_defaults(handler=_upgrade)

    token = subparsers.add_parser("token", help="API tokens for operators and auditors")
    token_commands = token.add_subparsers(dest="token_command", metavar="COMMAND", required=True)
    create = token_commands.add_parser(
        "create", help="print a new token once, alone on its line; only its hash is stored"
    )
    create.add_argument("--role", required=True, choices=[Role.OPERATOR, Role.AUDITOR])
    create.add_argument("--name", help="who or what the token is for")
    create.set_defaults(handler=_create_token)
