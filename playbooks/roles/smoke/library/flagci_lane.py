#!/usr/bin/python
"""Ansible module: start one lane's smoke suite in its container, detached.

The container is the job: it runs on the node whatever happens to the SSH connection that
started it, and it ends itself at the lane timeout (coreutils ``timeout`` is its first
process). ``flagci_lane_status`` looks at it until it has exited.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: flagci_lane
short_description: Start one lane's smoke suite in its container, detached
description:
  - Lays out the lane's results folder (mode 0755) with the lane file, removes a container
    and the status of an earlier attempt, and starts the lane container detached under
    C(timeout), which ends the suite at the lane timeout (exit status 124). When the
    container cannot start, returns why as C(start_error) (C(flagci_lane_status), the one
    writer of status.json, records it). Never fails on the suite's account.
  - Images that run as an unprivileged user run as the connecting user instead (C(as_caller)),
    so the results folder needs no wider modes.
options:
  folder: {description: The lane's results folder (mounted as /results)., type: path, required: true}
  container: {description: The container's name., type: str, required: true}
  image: {description: The lane image., type: str, required: true}
  docker_args: {description: C(docker run) options (labels, mounts, devices, env) as ci/run/container.py renders them., type: list, elements: str, required: true}
  command: {description: The smoke suite's command line in the container., type: list, elements: str, required: true}
  lane_file: {description: "The lane file's text, written as given (mounted at /etc/flagci/lane.json).", type: str, required: true}
  timeout_s: {description: Seconds the lane may run., type: int, required: true}
  as_caller: {description: Run the container as the connecting user., type: bool, default: false}
  model_path: {description: The vLLM test's model folder; mounted read-only when the node has it., type: path}
author: flagci
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.flagci_node import docker, write

# After the lane timeout's SIGTERM, the suite gets this long to end before SIGKILL.
KILL_AFTER_S = 60


def main():
    module = AnsibleModule(
        argument_spec={
            "folder": {"type": "path", "required": True},
            "container": {"type": "str", "required": True},
            "image": {"type": "str", "required": True},
            "docker_args": {"type": "list", "elements": "str", "required": True},
            "command": {"type": "list", "elements": "str", "required": True},
            "lane_file": {"type": "str", "required": True},
            "timeout_s": {"type": "int", "required": True},
            "as_caller": {"type": "bool", "default": False},
            "model_path": {"type": "path"},
            "capture_cache": {"type": "path", "required": True},
        },
        supports_check_mode=True,
    )
    p = module.params
    if module.check_mode:
        module.exit_json(changed=True, msg=f"would run {p['image']} as {p['container']}")
    folder, name = p["folder"], p["container"]
    os.makedirs(folder, mode=0o755, exist_ok=True)
    os.chmod(folder, 0o755)
    # Before docker run, as this user: docker would make a missing one as root.
    os.makedirs(p["capture_cache"], mode=0o755, exist_ok=True)
    # An earlier attempt's outcome must not pass for this one's.
    for stale in ("status.json", "container.log"):
        if os.path.exists(os.path.join(folder, stale)):
            os.remove(os.path.join(folder, stale))
    write(os.path.join(folder, "lane.json"), p["lane_file"])
    docker("rm", "--force", name)
    # The caller's user id is known here; its home and /tmp are in the options (as_caller).
    user = ["--user", f"{os.getuid()}:{os.getgid()}"] if p["as_caller"] else []
    model = p["model_path"]
    mount = ["--volume", f"{model}:{model}:ro"] if model and os.path.isdir(model) else []
    limit = ["timeout", f"--kill-after={KILL_AFTER_S}", str(p["timeout_s"])]
    rc, out, err = docker("run", "--detach", "--name", name, *user, *mount, *p["docker_args"],
                          p["image"], *limit, *p["command"])  # fmt: skip
    error = f"docker run: {err.strip()}" if rc != 0 else ""
    module.exit_json(changed=True, container=out.strip(), start_error=error)


if __name__ == "__main__":
    main()
