"""vLLM's OpenAI-compatible server started as the users start it, and what its log says.

``start_server`` runs ``python -m vllm.entrypoints.openai.api_server --model PATH
--tensor-parallel-size N --trust-remote-code ...`` (the Kunlunxin report's command) in a
process group of its own, its output and its workers' (vLLM's engine core and workers
inherit the server's stdout and stderr) in one log file. ``wait_healthy`` polls ``/health``
until it answers 200, the process exits (a start-up failure: ``ServerFailed`` with the log's
last lines, so a worker's traceback becomes the testcase's failure text and signature) or
the deadline passes. ``complete`` asks ``/v1/completions`` for greedy tokens.

From the log: ``attention_backend`` (vLLM's "Using X attention backend" line) and
``gdn_warmup`` (vLLM 0.24.0's ``_warmup_prefill_kernels`` runs the GDN prefill kernels
during the profile run and logs "GDN prefill kernel warmup (T=64) completed for layer ..."
at DEBUG, so the suite runs vLLM with ``VLLM_LOGGING_LEVEL=DEBUG``; a failed warm-up is
caught by vLLM and logged as a warning with its traceback: ``gdn_warmup_failure``).
Standard library only; the command is a parameter, so a stand-in server can take vLLM's
place (tests/fixtures/vllm_standin.py).
"""

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO, List, Mapping, Optional, Sequence

SERVER_MODULE = "vllm.entrypoints.openai.api_server"
# How much of the log a start-up failure's message carries (its end: the traceback).
FAILURE_TAIL_LINES = 80

# vLLM 0.24.0 (vllm/platforms/cuda.py): the backend it found, or the one it was given.
_BACKEND_FOUND = re.compile(r"Using (\w+) attention backend out of potential backends")
_BACKEND_GIVEN = re.compile(r"Using (?:AttentionBackendEnum\.)?(\w+) backend\.")
# vLLM 0.24.0's GDN layer (vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py):
# the prefill kernel it chose, and its warm-up's outcome per layer (at DEBUG when it ran).
_GDN_PREFILL = re.compile(r"Using (.+?) GDN prefill kernel")
_WARMUP_DONE = re.compile(r"GDN prefill kernel warmup \(T=\d+\) completed for layer (\S+)")
_WARMUP_FAILED = re.compile(r"GDN prefill kernel warmup \(T=\d+\) failed for layer (\S+)")
# A log line's prefix: "(EngineCore pid=1) WARNING 12-01 22:54:19 [file.py:1165] " (at
# DEBUG the file is a path: "[model_executor/.../gdn/qwen_gdn_linear_attn.py:1174]").
_LINE_PREFIX = re.compile(r"^(?:\(\w+ pid=\d+\) )?[A-Z]+ \d\d-\d\d [\d:]+ \[[^\]]+:\d+\] ?")


class ServerFailed(RuntimeError):
    """The server did not become healthy or did not answer; the message holds its log's end."""


@dataclass
class Server:
    process: "subprocess.Popen[bytes]"
    port: int
    log_path: Path
    log_file: IO[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        self.log_file.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self, grace_s: float = 30.0) -> Optional[int]:
        """End the server's process group (its workers too); its exit status."""
        if self.process.poll() is None:
            _signal_group(self.process, signal.SIGTERM)
            try:
                self.process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                _signal_group(self.process, signal.SIGKILL)
                self.process.wait()
        self.log_file.close()
        return self.process.returncode


