#!/usr/bin/python
"""Ansible module: one short look at a lane container; once it has exited, its outcome.

Each look is its own SSH connection, so a dropped one costs a look, not the lane.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: flagci_lane_status
short_description: Look at a lane container and record its outcome once it has exited
description:
  - Returns C(finished=false) while the container runs. Once it has exited, keeps its
    output as container.log and writes status.json (exit status; C(timed_out) when the
    lane timeout ended it, exit status 124 of C(timeout)), and returns C(finished=true).
    A lane whose status.json exists (written by an earlier look) is finished; so is one
    whose container could not start (C(start_error)). The one writer of status.json, whose
    shape ci/smoke/contract/records.py documents (ci.run.remote reads it). Never fails on
    the suite's account.
options:
  folder: {description: The lane's results folder., type: path, required: true}
  container: {description: The container's name., type: str, required: true}
  status: {description: Fields of status.json (lane, node, image, timeout_s)., type: dict, required: true}
  start_error: {description: "Why C(flagci_lane) could not start the container (empty: it started).", type: str, default: ""}
author: flagci
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.flagci_node import TIMED_OUT, docker, write

RUNNING = ("created", "running", "restarting", "paused", "removing")


def status_record(given, exit_code, wait_error=""):
    """status.json: the role's fields (lane, node, image, timeout_s), then how it ended."""
    return {
        "lane": given["lane"],
        "node": given["node"],
        "image": given["image"],
        "timeout_s": given["timeout_s"],
        "exit_code": exit_code,
        "timed_out": exit_code == TIMED_OUT,
        "wait_error": wait_error,
    }


def main():
    module = AnsibleModule(
        argument_spec={
            "folder": {"type": "path", "required": True},
            "container": {"type": "str", "required": True},
            "status": {"type": "dict", "required": True},
            "start_error": {"type": "str", "default": ""},
        },
        supports_check_mode=True,
    )
    folder, name = module.params["folder"], module.params["container"]
    given = module.params["status"]
    status_file = os.path.join(folder, "status.json")
    if os.path.exists(status_file):
        with open(status_file, encoding="utf-8") as handle:
            module.exit_json(changed=False, finished=True, status=json.load(handle))
    if module.params["start_error"]:
        status = status_record(given, None, module.params["start_error"])
    else:
        rc, out, err = docker("container", "inspect", "--format", "{{json .State}}", name)
        if rc != 0:
            status = status_record(given, None, f"docker inspect: {err.strip()}")
        else:
            state = json.loads(out)
            if state.get("Status") in RUNNING:
                module.exit_json(changed=False, finished=False)
            status = status_record(given, int(state.get("ExitCode", -1)))
            if not module.check_mode:
                _, out, err = docker("logs", name)
                write(os.path.join(folder, "container.log"), out + err)
    if not module.check_mode:
        write(status_file, json.dumps(status, indent=2))
    module.exit_json(changed=True, finished=True, status=status)


if __name__ == "__main__":
    main()
