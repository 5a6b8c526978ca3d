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

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.flagci_node import run

PROBE_TIMEOUT_S = 60


def probe(argv):
    rc, out, err = run(argv, timeout=PROBE_TIMEOUT_S)
    return {"rc": rc, "stdout": out, "stderr": err}


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
        {"item": {"key": name, "value": argv}, **probe([str(a) for a in argv])}
        for name, argv in module.params["probes"].items()
    ]
    module.exit_json(changed=changed, results=results)


if __name__ == "__main__":
    main()
