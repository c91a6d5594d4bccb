"""The container runs with a read-only root filesystem (compose `read_only: true`, Kubernetes
`readOnlyRootFilesystem: true`) and only /tmp writable. Without a container engine, the closest
check: the real service started in a private mount namespace where the whole checkout (code, .venv,
corpus, the provisioned tiktoken files) is re-mounted read-only, then asked for /readyz and an answer.
Needs root for `unshare -m` (CI runs as root); skipped with the reason elsewhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from app.settings import Settings
from app.tokens import provision
from simulators._threaded import free_port

ROOT = Path(__file__).resolve().parents[2]


def _can_unshare() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare (util-linux) not installed"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"unshare -m not permitted here: {probe.stderr.strip()}"


def test_service_answers_from_a_read_only_tree():
    reason = _can_unshare()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    # What the image build does: the encodings are provisioned before the filesystem is read-only.
    cache_dir = Settings().tiktoken_cache_dir
    for name in ("o200k_base", "cl100k_base"):
        provision(cache_dir, name)
    port = free_port()
    script = (
        f'mount --bind "{ROOT}" "{ROOT}" && mount -o remount,bind,ro "{ROOT}" '
        f'&& if touch "{ROOT}/.ro-probe" 2>/dev/null; then echo "still writable" >&2; exit 3; fi '
        f'&& exec "{sys.executable}" -m uvicorn app.main:app --host 127.0.0.1 --port {port}'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GA_") and k != "PROMETHEUS_MULTIPROC_DIR"}
    env.update(GA_AUTH="disabled", PYTHONDONTWRITEBYTECODE="1", TMPDIR="/tmp")
    proc = subprocess.Popen(
        ["unshare", "-m", "sh", "-c", script], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"service exited {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
            try:
                with urllib.request.urlopen(base + "/readyz", timeout=2) as resp:
                    assert resp.status == 200
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        body = json.dumps(
            {"model": "grounded-answer", "messages": [{"role": "user", "content": "What is asyncio.TaskGroup?"}]}
        ).encode()
        request = urllib.request.Request(
            base + "/v1/chat/completions", data=body, headers={"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as resp:
            answer = json.loads(resp.read())
        assert answer["grounding"]["status"] in {"grounded", "abstained"}
        assert answer["choices"][0]["message"]["content"]
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert not (ROOT / ".ro-probe").exists()
