"""Nonce continuity: each seed pair's hands have exactly the nonces 0..next_nonce-1.

What catches a hand deleted together with its ledger transactions after the chain was
re-hashed over the hole and the balances recomputed: nothing in the ledger is then wrong,
but the player's seed pair has a nonce no hand used.
"""

from collections.abc import Iterable, Iterator

from sqlalchemy import Connection, bindparam, distinct, func, or_, select

from api.db.models import hands_table, seed_pairs_table
from api.domain.audit.results import CasinoCode, CasinoProblem, NonceCheck

# Problems named per seed pair before the rest are summed up in one: a wiped-out pair must
# not make the report as long as the hands it lost.
MAX_NONCE_PROBLEMS_PER_PAIR = 50

_p = seed_pairs_table.c
_hand_count = func.count(hands_table.c.id)
# One GROUP BY over the hands (served by the unique (seed_pair_id, nonce) index): the seed
# pairs whose hands are not exactly the nonces 0..next_nonce-1. A pair without hands has
# NULL min/max, which the HAVING leaves alone when next_nonce is 0 too.
_BROKEN_PAIRS = (
    select(_p.id, _p.next_nonce)
    .select_from(seed_pairs_table.outerjoin(hands_table, hands_table.c.seed_pair_id == _p.id))
    .group_by(_p.id, _p.next_nonce)
    .having(
        or_(
            _hand_count != _p.next_nonce,
            func.count(distinct(hands_table.c.nonce)) != _hand_count,
            func.min(hands_table.c.nonce) != 0,
            func.max(hands_table.c.nonce) != _p.next_nonce - 1,
        )
    )
    .order_by(_p.id)
)
_PAIR_NONCES = (
    select(hands_table.c.nonce, hands_table.c.id)
    .where(hands_table.c.seed_pair_id == bindparam("seed_pair_id"))
    .order_by(hands_table.c.nonce, hands_table.c.id)
    .execution_options(yield_per=2000)  # streamed: a broken pair may have many hands
)
_ORPHAN_HANDS = (
    select(hands_table.c.id, hands_table.c.seed_pair_id)
    .select_from(hands_table.outerjoin(seed_pairs_table, _p.id == hands_table.c.seed_pair_id))
    .where(_p.id.is_(None))
    .order_by(hands_table.c.id)
)


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


def _pair_problems(
    pair_id: int, next_nonce: int, nonces: Iterable[tuple[int, int]]
) -> Iterator[CasinoProblem]:
    """Walk one seed pair's (nonce, hand id) in nonce order: every gap in 0..next_nonce-1,
    every nonce used twice, every nonce outside the range. Streams: memory stays flat."""
    expected = 0  # the next nonce a hand should have
    previous: int | None = None
    for nonce, hand_id in nonces:
        if nonce < 0 or nonce >= next_nonce:
            yield CasinoProblem(
                "hands",
                hand_id,
                CasinoCode.NONCE_OUT_OF_RANGE,
                f"hand {hand_id} has nonce {nonce}, outside 0..{next_nonce - 1} "
                f"of seed pair {pair_id} (next_nonce {next_nonce})",
            )
            continue
        if nonce == previous:
            yield CasinoProblem(
                "hands",
                hand_id,
                CasinoCode.NONCE_DUPLICATE,
                f"hand {hand_id} repeats nonce {nonce} of seed pair {pair_id}",
            )
            continue
        if nonce > expected:
            yield _gap(pair_id, next_nonce, expected, nonce - 1)
        previous, expected = nonce, nonce + 1
    if expected < next_nonce:
        yield _gap(pair_id, next_nonce, expected, next_nonce - 1)


def _gap(pair_id: int, next_nonce: int, first: int, last: int) -> CasinoProblem:
    count = last - first + 1
    return CasinoProblem(
        "seed_pairs",
        pair_id,
        CasinoCode.NONCE_GAP,
        f"seed pair {pair_id}: no hand has nonce{'s' if count > 1 else ''} "
        f"{_span(first, last)} (next_nonce {next_nonce}): "
        f"{'hands' if count > 1 else 'a hand'} deleted, or next_nonce altered",
    )


def check_nonce_continuity(connection: Connection) -> NonceCheck:
    """Per seed pair, its hands' nonces are exactly 0..next_nonce-1; and every hand's seed
    pair exists.

    One grouped query finds the broken pairs; only those are read nonce by nonce.
    """
    pairs_checked = int(
        connection.execute(select(func.count()).select_from(seed_pairs_table)).scalar_one()
    )
    problems: list[CasinoProblem] = []
    for pair_id, next_nonce in connection.execute(_BROKEN_PAIRS).all():
        nonces = (
            (int(nonce), int(hand_id))
            for nonce, hand_id in connection.execute(_PAIR_NONCES, {"seed_pair_id": pair_id})
        )
        problems.extend(
            _capped(int(pair_id), _pair_problems(int(pair_id), int(next_nonce), nonces))
        )
    problems.extend(
        CasinoProblem(
            "hands",
            int(hand_id),
            CasinoCode.UNKNOWN_SEED_PAIR,
            f"hand {hand_id} names seed pair {pair_id}, which does not exist",
        )
        for hand_id, pair_id in connection.execute(_ORPHAN_HANDS)
    )
    return NonceCheck(pairs_checked, tuple(problems))


def _capped(pair_id: int, found: Iterable[CasinoProblem]) -> Iterator[CasinoProblem]:
    """The first `MAX_NONCE_PROBLEMS_PER_PAIR` problems of a pair, then one counting the rest."""
    more = 0
    for named, problem in enumerate(found):
        if named < MAX_NONCE_PROBLEMS_PER_PAIR:
            yield problem
        else:
            more += 1
    if more:
        yield CasinoProblem(
            "seed_pairs",
            pair_id,
            CasinoCode.NONCE_GAP,
            f"seed pair {pair_id}: {more} more nonce problems not listed",
        )
