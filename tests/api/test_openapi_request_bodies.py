"""The OpenAPI document says what request models enforce: unknown fields are refused, in a
request body and in every model nested in one (a War game's seats)."""

from typing import Any

from litestar import Litestar
from litestar.testing import TestClient


def _components(schema: dict[str, Any]) -> set[str]:
    """The components a body schema names: itself, or each member of a `oneOf` (an optional
    body is one of the model or null)."""
    if "$ref" in schema:
        return {schema["$ref"].removeprefix("#/components/schemas/")}
    return {name for member in schema.get("oneOf", []) for name in _components(member)}


def _nested(name: str, schemas: dict[str, Any]) -> set[str]:
    """`name` and every component its schema refers to, however deep."""
    found = {name}
    pending = [schemas[name]]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                target = ref.removeprefix("#/components/schemas/")
                if target not in found:
                    found.add(target)
                    pending.append(schemas[target])
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return found


def test_request_bodies_and_only_they_are_closed_to_unknown_fields(
    client: TestClient[Litestar],
) -> None:
    document: dict[str, Any] = client.get("/schema/openapi.json").json()
    request_bodies = {
        name
        for path in document["paths"].values()
        for operation in path.values()
        if isinstance(operation, dict) and "requestBody" in operation
        for media in operation["requestBody"]["content"].values()
        for name in _components(media["schema"])
    }
    schemas = document["components"]["schemas"]
    request_bodies = {
        nested
        for name in request_bodies
        for nested in _nested(name, schemas)
        if schemas[nested].get("type") == "object"  # a named enum has no fields to close
    }
    closed = {
        name
        for name, schema in document["components"]["schemas"].items()
        if schema.get("additionalProperties") is False
    }
    assert request_bodies
    assert closed == request_bodies
