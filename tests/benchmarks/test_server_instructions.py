"""`python -m benchmarks.server_instructions` counts a real server's instructions under
valgrind while the benchmark's clients load it (the do-nothing endpoint here: a counted
`casino-war serve` takes minutes, and its load is the main benchmark's, tested there)."""

import shutil

import pytest

from benchmarks.server_instructions import count


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_server_is_counted_until_its_units_have_settled() -> None:
    settled, instructions = count("noop", {}, 3)
    assert settled >= 3
    assert instructions > 0
