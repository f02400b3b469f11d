"""The OpenAPI document: configuration, and what Litestar's generator leaves out."""

from typing import Any

from litestar.handlers import HTTPRouteHandler
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Components, Schema, SecurityScheme
from litestar.plugins.pydantic import PydanticSchemaPlugin
from litestar.types import Method
from litestar.types.internal_types import PathParameterDefinition
from litestar.typing import FieldDefinition
from litestar.utils import is_class_and_subclass

from api.http.schemas import RequestBody

API_VERSION = "1.0.0"


class StrictRequestSchemaPlugin(PydanticSchemaPlugin):
    """Documents what request models enforce: unknown fields are refused.

    Without `additionalProperties: false` clients (and schema-driven fuzzers) would rightly
    expect extra fields to be ignored.

    Litestar's public plugin interface hands plugins a schema creator whose class it does not
    export (its own plugins import it from a private module), so it is typed `Any` here: this
    plugin only passes it on to Litestar's own Pydantic plugin, which builds the schema.
    """

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: Any) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        if is_class_and_subclass(field_definition.annotation, RequestBody):
            schema.additional_properties = False
        return schema


def operation_id(
    route_handler: HTTPRouteHandler,
    http_method: Method,  # noqa: ARG001 - the signature Litestar calls
    path_components: list[str | PathParameterDefinition],  # noqa: ARG001
) -> str:
    """The handler's name in camelCase (`place_hand` -> `placeHand`): a verb and a noun, short
    and stable, as generated clients name their methods. A handler's name is therefore
    part of the contract; tests/api/test_openapi_contract.py holds every one to the form."""
    first, *rest = route_handler.handler_name.split("_")
    return first + "".join(word.capitalize() for word in rest)


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Casino War",
        version=API_VERSION,
        description="Provably fair Casino War with a tamper-evident double-entry ledger.",
        path="/schema",
        operation_id_creator=operation_id,
        render_plugins=[ScalarRenderPlugin(), SwaggerRenderPlugin(path="/swagger")],
        components=Components(
            security_schemes={"bearer": SecurityScheme(type="http", scheme="bearer")}
        ),
    )
