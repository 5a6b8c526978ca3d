"""Foundations every step uses: errors, the subprocess helper, progress, tables, atomic writes."""
