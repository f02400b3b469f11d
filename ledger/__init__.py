"""A general double-entry ledger: immutable, idempotent, limit-enforcing and hash-chained.

It knows nothing about cards: the casino's vocabulary lives in `ledger.chart` as plain
account specifications, and everything else is accounts, transfers and entries.
"""
