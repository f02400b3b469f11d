"""The OpenAPI document: configuration, and what Litestar's generator leaves out."""

import inspect
from http import HTTPStatus
from importlib.resources import files
from pathlib import Path
from typing import Any, get_args

from litestar import Litestar, Router
from litestar.handlers import HTTPRouteHandler
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Components, Operation, Schema, SecurityScheme
from litestar.plugins.pydantic import PydanticSchemaPlugin
from litestar.static_files import create_static_files_router
from litestar.types import Method
from litestar.types.internal_types import PathParameterDefinition
from litestar.typing import FieldDefinition
from litestar.utils import is_class_and_subclass
from pydantic import BaseModel

from api.http.problems import PROBLEM_MEDIA_TYPE
from api.http.schemas import MAX_ID, RequestBody

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
            _keep_patterns(field_definition.annotation, schema)
        for prop in (schema.properties or {}).values():
            if isinstance(prop, Schema) and prop.maximum is not None and prop.maximum >= MAX_ID:
                prop.maximum = MAX_ID
            if isinstance(prop, Schema) and isinstance(prop.minimum, float):
                prop.minimum = int(prop.minimum) if prop.minimum.is_integer() else prop.minimum
        return schema


def _keep_patterns(model: type[BaseModel], schema: Schema) -> None:
    """Litestar drops the pattern of an optional constrained string (`ClientSeed | None`):
    put each field's pattern back on the string it constrains."""
    for name, field in model.model_fields.items():
        pattern = _pattern_of(field.annotation)
        prop = (schema.properties or {}).get(field.alias or name)
        if pattern is None or not isinstance(prop, Schema):
            continue
        strings = [m for m in prop.one_of or [] if isinstance(m, Schema) and m.type == "string"]
        for target in strings or [prop]:
            target.pattern = pattern


def _pattern_of(annotation: Any) -> str | None:
    for metadata in getattr(annotation, "__metadata__", ()):
        pattern = getattr(metadata, "pattern", None)
        if isinstance(pattern, str):
            return pattern
    for argument in get_args(annotation):
        found = _pattern_of(argument)
        if found is not None:
            return found
    return None


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


ASSETS_PATH = "/schema/assets"
"""Where the interactive docs' scripts and styles are served from, by this app: from the
installed swagger-ui-py package, so that the docs render with no network (a CDN, which the
render plugins use by default, is out of reach on a closed network and trusts a third
party with the page that holds an operator's token)."""


def docs_assets() -> Router:
    return create_static_files_router(
        path=ASSETS_PATH,
        directories=[Path(str(files("swagger_ui").joinpath("static")))],
        include_in_schema=False,
    )


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Casino War",
        version=API_VERSION,
        description="Provably fair Casino War with a tamper-evident double-entry ledger.",
        path="/schema",
        operation_id_creator=operation_id,
        render_plugins=[
            SwaggerRenderPlugin(
                path=["/", "/swagger"],
                js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
                css_url=f"{ASSETS_PATH}/swagger-ui.css",
                standalone_preset_js_url=f"{ASSETS_PATH}/swagger-ui-standalone-preset.js",
                favicon=f'<link rel="icon" href="{ASSETS_PATH}/favicon-32x32.png">',
            )
        ],
        components=Components(
            security_schemes={"bearer": SecurityScheme(type="http", scheme="bearer")}
        ),
    )


PROBLEM_CODES: dict[str, tuple[str, ...]] = {
    "400": ("idempotency_key_required", "malformed_body"),
    "401": ("unauthorized", "token_revoked", "token_expired"),
    "403": ("forbidden", "self_excluded", "time_limit_reached"),
    "404": ("not_found",),
    "409": (
        "unfinished_hand",
        "table_closed",
        "hand_not_awaiting_decision",
        "idempotency_in_flight",
        "idempotency_key_reused",
        "exclusion_active",
        "war_game_over",
    ),
    "415": ("unsupported_media_type",),
    "422": (
        "validation_error",
        "insufficient_funds",
        "bet_out_of_range",
        "bet_not_multiple_of_unit",
        "currency_mismatch",
        "surrender_not_allowed",
        "amount_too_large",
        "player_advantage",
        "deposit_limit_exceeded",
        "loss_limit_exceeded",
        "wager_limit_exceeded",
    ),
    "429": ("too_many_requests",),
    "503": ("service_unavailable",),
}
"""Which `code` a problem of each status may carry (docs/api.md): stated in the document, so
that a client's switch over codes can be written from it."""

