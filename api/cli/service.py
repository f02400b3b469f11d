"""Commands that run the service: `serve`, `db upgrade`, `token create | list | revoke`."""

import argparse
import os
from datetime import timedelta

import migrations
from api.cli.common import EXIT_OK, Subparsers, counted, examples, positive_int, print_json
from api.db.database import Database
from api.domain.tables.service import ensure_standard_table
from api.domain.tokens.lifecycle import TokenFilters, issue_recorded, list_tokens, revoke
from api.domain.tokens.schemas import TokenView
from api.domain.tokens.service import Role
from api.pagination import MAX_LIMIT
from api.server import serve
from api.settings import get_settings
from api.startup import shown_url
from api.version import SOFTWARE_VERSION


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
    settings = get_settings()
    workers = counted(args.workers, "worker")
    announce = (
        f"casino-war {SOFTWARE_VERSION} serving http://{args.host}:{args.port} ({workers}, "
        f"database {shown_url(settings.database_url)}, "
        f"access log {'on' if settings.access_log else 'off'})"
    )
    serve("api.asgi:app", host=args.host, port=args.port, workers=args.workers, announce=announce)
    return EXIT_OK


def _upgrade(_: argparse.Namespace) -> int:
    prepare_database().dispose()
    print("database is at the newest schema")
    return EXIT_OK


def _create_token(args: argparse.Namespace) -> int:
    settings = get_settings()
    ttl = timedelta(seconds=args.ttl or settings.staff_token_ttl_seconds)
    database = prepare_database()
    try:
        with database.transaction() as session:
            _, token = issue_recorded(session, Role(args.role), None, name=args.name, ttl=ttl)
    finally:
        database.dispose()
    print(token)
    return EXIT_OK


def _list_tokens(args: argparse.Namespace) -> int:
    filters = TokenFilters(
        role=None if args.role is None else Role(args.role),
        player_id=args.player_id,
        active=args.active,
    )
    database = prepare_database()
    try:
        with database.reading() as session:
            items = []
            cursor: str | None = None
            while True:
                page = list_tokens(session, filters, cursor, MAX_LIMIT)
                items += [TokenView.model_validate(t).model_dump(mode="json") for t in page.items]
                cursor = page.next_cursor
                if cursor is None:
                    break
    finally:
        database.dispose()
    if args.json:
        print_json({"items": items})
        return EXIT_OK
    for item in items:
        state = "revoked" if item["revoked_at"] else "live"
        expires = item["expires_at"] or "never"
        print(f"{item['id']:>6}  {item['role']:<8}  {state:<7}  expires {expires}  {item['name']}")
    return EXIT_OK


def _revoke_token(args: argparse.Namespace) -> int:
    database = prepare_database()
    try:
        with database.transaction() as session:
            token = TokenView.model_validate(revoke(session, args.token_id, None))
    finally:
        database.dispose()
    if args.json:
        print_json(token.model_dump(mode="json"))
    else:
        print(f"token {token.id} revoked at {token.revoked_at}")
    return EXIT_OK


def register(subparsers: Subparsers) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="bring the database to the newest schema, then serve the API",
        description="Migrate the database (CASINO_WAR_DATABASE_URL, default a SQLite file "
        "casino-war.db here), then serve the API, the OpenAPI document (/schema) and the "
        "probes (/health, /ready); one access-log line per request on stderr.",
        epilog="examples:\n  casino-war serve\n  casino-war serve --host 0.0.0.0 --port 8080 "
        "--workers 4\n  CASINO_WAR_DATABASE_URL=postgresql://casino@db/casino casino-war serve",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (%(default)s; 0.0.0.0: all)"
    )
    serve.add_argument("--port", type=positive_int, default=8000, help="TCP port (%(default)s)")
    serve.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        help="server processes sharing the database (%(default)s)",
    )
    serve.set_defaults(handler=_serve)

    db = subparsers.add_parser("db", help="database schema")
    db_commands = db.add_subparsers(dest="db_command", metavar="COMMAND", required=True)
    db_commands.add_parser(
        "upgrade",
        help="bring the database to the newest schema (Alembic)",
        **examples(
            "casino-war db upgrade",
            "CASINO_WAR_DATABASE_URL=postgresql://casino@db/casino casino-war db upgrade",
        ),
    ).set_defaults(handler=_upgrade)

    _register_tokens(subparsers)


def _register_tokens(subparsers: Subparsers) -> None:
    token = subparsers.add_parser("token", help="API tokens for operators and auditors")
    token_commands = token.add_subparsers(dest="token_command", metavar="COMMAND", required=True)
    create = token_commands.add_parser(
        "create",
        help="print a new token once, alone on its line; only its hash is stored",
        **examples(
            "OPERATOR=$(casino-war token create --role operator --name back-office)",
            "casino-war token create --role auditor --name desk --ttl 86400",
        ),
    )
    create.add_argument("--role", required=True, choices=[Role.OPERATOR, Role.AUDITOR])
    create.add_argument("--name", help="who or what the token is for")
    create.add_argument(
        "--ttl",
        type=positive_int,
        help="seconds until it expires (default CASINO_WAR_STAFF_TOKEN_TTL_SECONDS, 30 days)",
    )
    create.set_defaults(handler=_create_token)
    listing = token_commands.add_parser(
        "list",
        help="every token (never the secret): role, state, expiry, name",
        **examples("casino-war token list --active", "casino-war token list --player-id 7 --json"),
    )
    listing.add_argument("--role", choices=[role.value for role in Role])
    listing.add_argument("--player-id", type=positive_int)
    listing.add_argument(
        "--active",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="only live tokens (--no-active: only revoked or expired ones)",
    )
    listing.add_argument("--json", action="store_true", help="print one JSON document")
    listing.set_defaults(handler=_list_tokens)
    revoking = token_commands.add_parser(
        "revoke",
        help="revoke a token: every server refuses it within a second",
        **examples("casino-war token revoke 12"),
    )
    revoking.add_argument("token_id", type=positive_int, metavar="ID")
    revoking.add_argument("--json", action="store_true", help="print one JSON document")
    revoking.set_defaults(handler=_revoke_token)
