"""Error hierarchy of the controller.

The library raises these; only ``ci.cli.main`` turns them into a message and an exit
code. Each kind has its own exit code so that schedulers can tell a broken lane file
from an unreachable node from a red test.
"""

from __future__ import annotations


class FlagCIError(Exception):
    """Base of every error the controller raises on purpose."""

    exit_code = 1


class ConfigError(FlagCIError):
    """A data file (lane matrix, inventory, ledger) is malformed."""

    exit_code = 2


class UsageError(FlagCIError):
    """The command line asks for something that does not exist."""

    exit_code = 3


class EnvironmentSetupError(FlagCIError):
    """A lane environment (venv, image, wheelhouse) could not be prepared."""

    exit_code = 4


class InfrastructureError(FlagCIError):
    """A node, SSH, Docker or the network failed: not the compiler's fault."""

    exit_code = 5


class ReportError(FlagCIError):
    """A run record (JUnit, artifacts) is missing, hostile or malformed."""

    exit_code = 6


class TestsFailedError(FlagCIError):
    """The run completed and some smoke tests failed."""

    __test__ = False  # not a pytest test class
    exit_code = 10


class HistoryError(FlagCIError):
    """The run history database is unusable, or a run conflicts with one already stored."""

    exit_code = 7
