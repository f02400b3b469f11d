"""The audit's results presented: grouped by check, the engine's hand as the audit shows it,
the command line's document and the API's body built from the same result, and the service
modules free of the HTTP layer."""

import subprocess
import sys

import pytest

from api.domain.audit.integrity import verifier_sections
from api.domain.audit.results import Difference
from api.domain.audit.schemas import AuditDifference, DerivedHand
from casino.fairness import HandSeeds
from casino.hand import Action, HandStatus, deal, play
from casino.rules import GameRules
from ledger.report import CHECK_OF, LedgerCheck, LedgerProblem, LedgerReport, ProblemCode

SERVER_SEED = "ab" * 32


def test_every_verifier_problem_is_reported_under_its_own_check() -> None:
    problems = tuple(LedgerProblem("ledger_transactions", 1, code, "x") for code in ProblemCode)
    sections = verifier_sections(LedgerReport(problems, 1, 1, 1, {}, ()))
    assert sections.other_problems == ()
    reported = {
        LedgerCheck.HASH_CHAIN: sections.hash_chain.problems,
        LedgerCheck.TRIAL_BALANCE: sections.trial_balance.problems,
        LedgerCheck.STORED_BALANCES: sections.stored_balances.problems,
    }
    for problem in problems:
        assert problem in reported[CHECK_OF[problem.code]]
    assert sum(len(found) for found in reported.values()) == len(problems)


def _a_war() -> DerivedHand:
    rules = GameRules()
    for nonce in range(1000):
        seeds = HandSeeds(SERVER_SEED, "client", nonce)
        if deal(rules, seeds, 100).status is HandStatus.AWAITING_DECISION:
            return DerivedHand.of(play(rules, seeds, 100, 0, Action.WAR))
    raise AssertionError("no tie in 1000 hands")


def test_the_derived_hand_shows_every_card_and_the_raise_of_a_war() -> None:
    body = _a_war().model_dump(mode="json")
    assert body["decision"] == "war"
    assert body["raise"] == 100
    assert body["war"] is not None
    assert len(body["cards"]) == 2 + GameRules().burn_cards + 2


def test_a_difference_about_no_transaction_names_none() -> None:
    body = AuditDifference.model_validate(Difference("net", 5, 0), from_attributes=True)
    assert body.model_dump(mode="json") == {
        "field": "net",
        "recorded": 5,
        "derived": 0,
        "transaction_ids": None,
    }
    assert body.model_dump(mode="json", exclude_unset=True) == {
        "field": "net",
        "recorded": 5,
        "derived": 0,
    }


def test_a_difference_about_transactions_names_them_in_both() -> None:
    difference = Difference("ledger.stake.count", 2, 1, (7, 9))
    body = AuditDifference.model_validate(difference, from_attributes=True)
    assert body.model_dump(mode="json", exclude_unset=True)["transaction_ids"] == [7, 9]


def _loaded_by(module: str) -> set[str]:
    """The top-level packages importing `module` loads, in a fresh interpreter."""
    script = f"import sys, {module}; print(' '.join(sys.modules))"
    found = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return set(found.stdout.split())


@pytest.mark.parametrize(
    "module",
    ["reads", "replay", "checks", "results", "batch", "parallel", "nonces", "integrity"],
)
def test_the_audit_service_loads_neither_litestar_nor_pydantic(module: str) -> None:
    loaded = _loaded_by(f"api.domain.audit.{module}")
    assert not loaded & {"litestar", "pydantic", "api.http"}


def test_the_audit_schemas_load_no_database_layer() -> None:
    loaded = _loaded_by("api.domain.audit.schemas")
    assert not loaded & {"sqlalchemy", "litestar"}
