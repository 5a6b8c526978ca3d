#!/usr/bin/python
"""Ansible module: remove a run's lane containers and its folder on the node."""

from __future__ import annotations

DOCUMENTATION = r"""
module: flagci_cleanup
short_description: Remove a run's lane containers and folder from the node
options:
  labels:
    description: Label name to value of the run's containers on this node.
    type: dict
    required: true
  folder:
    description: The run's folder on the node.
    type: path
    required: true
author: flagci
"""

import os
import shutil

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.flagci_node import docker


def main():
    module = AnsibleModule(
        argument_spec={
            "labels": {"type": "dict", "required": True},
            "folder": {"type": "path", "required": True},
        },
        supports_check_mode=True,
    )
    filters = [a for k, v in module.params["labels"].items() for a in ("--filter", f"label={k}={v}")]
    containers = docker("ps", "--all", "--quiet", *filters)[1].split()
    folder = module.params["folder"]
    changed = bool(containers) or os.path.exists(folder)
    if not module.check_mode:
        if containers:
            docker("rm", "--force", *containers)
        shutil.rmtree(folder, ignore_errors=True)
    module.exit_json(changed=changed, containers=containers)


if __name__ == "__main__":
    main()
