#!/usr/bin/python
"""Ansible module: the node's health probes in one round trip (read-only, so it runs in
check mode too); the judging is the controller's (filter ``flagci_health_verdict``)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: flagci_probes
short_description: Run flagci's node health probes at once
description:
  - Creates the work folder (mode 0755; not in check mode), then runs every probe command
    and returns each one's exit status and output, in the shape of a registered loop.
options:
  probes:
    description: Probe name to command (argv).
    type: dict
    required: true
  workdir:
    description: The node's work folder (absolute).
    type: path
    required: true
author: flagci
"""

import os
import subprocess

from ansible.module_utils.basic import AnsibleModule

PROBE_TIMEOUT_S = 60


def run(argv):
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False
        )
    except FileNotFoundError as err:
        return {"rc": 127, "stdout": "", "stderr": str(err)}
    except subprocess.TimeoutExpired:
        return {"rc": 124, "stdout": "", "stderr": f"timed out after {PROBE_TIMEOUT_S} s"}
    return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def main():
    module = AnsibleModule(
        argument_spec={
            "probes": {"type": "dict", "required": True},
            "workdir": {"type": "path", "required": True},
        },
        supports_check_mode=True,
    )
    workdir = module.params["workdir"]
    changed = not os.path.isdir(workdir)
    if changed and not module.check_mode:
        os.makedirs(workdir, mode=0o755, exist_ok=True)
    results = [
        {"item": {"key": name, "value": argv}, **run([str(a) for a in argv])}
        for name, argv in module.params["probes"].items()
    ]
    module.exit_json(changed=changed, results=results)


if __name__ == "__main__":
    main()
