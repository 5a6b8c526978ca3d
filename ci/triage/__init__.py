"""Failure triage on the controller side: version bisection.

Only the standard library and the controller's own modules are imported here; the parts
that must run inside a lane environment (fallback probe, reproducer bundle) live in
``ci/smoke/`` and import nothing but the standard library and triton.
"""
