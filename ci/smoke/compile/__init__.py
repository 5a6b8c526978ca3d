"""Talking to the installed Triton: its API across releases, the stack's facts, the compiles."""
