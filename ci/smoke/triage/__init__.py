"""Triage where a compile failed: signatures, bundles, the named pass, probes, a drafted report."""
