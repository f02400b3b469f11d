"""The Litestar application, composed from settings."""

from litestar import Litestar
from litestar.datastructures import State
from litestar.di import Provide
from litestar.plugins.pydantic import PydanticPlugin
from litestar.types import ControllerRouterHandler

from api.db.database import Database
from api.db.threads import (
    share_connections_between_threads,
    stop_command_threads,
    thread_shares,
)
from api.domain.audit.routes import AuditController
from api.domain.cashier import routes as cashier
from api.domain.events.routes import EventController
from api.domain.hands import routes as hands
from api.domain.players.routes import PlayerController
from api.domain.protection.routes import ProtectionController
from api.domain.reports.routes import ReportController
from api.domain.seeds.routes import SeedController
from api.domain.statements.routes import StatementController
from api.domain.tables.routes import TableController
from api.domain.tables.service import ensure_standard_table
from api.domain.tokens.routes import TokenController
from api.domain.tokens.service import Authenticator
from api.domain.war_games.routes import WarGameAuditController, WarGameController
from api.http import access
from api.http.access import logging_config
from api.http.cors import cors_config
from api.http.hardening import BodyCheckMiddleware, security_headers
from api.http.health import get_health, get_readiness
from api.http.hot_path import hot_path
from api.http.idempotency import Idempotency
from api.http.openapi import (
    StrictRequestSchemaPlugin,
    docs_assets,
    openapi_config,
    refine_handlers,
)
from api.http.problems import EXCEPTION_HANDLERS
from api.http.routing import (
    provide_command,
    provide_database,
    provide_principal,
    provide_settings,
)
from api.settings import Settings, get_settings
from api.web.routes import (
    audit_page,
    index,
    office_page,
    pages_script,
    play_page,
    verify_download,
    verify_page,
    war_page,
)

ROUTES: list[ControllerRouterHandler] = [
    index,
    pages_script,
    play_page,
    war_page,
    office_page,
    audit_page,
    verify_page,
    verify_download,
    docs_assets(),
    get_health,
    get_readiness,
    PlayerController,
    cashier.CashierController,
    TableController,
    SeedController,
    hands.HandController,
    AuditController,
    ReportController,
    StatementController,
    ProtectionController,
    TokenController,
    EventController,
    WarGameController,
    WarGameAuditController,
]
"""Every controller and handler the app serves, each context's own."""

HOT_COMMANDS = (*hands.HOT_COMMANDS, *cashier.HOT_COMMANDS)
"""The commands served in front of the framework when `Settings.hot_path` is on."""


def _database(settings: Settings) -> Database:
    """The database as the settings describe it, told how many server processes share it:
    that decides where its units of work run (`Database.run_units`)."""
    return Database.connect(
        settings.database_url,
        settings.database_timeout_seconds,
        settings.database_pool_size,
        server_processes=settings.workers,
    )


def create_app(settings: Settings | None = None) -> Litestar:
    settings = settings or get_settings()
    database = _database(settings)

    def on_startup() -> None:
        loop_units = database.loop_units
        share_connections_between_threads(
            settings.database_pool_size, command_threads=database.units_run_in_threads
        )
        if loop_units is not None:
            loop_units.start(thread_shares(settings.database_pool_size)[0])
        with database.transaction() as session:
            ensure_standard_table(session, settings.currency)

    app = Litestar(
        route_handlers=ROUTES,
        dependencies={
            "database": Provide(provide_database, sync_to_thread=False),
            "settings": Provide(provide_settings, sync_to_thread=False),
            "principal": Provide(provide_principal),
            "command": Provide(provide_command, sync_to_thread=False),
        },
        state=State(
            {
                "database": database,
                "settings": settings,
                "authenticator": Authenticator(
                    database,
                    ttl_seconds=settings.token_cache_seconds,
                    failures_per_minute=settings.auth_failures_per_minute,
                ),
                "idempotency": Idempotency(database),
            }
        ),
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=openapi_config(),
        plugins=[
            StrictRequestSchemaPlugin(prefer_alias=True),
            PydanticPlugin(prefer_alias=True, validate_strict=True),
        ],
        middleware=[BodyCheckMiddleware],
        before_send=[security_headers],
        cors_config=cors_config(settings),
        on_startup=[on_startup],
        on_shutdown=[stop_command_threads, database.dispose],
        logging_config=logging_config(
            json_lines=settings.log_format == "json", access_log=settings.access_log
        ),
    )
    # Around the whole app, so that the router's own 404s and 405s are logged and carry a
    # request id too (route middleware runs only for a matched route), and so are the hot
    # path's answers.
    handler = app.asgi_handler
    if settings.hot_path:
        handler = hot_path(handler, HOT_COMMANDS, app.state)
    app.asgi_handler = access.wrap(handler)
    refine_handlers(app)
    return app
