"""The Litestar application, composed from settings."""

from litestar import Litestar
from litestar.datastructures import State
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.plugins.pydantic import PydanticPlugin

from api.db.database import Database
from api.problems import EXCEPTION_HANDLERS
from api.routes.common import provide_database, provide_principal, provide_settings
from api.routes.hands import HandController, SeedController
from api.routes.health import health, ready
from api.routes.players import CashierController, PlayerController
from api.routes.tables import TableController
from api.services.tables import ensure_standard_table
from api.settings import Settings, get_settings

API_VERSION = "1.0.0"


def _openapi() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Casino War",
        version=API_VERSION,
        description="Provably fair Casino War with a tamper-evident double-entry ledger.",
        path="/schema",
        render_plugins=[ScalarRenderPlugin(), SwaggerRenderPlugin(path="/swagger")],
        components=Components(
            security_schemes={"bearer": SecurityScheme(type="http", scheme="bearer")}
        ),
        security=[{"bearer": []}],
    )


def create_app(settings: Settings | None = None) -> Litestar:
    settings = settings or get_settings()
    database = Database.connect(settings.database_url)

    def on_startup() -> None:
        with database.transaction() as session:
            ensure_standard_table(session, settings.currency)

    return Litestar(
        route_handlers=[
            health,
            ready,
            PlayerController,
            CashierController,
            TableController,
            SeedController,
            HandController,
        ],
        dependencies={
            "database": Provide(provide_database, sync_to_thread=False),
            "settings": Provide(provide_settings, sync_to_thread=False),
            "principal": Provide(provide_principal, sync_to_thread=True),
        },
        state=State({"database": database, "settings": settings}),
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=_openapi(),
        plugins=[PydanticPlugin(prefer_alias=True)],
        on_startup=[on_startup],
        on_shutdown=[database.dispose],
    )
