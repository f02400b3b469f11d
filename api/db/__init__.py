"""The service's own records (players, tables, seeds, hands, tokens, idempotency)."""
