"""Across runs: the history store, the verdicts per (lane, test), the known-issue ledger."""
