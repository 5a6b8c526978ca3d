#!/usr/bin/python
"""Ansible module: is the lane's image on the node, under its tag, with its content hash?"""

from __future__ import annotations

DOCUMENTATION = r"""
module: flagci_image
short_description: Find a lane image on the node by its content hash
description:
  - Looks the image up under its tag; else finds an image carrying the lane's labels and
    tags it (changed). Returns C(present) and the image's inspect output. With
    C(required), a missing image fails the task.
options:
  image:
    description: The lane image's tag.
    type: str
    required: true
  labels:
    description: Label name to value that the image must carry (lane, content hash).
    type: dict
    required: true
  required:
    description: Fail when the image is not found.
    type: bool
    default: false
author: flagci
"""

import json

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.flagci_node import docker


def inspect(ref):
    rc, out, err = docker("image", "inspect", ref)
    if rc != 0:
        return None, err.strip()
    return json.loads(out)[0], ""


def carries(info, labels):
    found = (info.get("Config") or {}).get("Labels") or {}
    return all(found.get(key) == value for key, value in labels.items())


def main():
    module = AnsibleModule(
        argument_spec={
            "image": {"type": "str", "required": True},
            "labels": {"type": "dict", "required": True},
            "required": {"type": "bool", "default": False},
        },
        supports_check_mode=True,
    )
    image, labels = module.params["image"], module.params["labels"]
    info, error = inspect(image)
    if info is not None and carries(info, labels):
        module.exit_json(changed=False, present=True, inspect=[info])
    filters = [arg for key, value in labels.items() for arg in ("--filter", f"label={key}={value}")]
    rc, out, err = docker("image", "ls", "--quiet", "--no-trunc", *filters)
    candidates = out.split() if rc == 0 else []
    if candidates:
        if module.check_mode:
            module.exit_json(changed=True, present=True, inspect=[])
        rc, _, err = docker("tag", candidates[0], image)
        if rc != 0:
            module.fail_json(msg=f"deploy: tagging {candidates[0]} as {image}: {err.strip()}")
        info, error = inspect(image)
        module.exit_json(changed=True, present=True, inspect=[info])
    if module.params["required"]:
        module.fail_json(
            msg=f"deploy: {image} is not on the node with labels {labels}: {error or err}".strip()
        )
    module.exit_json(changed=False, present=False, inspect=[])


if __name__ == "__main__":
    main()
