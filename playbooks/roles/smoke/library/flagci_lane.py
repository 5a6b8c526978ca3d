#!/usr/bin/python
"""Ansible module: one lane's smoke suite in its container, from start to status.json.

Run as an async task: the module outlives the SSH connection that started it, so a dropped
connection costs one poll, not the lane.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: flagci_lane
short_description: Run one lane's smoke suite in its container and record how it ended
description:
  - Lays out the lane's results folder (mode 0755) with the lane file, removes a container
    left by an earlier attempt, starts the lane container detached, waits for it up to the
    lane timeout (killing it past that), keeps its output as container.log and writes
    status.json. A test failure, a crash or a timeout never fails the task.
  - Images that run as an unprivileged user run as the connecting user instead (C(as_caller)),
    so the results folder needs no wider modes.
options:
  folder: {description: The lane's results folder (mounted as /results)., type: path, required: true}
  container: {description: The container's name., type: str, required: true}
  image: {description: The lane image., type: str, required: true}
  docker_args: {description: C(docker run) options (labels, mounts, devices, env)., type: list, elements: str, required: true}
  command: {description: The smoke suite's command line in the container., type: list, elements: str, required: true}
  lane_file: {description: The lane file's content (mounted at /etc/flagci/lane.json)., type: dict, required: true}
  status: {description: Fields copied into status.json (lane, node, image)., type: dict, required: true}
  timeout_s: {description: Seconds the lane may run., type: int, required: true}
  as_caller: {description: Run the container as the connecting user., type: bool, default: false}
  model_path: {description: The vLLM test's model folder; mounted read-only when the node has it., type: path}
author: flagci
"""

import json
import os
import subprocess

from ansible.module_utils.basic import AnsibleModule


def docker(*args, timeout=None):
    return subprocess.run(
        ["docker", *args], capture_output=True, text=True, check=False, timeout=timeout
    )


def write(path, text):
    tmp = f"{path}.part"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def main():
    module = AnsibleModule(
        argument_spec={
            "folder": {"type": "path", "required": True},
            "container": {"type": "str", "required": True},
            "image": {"type": "str", "required": True},
            "docker_args": {"type": "list", "elements": "str", "required": True},
            "command": {"type": "list", "elements": "str", "required": True},
            "lane_file": {"type": "dict", "required": True},
            "status": {"type": "dict", "required": True},
            "timeout_s": {"type": "int", "required": True},
            "as_caller": {"type": "bool", "default": False},
            "model_path": {"type": "path"},
        },
        supports_check_mode=True,
    )
    p = module.params
    if module.check_mode:
        module.exit_json(changed=True, msg=f"would run {p['image']} as {p['container']}")
    folder, name = p["folder"], p["container"]
    os.makedirs(folder, mode=0o755, exist_ok=True)
    os.chmod(folder, 0o755)
    write(os.path.join(folder, "lane.json"), json.dumps(p["lane_file"], indent=2))
    docker("rm", "--force", name)
    user = []
    if p["as_caller"]:
        user = ["--user", f"{os.getuid()}:{os.getgid()}", "--env", "HOME=/tmp", "--tmpfs", "/tmp"]
    model = p["model_path"]
    mount = ["--volume", f"{model}:{model}:ro"] if model and os.path.isdir(model) else []
    argv = ["run", "--detach", "--name", name, *user, *mount, *p["docker_args"], p["image"],
            *p["command"]]
    status = {**p["status"], "timed_out": False, "timeout_s": p["timeout_s"]}
    started = docker(*argv)
    if started.returncode != 0:
        status.update(exit_code=None, wait_error=f"docker run: {started.stderr.strip()}")
    else:
        try:
            waited = docker("wait", name, timeout=p["timeout_s"])
            if waited.returncode == 0:
                status.update(exit_code=int(waited.stdout.strip()), wait_error="")
            else:
                status.update(exit_code=None, wait_error=waited.stderr.strip())
        except subprocess.TimeoutExpired:
            docker("kill", name)
            status.update(exit_code=None, timed_out=True, wait_error="")
        logs = docker("logs", name)
        write(os.path.join(folder, "container.log"), logs.stdout + logs.stderr)
    write(os.path.join(folder, "status.json"), json.dumps(status, indent=2))
    module.exit_json(changed=True, status=status)


if __name__ == "__main__":
    main()
