"""``flagci``: the command line. Parses argv, calls the library, maps errors to exit codes.

Each command group lives in its own module under ``ci/commands/`` and registers its
sub-parsers through ``register(subparsers)``; this module only dispatches, sets up logging
(``-v``/``-q``) and ends quietly when the reader of its output goes away (``| head``).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata

from ci.commands import COMMAND_MODULES
from ci.core import reporter
from ci.core.errors import FlagCIError, TestsFailedError

Handler = Callable[[argparse.Namespace, Mapping[str, str]], int]

# 141 = 128 + SIGPIPE, what a shell reports for a program whose reader closed the pipe.
CLOSED_PIPE_EXIT = 141
INTERRUPTED_EXIT = 130


def _error_kinds(base: type[FlagCIError]) -> list[type[FlagCIError]]:
    kinds = [base]
    for sub in base.__subclasses__():
        kinds += _error_kinds(sub)
    return kinds


def exit_codes() -> str:
    """The epilog of ``--help``: every exit code, from the error classes themselves."""
    by_code: dict[int, str] = {0: "done; for `run`: every failure is a known issue"}
    for kind in _error_kinds(FlagCIError):
        if kind is TestsFailedError:
            continue  # the verdict errors' base, never raised itself
        # A base class names its code; a subclass that shares it is a case of it.
        by_code.setdefault(kind.exit_code, (kind.__doc__ or "").strip().splitlines()[0])
    by_code[2] = "the command line itself is wrong (argparse)"
    by_code[INTERRUPTED_EXIT] = "interrupted"
    by_code[CLOSED_PIPE_EXIT] = "the reader of the output went away (| head)"
    lines = [f"  {code:<4}{text}" for code, text in sorted(by_code.items())]
    return "exit codes:\n" + "\n".join(lines)


def _version() -> str:
    try:
        return metadata.version("flagci")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flagci",
        description="Nightly CI for FlagTree's per-vendor Triton compilers.",
        epilog=exit_codes(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log output (-vv: debug)"
    )
    parser.add_argument("-q", "--quiet", action="count", default=0, help="only warnings and errors")
    parser.add_argument(
        "--lanes-file",
        default=None,
        help="lane matrix to use instead of the one shipped in the package",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(subparsers)
    return parser


def _set_up_logging(verbose: int, quiet: int) -> None:
    level = logging.INFO - 10 * verbose + 10 * quiet
    logging.basicConfig(
        level=max(logging.DEBUG, min(level, logging.ERROR)),
        format="flagci: %(levelname)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )


def _silence_stdout() -> None:
    """After a closed pipe: point stdout at /dev/null so flushing at exit raises nothing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (captured)
        pass
    finally:
        os.close(devnull)


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the command ``argv`` names with ``environ`` (default: this process's) as its
    settings; return its exit status. The command reports through the reporter installed,
    else through the one ``environ`` calls for (``ci.core.reporter``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _set_up_logging(args.verbose, args.quiet)
    handler: Handler = args.handler
    settings = os.environ if environ is None else environ
    embedder = reporter.installed()
    reporter.use(embedder if embedder is not None else reporter.for_environment(settings))
    try:
        code = handler(args, settings)
        sys.stdout.flush()
        return code
    except FlagCIError as err:
        print(f"flagci: error: {err}", file=sys.stderr)
        return err.exit_code
    except BrokenPipeError:
        _silence_stdout()
        return CLOSED_PIPE_EXIT
    except KeyboardInterrupt:
        print("flagci: interrupted", file=sys.stderr)
        return INTERRUPTED_EXIT
    finally:
        reporter.use(embedder)


if __name__ == "__main__":
    sys.exit(main())