def _signal_group(process: "subprocess.Popen[bytes]", sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_command(
    model: str,
    tensor_parallel_size: int,
    port: int,
    extra: Sequence[str] = (),
    launcher: Optional[Sequence[str]] = None,
) -> List[str]:
    """The users' command (the Kunlunxin report's), on a local port; ``launcher`` replaces
    ``python -m vllm.entrypoints.openai.api_server`` (a stand-in server)."""
    return [
        *(launcher or (sys.executable, "-m", SERVER_MODULE)),
        "--model",
        model,
        "--tensor-parallel-size",
        str(tensor_parallel_size),
        "--trust-remote-code",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *extra,
    ]


def start_server(command: Sequence[str], env: Mapping[str, str], log_path: Path) -> Server:
    """Start ``command`` in its own process group, stdout and stderr into ``log_path``."""
    port = int(command[list(command).index("--port") + 1])
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_file = log_path.open("wb")
    log_file.write(("$ " + " ".join(command) + "\n").encode())
    log_file.flush()
    process = subprocess.Popen(
        list(command),
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=log_file,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    return Server(process=process, port=port, log_path=log_path, log_file=log_file)


def log_tail(text: str, lines: int = FAILURE_TAIL_LINES) -> str:
    return "\n".join(text.splitlines()[-lines:])


def wait_healthy(server: Server, timeout_s: float, poll_s: float = 1.0) -> None:
    """Until ``/health`` answers 200; ``ServerFailed`` if the server exits or never does."""
    deadline = time.monotonic() + timeout_s
    while True:
        code = server.process.poll()
        if code is not None:
            raise ServerFailed(
                f"the vLLM server exited with status {code} during start-up; "
                f"the end of its log ({server.log_path.name}):\n{log_tail(server.log_text())}"
            )
        try:
            with urllib.request.urlopen(server.url + "/health", timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        if time.monotonic() > deadline:
            raise ServerFailed(
                f"the vLLM server was not healthy after {timeout_s:.0f} s; "
                f"the end of its log ({server.log_path.name}):\n{log_tail(server.log_text())}"
            )
        time.sleep(poll_s)


@dataclass(frozen=True)
class Completion:
    text: str
    completion_tokens: int
    raw: str


def complete(
    server: Server, model: str, prompt: str, max_tokens: int, timeout_s: float = 300.0
) -> Completion:
    """One greedy completion (``ignore_eos``: a random-weight model may end early)."""
    body = {
        "model": model,
        "prompt": prompt,
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "ignore_eos": True,
    }
    request = urllib.request.Request(
        server.url + "/v1/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            raw = answer.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as err:
        detail = err.read().decode("utf-8", errors="replace")
        raise ServerFailed(
            f"/v1/completions answered {err.code}: {detail[:2000]}\n"
            f"the end of the server's log:\n{log_tail(server.log_text())}"
        ) from None
    except (urllib.error.URLError, OSError) as err:
        raise ServerFailed(
            f"/v1/completions failed: {err}\n"
            f"the end of the server's log:\n{log_tail(server.log_text())}"
        ) from None
    try:
        data = json.loads(raw)
        text = str(data["choices"][0]["text"])
        tokens = int(data["usage"]["completion_tokens"])
    except (ValueError, KeyError, IndexError, TypeError) as err:
        raise ServerFailed(f"/v1/completions gave no completion ({err}): {raw[:2000]}") from None
    return Completion(text=text, completion_tokens=tokens, raw=raw)


def attention_backend(log: str) -> Optional[str]:
    """The attention backend vLLM says it uses (the first such line), or None."""
    found = _BACKEND_FOUND.search(log) or _BACKEND_GIVEN.search(log)
    return found.group(1) if found else None


def gdn_prefill_kernel(log: str) -> Optional[str]:
    """The GDN prefill kernel vLLM says it uses (``Triton/FLA``, ``FlashInfer``), or None."""
    found = _GDN_PREFILL.search(log)
    return found.group(1) if found else None


def gdn_warmup(log: str) -> List[str]:
    """The layers whose GDN prefill warm-up completed (vLLM logs it at DEBUG)."""
    return [match.group(1) for match in _WARMUP_DONE.finditer(log)]


def gdn_warmup_failure(log: str) -> str:
    """The first failed GDN warm-up's log record (vLLM catches it and warns, traceback
    included), its lines without vLLM's prefixes; "" if none failed."""
    lines = log.splitlines()
    for index, line in enumerate(lines):
        if _WARMUP_FAILED.search(line):
            prefix = _LINE_PREFIX.match(line)
            if prefix is None:
                return line
            head = prefix.group(0)
            record = [line[len(head) :]]
            for follow in lines[index + 1 :]:
                if not follow.startswith(head) or _WARMUP_FAILED.search(follow):
                    break
                record.append(follow[len(head) :])
            return "\n".join(record)
    return ""
