#!/usr/bin/python
"""Ansible module: pack each lane's folder, with the node's diagnostics, for the fetch."""

from __future__ import annotations

DOCUMENTATION = r"""
module: flagci_collect
short_description: Pack each lane's results folder with the node's diagnostics
description:
  - For every lane, makes sure its folder exists (even when nothing ran), adds the SMI
    snapshot (smi.txt), the preflight verdict (preflight.json) and the inspect output of
    the lane's image (image-inspect.json), and packs the folder as C(<folder>.tgz).
    Returns the archives to fetch. Does nothing in check mode.
options:
  run_dir:
    description: The run's folder on the node; each lane's folder is C(<run_dir>/<lane>).
    type: path
    required: true
  images:
    description: Lane name to the lane's image.
    type: dict
    required: true
  smi:
    description: SMI snapshot command (argv); empty for none.
    type: list
    elements: str
    default: []
  preflight:
    description: The preflight verdict; omitted when preflight did not judge.
    type: dict
author: flagci
"""

import json
import os
import tarfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.flagci_node import docker, run, write

# Seconds the SMI snapshot and the image inspection may take.
COMMAND_TIMEOUT_S = 120


def main():
    module = AnsibleModule(
        argument_spec={
            "run_dir": {"type": "path", "required": True},
            "images": {"type": "dict", "required": True},
            "smi": {"type": "list", "elements": "str", "default": []},
            "preflight": {"type": "dict"},
        },
        supports_check_mode=True,
    )
    if module.check_mode:
        module.exit_json(changed=False, archives={})
    smi = None
    if module.params["smi"]:
        _, out, err = run(module.params["smi"], timeout=COMMAND_TIMEOUT_S)
        smi = out + err
    archives = {}
    for lane, image in module.params["images"].items():
        folder = os.path.join(module.params["run_dir"], lane)
        os.makedirs(folder, mode=0o755, exist_ok=True)
        if smi is not None:
            write(os.path.join(folder, "smi.txt"), smi + "\n")
        if module.params["preflight"] is not None:
            write(os.path.join(folder, "preflight.json"), json.dumps(module.params["preflight"]))
        rc, out, _ = docker("image", "inspect", image, timeout=COMMAND_TIMEOUT_S)
        write(os.path.join(folder, "image-inspect.json"), (out if rc == 0 else "[]") + "\n")
        archive = f"{folder}.tgz"
        with tarfile.open(f"{archive}.part", "w:gz") as tar:
            tar.add(folder, arcname=".")
        os.replace(f"{archive}.part", archive)
        archives[lane] = archive
    module.exit_json(changed=True, archives=archives)


if __name__ == "__main__":
    main()
