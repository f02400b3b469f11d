"""The OpenAPI document says what request models enforce: unknown fields are refused."""

from typing import Any

from litestar import Litestar
from litestar.testing import TestClient


def _components(schema: dict[str, Any]) -> set[str]:
    """The components a body schema names: itself, or each member of a `oneOf` (an optional
    body is one of the model or null)."""
    if "$ref" in schema:
        return {schema["$ref"].removeprefix("#/components/schemas/")}
    return {name for member in schema.get("oneOf", []) for name in _components(member)}


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
    closed = {
        name
        for name, schema in document["components"]["schemas"].items()
        if schema.get("additionalProperties") is False
    }
    assert request_bodies
    assert closed == request_bodies
