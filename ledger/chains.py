"""The ledger's hash chains: several independent chains, so that postings do not queue on one row.

A single chain needs a single head row, and every posting holds it from its inserts to
its commit: however many accounts are touched, postings are serialised there. The
ledger therefore keeps CHAINS chains side by side. Each has its own head row and its own
links (a transaction's `prev_hash` is the hash of the previous transaction *in its
chain*), so postings on different chains never wait for each other, while a deletion,
an insertion or an edit anywhere still breaks a link or a head.

Sequence numbers stay unique across the whole ledger without a shared counter: chain `c`
only uses numbers congruent to `c` modulo CHAINS, each the next such number above its
head. A caller picks a chain by a partition key (`chain_for`): the casino uses the
player, so one player's money always moves on one chain, in posting order.
"""

from __future__ import annotations

import zlib

# Fixed by migration 0004, which creates one head row per chain: changing it takes a
# migration that adds the rows.
CHAINS = 16


def chain_for(key: str) -> int:
    """The chain (1..CHAINS) of a partition key: stable on every machine and every run
    (CRC-32, not Python's salted `hash`), spreading sequential ids evenly."""
    return zlib.crc32(key.encode()) % CHAINS + 1


def next_seq(chain: int, head_seq: int) -> int:
    """The chain's next sequence number: the first above its head congruent to `chain`.

    Chain 1 of a ledger older than the chains carries on above its last number; every
    other chain's head starts there too (migration 0004), so no two chains can meet.
    """
    return head_seq + 1 + (chain - head_seq - 1) % CHAINS


def follows(chain: int, previous: int, seq: int) -> bool:
    """Whether `seq` is the link right after `previous` in `chain`: its next number, or, in
    chain 1, the next integer too, as ledgers numbered it before there were several chains."""
    return seq == next_seq(chain, previous) or (chain == 1 and seq == previous + 1)


def is_chain(chain: int) -> bool:
    return isinstance(chain, int) and not isinstance(chain, bool) and 1 <= chain <= CHAINS
