"""The verifier owns its problem codes, each belonging to one of its checks, so that a report
can group them by check and a new code cannot go unnoticed."""

from ledger.report import CHECK_OF, LedgerCheck, ProblemCode, codes_of


def test_every_problem_code_belongs_to_a_check() -> None:
    assert set(CHECK_OF) == set(ProblemCode)


def test_the_checks_share_out_the_codes_without_overlap() -> None:
    groups = [codes_of(check) for check in LedgerCheck]
    assert all(groups)
    assert sum(len(group) for group in groups) == len(ProblemCode)
    assert frozenset().union(*groups) == set(ProblemCode)
