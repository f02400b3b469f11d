"""Units of work over a session: where `casino/` decides and `ledger/` records.

Each function runs inside the caller's transaction and never commits, so a request's
effects (hand, money, idempotency record) commit together or not at all.
"""
