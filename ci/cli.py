"""``flagci``: the command line. Parses argv, calls the library, maps errors to exit codes.

Each command group lives in its own module under ``ci/commands/`` and registers its
sub-parsers through ``register(subparsers)``; this module only dispatches.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from ci.commands import COMMAND_MODULES
from ci.errors import FlagCIError

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flagci",
        description="Nightly CI for FlagTree's per-vendor Triton compilers.",
    )
    parser.add_argument(
        "--lanes-file",
        default=None,
        help="lane matrix to use instead of the one shipped in the package",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except FlagCIError as err:
        print(f"flagci: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("flagci: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