CSV_OPERATIONS = frozenset({"getPayoutReport", "getPlayerAccountsReport"})
"""JSON routes that also answer CSV to `Accept: text/csv` (their `...Csv` twins answer only
CSV, for generated clients that read one media type a route)."""
_RETRY_AFTER = {
    "description": "Seconds to wait before retrying.",
    "schema": {"type": "integer", "minimum": 1},
}
_REPLAYED = {
    "description": "`true` when this is the stored answer to an earlier request with the "
    "same Idempotency-Key and body.",
    "schema": {"type": "string", "enum": ["true"]},
}


class ContractOperation(Operation):
    """An operation as generated clients need it: Litestar's own 400 shape (which this
    service never sends: it answers problems) left out, every problem response listing its
    codes with a real example, the headers a client must handle declared, CSV declared
    where it is served, integer bounds written as integers."""

    def to_schema(self) -> dict[str, Any]:
        document = super().to_schema()
        _optional_body(document)
        responses: dict[str, Any] = document.get("responses", {})
        litestar_400 = responses.get("400", {}).get("content", {}).get("application/json")
        if litestar_400 is not None:
            del responses["400"]
        for status, response in responses.items():
            _describe_problem(status, response)
        is_command = any(
            parameter.get("name") == "Idempotency-Key"
            for parameter in document.get("parameters", [])
        )
        success = next((r for s, r in responses.items() if s.startswith("2")), None)
        if success is not None and is_command:
            success.setdefault("headers", {})["Idempotent-Replayed"] = _REPLAYED
        if success is not None and document.get("operationId") in CSV_OPERATIONS:
            success.setdefault("content", {})["text/csv"] = {"schema": {"type": "string"}}
        for parameter in document.get("parameters", []):
            integer_bounds(parameter.get("schema", {}))
        return document


def _optional_body(document: dict[str, Any]) -> None:
    """A body that may be left out (`X | None`) is an optional body of type X, not a
    required one that may be null."""
    body = document.get("requestBody")
    if body is None:
        return
    for media in body.get("content", {}).values():
        members = media.get("schema", {}).get("oneOf", [])
        if {"type": "null"} in members and len(members) == 2:
            media["schema"] = next(m for m in members if m != {"type": "null"})
            body["required"] = False


def _describe_problem(status: str, response: dict[str, Any]) -> None:
    content = response.get("content", {}).get(PROBLEM_MEDIA_TYPE)
    codes = PROBLEM_CODES.get(status)
    if content is None or codes is None:
        return
    response["description"] = "Problem details; `code` is one of " + ", ".join(
        f"`{code}`" for code in codes
    )
    content["example"] = {
        "type": f"/problems/{codes[0]}",
        "title": HTTPStatus(int(status)).phrase,
        "status": int(status),
        "detail": codes[0].replace("_", " "),
        "code": codes[0],
    }
    if status in ("429", "503"):
        response.setdefault("headers", {})["Retry-After"] = _RETRY_AFTER


def integer_bounds(schema: Any) -> None:
    """Litestar writes integer bounds as floats (9.223372036854776e18 for 2^63 - 1, which a
    64-bit client cannot hold): written back as the integers they are."""
    if isinstance(schema, dict):
        if schema.get("type") == "integer":
            for bound in ("maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum"):
                value = schema.get(bound)
                if isinstance(value, float) and value.is_integer():
                    schema[bound] = MAX_ID if value >= MAX_ID else int(value)
        for value in schema.values():
            integer_bounds(value)
    elif isinstance(schema, list):
        for value in schema:
            integer_bounds(value)


def refine_handlers(app: Litestar) -> None:
    """Every HTTP handler documented by its docstring and generated as a `ContractOperation`
    (set here, once, rather than repeated on every route)."""
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            if isinstance(handler, HTTPRouteHandler):
                if handler.description is None:
                    # A handler run in a thread is wrapped; its docstring is the wrapped one's.
                    handler.description = inspect.getdoc(getattr(handler.fn, "func", handler.fn))
                handler.operation_class = ContractOperation
