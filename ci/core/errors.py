"""Error hierarchy of the controller.

The library raises these; only ``ci.cli.main`` turns them into a message and an exit
code. Each kind has its own exit code so that schedulers can tell a broken lane file
from an unreachable node from a red test. 2 is left to argparse (a usage error on the
command line itself); 130 is an interrupt.

A run whose failures are all known issues exits 0. The verdict codes (10 to 14) say what
the run found that nobody knew yet; when it found several kinds, the lowest code wins, so
the most urgent news is the one a scheduler sees. ``flagci --help`` lists every code from
these classes.
"""

from __future__ import annotations


class FlagCIError(Exception):
    """An error of no other kind; the base of every error the controller raises on purpose."""

    exit_code = 1


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


class HistoryError(FlagCIError):
    """The run history database is unusable, or a run conflicts with one already stored."""

    exit_code = 7


class ConfigError(FlagCIError):
    """A data file (lane matrix, inventory, ledger) is malformed."""

    exit_code = 8


class NotifyError(FlagCIError):
    """A webhook or the issue tracker refused, or could not be reached."""

    exit_code = 9


class TestsFailedError(FlagCIError):
    """The run completed and found something not yet known (base of the verdict errors)."""

    __test__ = False  # not a pytest test class
    exit_code = 10


class RegressionError(TestsFailedError):
    """A FlagTree lane fails a test that its baseline lane passes in the same run."""

    exit_code = 10


class NewFailureError(TestsFailedError):
    """A test failed that passed in its lane's previous run."""

    exit_code = 11


class UnknownFailureError(TestsFailedError):
    """A test keeps failing and the known-issue ledger does not know why."""

    exit_code = 12


class FixNotVerifiedError(TestsFailedError):
    """A vendor claimed a fix in a version whose lane still fails the issue's tests."""

    exit_code = 13


class SlowerError(TestsFailedError):
    """A perf test got slower than its history's own noise (SLOW)."""

    exit_code = 14


class LaneProblemError(TestsFailedError):
    """A lane failed for reasons that are not its compiler's: the harness, or a tool the node
    lacks (failure kinds harness_error, toolchain)."""

    exit_code = 15
