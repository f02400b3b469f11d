"""The pages' tests drive the real app, as the API's do: the same fixtures."""

from tests.api.conftest import client, settings

__all__ = ["client", "settings"]
