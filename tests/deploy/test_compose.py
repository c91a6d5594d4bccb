"""docker-compose.yml, docker-compose.host-llm.yml, .env.example and the SearXNG settings, without a
Docker engine (none runs here): the files are interpolated the way Compose does (`${VAR:-default}`,
`${VAR:?error}`, ...) from .env.example, then validated against the Compose Specification JSON schema
(vendored in tests/deploy/schemas/, see its README) and checked for the safe defaults issue 14 asks for."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml

from app.providers.cache.redis import parse_redis_url

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
HOST_LLM = ROOT / "docker-compose.host-llm.yml"
ENV_EXAMPLE = ROOT / ".env.example"
SEARXNG_SETTINGS = ROOT / "deploy" / "searxng" / "settings.yml"
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "compose-spec.json").read_text())
SECRETS = {"REDIS_PASSWORD": "a" * 64, "SEARXNG_SECRET": "b" * 64, "GRAFANA_ADMIN_PASSWORD": "c" * 32}

# --- Compose's interpolation (https://github.com/compose-spec/compose-spec/blob/main/spec.md) -------

_VAR = re.compile(
    r"\$(?:(?P<escaped>\$)|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}"
    r"|(?P<named>[A-Za-z_][A-Za-z0-9_]*))"
)


class MissingVariable(Exception):
    pass


def interpolate_string(text: str, env: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group("escaped"):
            return "$"
        name = m.group("braced") or m.group("named")
        op, arg = m.group("op"), m.group("arg") or ""
        value = env.get(name)
        unset_or_empty = not value
        if op in (":-", "-"):
            return arg if (unset_or_empty if op == ":-" else value is None) else str(value)
        if op in (":?", "?"):
            if unset_or_empty if op == ":?" else value is None:
                raise MissingVariable(f"{name}: {arg}")
            return str(value)
        if op in (":+", "+"):
            return arg if not (unset_or_empty if op == ":+" else value is None) else ""
        return value or ""

    return _VAR.sub(sub, text)


def interpolate(node: Any, env: dict[str, str]) -> Any:
    if isinstance(node, str):
        return interpolate_string(node, env)
    if isinstance(node, list):
        return [interpolate(v, env) for v in node]
    if isinstance(node, dict):
        return {k: interpolate(v, env) for k, v in node.items()}
    return node


def variables(node: Any) -> set[str]:
    """Every variable a compose file refers to."""
    text = json.dumps(node)
    return {m.group("braced") or m.group("named") for m in _VAR.finditer(text) if not m.group("escaped")}


def env_example() -> dict[str, str]:
    env = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, sep, value = line.partition("=")
            assert sep, f"not KEY=VALUE: {line!r}"
            env[key.strip()] = value.strip()
    return env


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def rendered(path: Path = COMPOSE, **overrides: str) -> dict[str, Any]:
    """The file as Compose would see it with .env = .env.example + the secrets filled in."""
    return interpolate(load(path), {**env_example(), **SECRETS, **overrides})


def test_interpolation_follows_compose_rules():
    env = {"SET": "x", "EMPTY": ""}
    assert interpolate_string("${SET:-d} ${EMPTY:-d} ${UNSET:-d} ${EMPTY-d} $SET $$SET", env) == "x d d  x $SET"
    assert interpolate_string("${SET:+r}${EMPTY:+r}", env) == "r"
    with pytest.raises(MissingVariable):
        interpolate_string("${EMPTY:?needed}", env)
    assert interpolate_string("${EMPTY?needed}", env) == ""


# --- schema ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [COMPOSE, HOST_LLM], ids=lambda p: p.name)
def test_compose_files_match_the_compose_schema(path):
    validator = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(rendered(path)), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


def test_the_schema_does_refuse_a_mistake():
    doc = rendered()
    doc["services"]["redis"]["restart_policy"] = "always"  # not a service key
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc))


# --- safe defaults ---------------------------------------------------------------------------------


def test_missing_secrets_stop_compose_with_a_message():
    raw = load(COMPOSE)
    for name in SECRETS:
        env = {**env_example(), **SECRETS, name: ""}
        with pytest.raises(MissingVariable, match=name):
            interpolate(raw, env)
    for name in SECRETS:
        assert env_example()[name] == "", f".env.example must not ship a value for {name}"


def test_published_ports_bind_to_loopback_by_default():
    doc = rendered()
    published = {}
    for name, service in doc["services"].items():
        for port in service.get("ports", []):
            assert isinstance(port, str) and port.count(":") == 2, f"{name}: give host address:port:port"
            published[name] = port
            assert port.startswith("127.0.0.1:"), f"{name} publishes {port}"
    assert set(published) == {"grounded-answers", "prometheus", "grafana"}, "Redis and SearXNG stay internal"
    assert rendered(PUBLISH_ADDRESS="0.0.0.0")["services"]["grounded-answers"]["ports"] == ["0.0.0.0:8080:8080"]


def test_images_are_pinned():
    for name, service in load(COMPOSE)["services"].items():
        image = service["image"]
        repo, _, tag = image.rpartition(":")
        assert repo and tag and tag != "latest" and re.search(r"\d", tag), f"{name}: {image}"
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("FROM "):
            tag = line.split()[1].rpartition(":")[2]
            assert re.match(r"\d+\.\d+\.\d+", tag), line


def test_service_gets_keys_auth_and_a_redis_url_with_the_password():
    raw = load(COMPOSE)["services"]["grounded-answers"]["environment"]
    assert raw["GA_API_KEYS"] == "${GA_API_KEYS:-}"
    assert raw["GA_AUTH"] == "${GA_AUTH:-required}", "auth is required unless .env says otherwise"
    env = rendered()["services"]["grounded-answers"]["environment"]
    assert env["GA_AUTH"] == "required"
    url = urlsplit(env["GA_REDIS_URL"])
    assert (url.hostname, url.port, url.password) == ("redis", 6379, SECRETS["REDIS_PASSWORD"])
    assert parse_redis_url(env["GA_REDIS_URL"]).kind == "single"
    assert env["GA_SEARXNG_URL"] == "http://searxng:8080"
    svc = rendered()["services"]["grounded-answers"]
    assert svc["read_only"] is True and "/tmp" in svc["tmpfs"] and svc["cap_drop"] == ["ALL"]
    assert env["PROMETHEUS_MULTIPROC_DIR"].startswith("/tmp/")


def test_redis_requires_the_password():
    redis = rendered()["services"]["redis"]
    command = redis["command"]
    assert command[command.index("--requirepass") + 1] == SECRETS["REDIS_PASSWORD"]
    assert redis["environment"]["REDISCLI_AUTH"] == SECRETS["REDIS_PASSWORD"]  # for the healthcheck
    assert "ports" not in redis


def test_searxng_secret_from_env_and_json_enabled():
    settings = yaml.safe_load(SEARXNG_SETTINGS.read_text())
    assert "json" in settings["search"]["formats"], "the service asks SearXNG for format=json"
    # SearXNG's own placeholder, which it refuses to start with: the real key must come from
    # SEARXNG_SECRET (it overrides server.secret_key), and compose refuses to start without one.
    assert settings["server"]["secret_key"] == "ultrasecretkey"
    searxng = rendered()["services"]["searxng"]
    assert searxng["environment"]["SEARXNG_SECRET"] == SECRETS["SEARXNG_SECRET"]
    assert load(COMPOSE)["services"]["searxng"]["environment"]["SEARXNG_SECRET"].startswith("${SEARXNG_SECRET:?")
    assert "./deploy/searxng/settings.yml:/etc/searxng/settings.yml:ro" in searxng["volumes"]
    assert "ports" not in searxng


def test_grafana_admin_password_from_env():
    grafana = rendered()["services"]["grafana"]
    assert grafana["environment"]["GF_SECURITY_ADMIN_PASSWORD"] == SECRETS["GRAFANA_ADMIN_PASSWORD"]


def test_prometheus_scrapes_the_container_port():
    config = yaml.safe_load((ROOT / "deploy" / "prometheus.yml").read_text())
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "grounded-answers"]
    port = rendered()["services"]["grounded-answers"]["ports"][0].rsplit(":", 1)[1]
    assert job["static_configs"][0]["targets"] == [f"grounded-answers:{port}"]


def test_env_example_documents_every_variable():
    used = variables(load(COMPOSE)) | variables(load(HOST_LLM))
    documented = env_example()
    assert used == set(documented), (
        f"undocumented: {sorted(used - set(documented))}; unused: {sorted(set(documented) - used)}"
    )
    lines = ENV_EXAMPLE.read_text().splitlines()
    for i, line in enumerate(lines):
        if line and not line.startswith("#"):
            j = i - 1
            while j >= 0 and lines[j] and not lines[j].startswith("#"):
                j -= 1
            assert j >= 0 and lines[j].startswith("#"), f"{line.split('=')[0]} has no comment above it"


def test_host_llm_override_reaches_the_host():
    doc = rendered(HOST_LLM)
    service = doc["services"]["grounded-answers"]
    assert service["extra_hosts"] == ["host.docker.internal:host-gateway"]
    assert urlsplit(service["environment"]["GA_LLM_BASE_URL"]).hostname == "host.docker.internal"
    explicit = rendered(HOST_LLM, GA_LLM_BASE_URL="http://host.docker.internal:8000/v1")
    assert explicit["services"]["grounded-answers"]["environment"]["GA_LLM_BASE_URL"].endswith(":8000/v1")
