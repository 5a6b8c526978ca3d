"""The lane matrix: every vendor stack's pins, targets and tests, parsed once."""
