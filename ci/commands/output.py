"""What listing commands share: ``--json`` and printing a JSON document."""

from __future__ import annotations

import argparse
import json


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document instead")


def print_json(document: object) -> None:
    print(json.dumps(document, indent=2, sort_keys=False, default=str))
