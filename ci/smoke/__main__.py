"""``python -m ci.smoke --results DIR``: run the smoke suite, JUnit and artifacts into DIR.

The same entry point runs in a local lane venv, in a lane image and on a node. Extra
arguments after ``--`` go to pytest (``-n 2``, ``-k attention`` ...). Exit status is
pytest's: 0 all passed, 1 some tests failed, anything else means the run itself broke.
"""

import argparse
import os
import sys
from pathlib import Path
from typing import List, Optional

import pytest

from ci.smoke.contract import lane as lanefile
from ci.smoke.contract import records


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ci.smoke")
    parser.add_argument(
        "--results", required=True, type=Path, help="folder for junit.xml and artifacts/"
    )
    parser.add_argument(
        "--lane-file", type=Path, help="lane JSON (default: $FLAGCI_LANE_FILE or the environment's)"
    )
    parser.add_argument("--node", help="node name recorded in every testcase")
    parser.add_argument("--model-path", help="the vLLM test's model folder on this node")
    parser.add_argument(
        "--tensor-parallel-size", type=int, help="the vLLM test's tensor parallel size here"
    )
    parser.add_argument(
        "pytest_args", nargs=argparse.REMAINDER, help="-- then arguments for pytest"
    )
    args = parser.parse_args(argv)
    extra = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args

    # The node's own values travel in the environment (the suite runs in pytest's process).
    if args.lane_file:
        os.environ[lanefile.LANE_FILE_ENV] = str(args.lane_file.resolve())
    if args.node:
        os.environ[lanefile.NODE_ENV] = args.node
    if args.model_path:
        os.environ[lanefile.MODEL_PATH_ENV] = args.model_path
    if args.tensor_parallel_size:
        os.environ[lanefile.TENSOR_PARALLEL_SIZE_ENV] = str(args.tensor_parallel_size)
    lane = lanefile.load_context()
    results = args.results.resolve()
    results.mkdir(parents=True, exist_ok=True)
    os.environ["FLAGCI_ARTIFACTS"] = str(results / records.ARTIFACTS_DIR)
    if lane.execution == "interpreter":
        os.environ["TRITON_INTERPRET"] = "1"
    # Run from the results folder: pytest must not pick up conftest files of whatever
    # project the caller happens to stand in.
    os.chdir(results)
    ini = Path(__file__).with_name("pytest.ini")
    pytest_args = [
        "-c",
        str(ini),
        "--rootdir",
        str(ini.parent),
        "--pyargs",
        "ci.smoke",
        f"--junitxml={results / records.JUNIT_NAME}",
        "-o",
        f"junit_suite_name={lane.lane}",
        *extra,
    ]
    return int(pytest.main(pytest_args))


if __name__ == "__main__":
    sys.exit(main())
