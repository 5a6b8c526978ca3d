"""The files a lane leaves behind, by name, and the two records with an owner: failure.json
(one updater, here) and status.json (its shape, here; written on the node).

A lane's folder (``results/<run-id>/lanes/<node>__<lane>/`` on the controller)::

    junit.xml                       the suite's JUnit (``python -m ci.smoke``)
    lane.json                       the lane file it ran with (nodes; see ``contract.lane``)
    status.json, container.log      how the lane's container ended (nodes; see STATUS_KEYS)
    artifacts/<test>/               one folder per test that left files:
        failure.json                a failed compile: job, outcome, then what triage added
        compile.log, ir/, worker-stderr.log
        capture-<corpus>.json       real kernels: what the capture found
        pass-replay/                the replay with IR dumps that named a pass
        bundle/                     the reproducer: replay.py, spec.json, stack.json,
                                    failure.txt, pass-input.mlir, report.md

Standard library only: part of the lane package; the controller imports it too.
"""

import json
from pathlib import Path
from typing import Any, Dict, Mapping, Tuple

from ci.smoke import files

# --------------------------------------------------------------------------------------
# Names
JUNIT_NAME = "junit.xml"
ARTIFACTS_DIR = "artifacts"
LANE_FILE_NAME = "lane.json"
STATUS_NAME = "status.json"
CONTAINER_LOG_NAME = "container.log"
FAILURE_NAME = "failure.json"
COMPILE_LOG_NAME = "compile.log"
# The worker's own stderr around a job that it did not answer.
WORKER_LOG_NAME = "worker-stderr.log"
PASS_REPLAY_NAME = "pass-replay"
DUMP_LOG_NAME = "ir-dumps.log"
BUNDLE_NAME = "bundle"
# Inside the bundle:
REPLAY_NAME = "replay.py"
SPEC_NAME = "spec.json"
STACK_NAME = "stack.json"
FAILURE_TEXT_NAME = "failure.txt"
PASS_INPUT_NAME = "pass-input.mlir"
REPORT_NAME = "report.md"


def capture_name(corpus: str) -> str:
    """The real-kernel capture's document, kept in the test's artifacts."""
    return f"capture-{corpus}.json"


# --------------------------------------------------------------------------------------
# failure.json: a JSON object; the compile worker starts it (job, outcome), triage adds to it.
FAILURE_JOB = "job"
FAILURE_OUTCOME = "outcome"
FAILURE_REPLAY = "replay"  # the pass a replay with IR dumps named (ci.smoke.triage.passdump)
FAILURE_HINT = "hint"  # the fallback probe's hint (ci.smoke.triage.probe)
FAILURE_PROBE = "probe"  # the probe's attempts


def read_failure(path: Path) -> Dict[str, Any]:
    """A failure.json's object ({} where there is none); ValueError when it is not one."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def update_failure(path: Path, fields: Mapping[str, Any], *, fresh: bool = False) -> None:
    """The one writer of failure.json: set ``fields`` (``fresh``: drop what was there),
    written whole, then renamed."""
    data = {} if fresh else read_failure(path)
    data.update(fields)
    files.write_text(path, json.dumps(data, indent=2, default=str))


# --------------------------------------------------------------------------------------
# status.json: how a lane's container ended on a node. Written by one node module
# (playbooks/roles/smoke/library/flagci_lane_status.py: Ansible modules cannot import
# ci/), read by ci.run.remote.lane_problem; tests/unit/test_lane_contract.py holds the
# module's keys against these. A JSON object:
STATUS_LANE = "lane"  # str
STATUS_NODE = "node"  # str
STATUS_IMAGE = "image"  # str
STATUS_TIMEOUT_S = "timeout_s"  # int: the lane timeout
STATUS_EXIT_CODE = "exit_code"  # int, or null when the container's end is unknown
STATUS_TIMED_OUT = "timed_out"  # bool: the lane timeout ended the suite (exit status 124)
STATUS_WAIT_ERROR = "wait_error"  # str: why the end is unknown ("" when it is known)
STATUS_KEYS: Tuple[str, ...] = (
    STATUS_LANE,
    STATUS_NODE,
    STATUS_IMAGE,
    STATUS_TIMEOUT_S,
    STATUS_EXIT_CODE,
    STATUS_TIMED_OUT,
    STATUS_WAIT_ERROR,
)
