"""The PostgreSQL server the benchmarks' tests measure on."""

import os

import pytest

from benchmarks import scratch


def postgres_server() -> scratch.PostgresServer:
    """The tests' own server, named by `CASINO_WAR_TEST_POSTGRES_URL` (as in CI): a test that
    needs it is skipped without it, and fails if it is named and does not answer."""
    url = os.environ.get("CASINO_WAR_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("PostgreSQL tests need CASINO_WAR_TEST_POSTGRES_URL")
    server, reason = scratch.find_postgres(url)
    assert server is not None, reason
    return server
