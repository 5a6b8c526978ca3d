#!/usr/bin/env bash
# Idempotent: install the Docker engine and debootstrap (Debian packages) if missing, start
# dockerd if no engine answers, and wait for its socket. Safe to call from every helper.
set -euo pipefail

SOCKET=/var/run/docker.sock
LOG=${DOCKERD_LOG:-/var/log/flagci-dockerd.log}

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if ((${#missing[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

engine_answers() {
    python3 - "$SOCKET" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(2)
try:
    s.connect(sys.argv[1])
    s.sendall(b"GET /_ping HTTP/1.0\r\n\r\n")
    sys.exit(0 if b" 200 " in s.recv(64) else 1)
except OSError:
    sys.exit(1)
PY
}

if engine_answers; then
    exit 0
fi
echo "starting dockerd (log: $LOG)" >&2
setsid dockerd >"$LOG" 2>&1 </dev/null &
for _ in $(seq 1 60); do
    if engine_answers; then
        exit 0
    fi
    sleep 1
done
echo "dockerd did not answer on $SOCKET within 60 s; last lines of $LOG:" >&2
tail -n 20 "$LOG" >&2
exit 1
