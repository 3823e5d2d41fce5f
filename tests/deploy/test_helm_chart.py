"""deploy/helm/kiln: `helm lint`, `helm template` with the default values and
with every optional feature on, and every rendered manifest validated offline
by kubeconform against the Kubernetes API JSON schemas that the PyPI package
kubernetes-validate ships (kubeconform's default schema source is not
reachable here). The ServiceMonitor CRD has no schema in that set: it is
skipped by kubeconform and checked structurally below."""

from __future__ import annotations

import json
import pathlib
import subprocess

import pytest
import yaml

from k8s_schemas import write_standalone_schemas
from deploy_tools import REPO, find_tool

CHART = REPO / "deploy/helm/kiln"
K8S_VERSION = "1.30.0"
# CRDs without a schema in kubernetes-validate: skipped by kubeconform, checked
# structurally in test_all_on_pvc_agents_device_resources_and_servicemonitor.
SKIPPED_KINDS = ("ServiceMonitor",)

# The least a render needs: the chart refuses a plaintext, credential-less
# kilnd unless daemon.insecure says so (test_defaults_refuse_to_render).
INSECURE = ["--set", "daemon.insecure=true"]

ALL_ON = [
    "--set", "tls.existingSecret=kiln-tls",
    "--set", "tls.clientCertificates=true",
    "--set", "auth.tokensSecret=kiln-tokens",
    "--set", "auth.agentTokensSecret=kiln-agent-tokens",
    "--set", "networkPolicy.enabled=true",
    "--set", "cache.persistence.enabled=true",
    "--set", "metrics.serviceMonitor.enabled=true",
    "--set", "metrics.serviceMonitor.labels.release=prometheus",
    "--set", "agents.qemu.enabled=true",
    "--set", "agents.acap.enabled=true",
    "--set", "agents.mdla.enabled=true",
    "--set", "daemon.cacheCapacity=20GiB",
    "--set", "daemon.extraArgs={--compile-workers=4}",
    "--set", "service.type=LoadBalancer",
    "--set", "taskKey.existingSecret=kiln-task-key",
]


def helm(*args: str) -> str:
    proc = subprocess.run([find_tool("helm"), *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"helm {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def render(*values: str) -> tuple[str, list[dict]]:
    # --kube-version: render for the Kubernetes release whose schemas
    # kubeconform validates against.
    text = helm("template", "kiln", str(CHART), "--namespace", "ml",
                "--kube-version", K8S_VERSION, *values)
    return text, [d for d in yaml.safe_load_all(text) if d]


def kubeconform(text: str, schema_dir: pathlib.Path) -> subprocess.CompletedProcess:
    docs = [d for d in yaml.safe_load_all(text) if d and d["kind"] not in SKIPPED_KINDS]
    location = write_standalone_schemas(schema_dir, K8S_VERSION,
                                        {(d["apiVersion"], d["kind"]) for d in docs})
    return subprocess.run(
        [find_tool("kubeconform"), "-strict", "-summary", "-output", "json",
         "-kubernetes-version", K8S_VERSION, "-schema-location", str(location),
         "-skip", ",".join(SKIPPED_KINDS), "-"],
        input=text, capture_output=True, text=True, timeout=120)


def by_kind(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d["kind"] == kind]


@pytest.mark.parametrize("values", [INSECURE, ALL_ON, None], ids=["insecure", "all-on", "scale-out"])
def test_lint(values):
    values = SCALE_OUT if values is None else values
    out = helm("lint", "--strict", str(CHART), *values)
    assert "0 chart(s) failed" in out, out


@pytest.mark.parametrize("values", [INSECURE, ALL_ON], ids=["insecure", "all-on"])
def test_every_manifest_validates_against_the_api_schema(values, tmp_path):
    text, docs = render(*values)
    proc = kubeconform(text, tmp_path)
    assert proc.returncode == 0, f"kubeconform:\n{proc.stdout}\n{proc.stderr}"
    summary = json.loads(proc.stdout)["summary"]
    skipped = sum(len(by_kind(docs, k)) for k in SKIPPED_KINDS)
    assert summary["valid"] == len(docs) - skipped, summary
    assert summary["skipped"] == skipped and summary["invalid"] == summary["errors"] == 0


def test_kubeconform_catches_a_broken_manifest(tmp_path):
    text, _ = render(*INSECURE)
    broken = text.replace("containerPort: 50051", "containerPort: grpc-port-as-text", 1)
    assert broken != text
    proc = kubeconform(broken, tmp_path)
    assert proc.returncode != 0 and "containerPort" in proc.stdout, proc.stdout
    unknown = text.replace("terminationGracePeriodSeconds:", "terminationGracePeriod:", 1)
    proc = kubeconform(unknown, tmp_path)    # -strict: unknown fields are errors
    assert proc.returncode != 0, proc.stdout


def test_defaults_refuse_to_render():
    """Without TLS and credentials, or an explicit daemon.insecure, there is
    no chart: kilnd would serve the pod network to anyone."""
    proc = subprocess.run([find_tool("helm"), "template", "kiln", str(CHART),
                           "--kube-version", K8S_VERSION], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    assert "set tls.existingSecret and credentials" in proc.stderr
    only_tls = subprocess.run([find_tool("helm"), "template", "kiln", str(CHART),
                               "--kube-version", K8S_VERSION, "--set",
                               "tls.existingSecret=kiln-tls"],
                              capture_output=True, text=True, timeout=120)
    assert only_tls.returncode != 0, "TLS without credentials must not render"


def test_insecure_daemon_service_probes_and_cpu_agent():
    _, docs = render(*INSECURE)
    (dep,) = by_kind(docs, "Deployment")
    (svc,) = by_kind(docs, "Service")
    assert {p["port"] for p in svc["spec"]["ports"]} == {50051, 9464}
    c = dep["spec"]["template"]["spec"]["containers"][0]
    assert "--listen=0.0.0.0:50051" in c["args"] and "--metrics-listen=0.0.0.0:9464" in c["args"]
    assert c["livenessProbe"]["grpc"] == {"port": 50051}
    assert c["readinessProbe"]["grpc"] == {"port": 50051}
    assert "--insecure" in c["args"]
    assert not any(a.startswith("--tls-") or a.startswith("--auth-") for a in c["args"])
    assert not by_kind(docs, "NetworkPolicy")
    pod = dep["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    cache = next(v for v in pod["volumes"] if v["name"] == "cache")
    assert "emptyDir" in cache
    assert not by_kind(docs, "PersistentVolumeClaim") and not by_kind(docs, "ServiceMonitor")
    (ds,) = by_kind(docs, "DaemonSet")
    assert ds["spec"]["template"]["spec"]["nodeSelector"] == {"kiln.dev/cpu": "true"}
    args = ds["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--daemon=kiln.ml.svc:50051" in args
    assert "--compute-threads=auto" in args
    # No task key Secret: nothing mounted, agents take kilnd's key at
    # registration.
    assert not any(a.startswith("--task-verify-key") for a in args)
    assert not any(a.startswith("--task-signing-key") for a in c["args"])


def test_all_on_pvc_agents_device_resources_and_servicemonitor():
    _, docs = render(*ALL_ON)
    (dep,) = by_kind(docs, "Deployment")
    (pvc,) = by_kind(docs, "PersistentVolumeClaim")
    cache = next(v for v in dep["spec"]["template"]["spec"]["volumes"] if v["name"] == "cache")
    assert cache["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"]
    assert dep["spec"]["strategy"]["type"] == "Recreate"
    args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--cache-capacity-bytes=20GiB" in args and "--compile-workers=4" in args
    agents = {d["metadata"]["name"].rsplit("-", 1)[1]: d for d in by_kind(docs, "DaemonSet")}
    assert set(agents) == {"cpu", "qemu", "acap", "mdla"}
    limits = {k: a["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
              for k, a in agents.items()}
    assert any(r.startswith("xilinx.com/fpga-") for r in limits["acap"])
    assert not any("micron" in r for r in limits["mdla"])  # no made-up device resource
    for kind, a in agents.items():
        assert a["spec"]["template"]["spec"]["nodeSelector"][f"kiln.dev/{kind}"] == "true"
    # The task key Secret: kilnd signs with the private half, every agent
    # verifies with the public half only.
    assert "--task-signing-key=/etc/kiln/task-key/task-signing-key.pem" in args
    (key,) = [v for v in dep["spec"]["template"]["spec"]["volumes"] if v["name"] == "task-key"]
    assert key["secret"]["secretName"] == "kiln-task-key"
    assert [i["key"] for i in key["secret"]["items"]] == ["task-signing-key.pem"]
    for kind, a in agents.items():
        pod = a["spec"]["template"]["spec"]
        assert "--task-verify-key=/etc/kiln/task-key/task-public-key.pem" in \
            pod["containers"][0]["args"], kind
        (agent_key,) = [v for v in pod["volumes"] if v["name"] == "task-key"]
        assert [i["key"] for i in agent_key["secret"]["items"]] == ["task-public-key.pem"]
    (sm,) = by_kind(docs, "ServiceMonitor")
    (svc,) = by_kind(docs, "Service")
    assert sm["apiVersion"] == "monitoring.coreos.com/v1"
    assert sm["metadata"]["labels"]["release"] == "prometheus"
    labels = svc["metadata"]["labels"]
    assert all(labels.get(k) == v for k, v in sm["spec"]["selector"]["matchLabels"].items())
    assert {e["port"] for e in sm["spec"]["endpoints"]} <= {p["name"] for p in svc["spec"]["ports"]}


def test_all_on_tls_tokens_probes_and_network_policy():
    _, docs = render(*ALL_ON)
    (dep,) = by_kind(docs, "Deployment")
    pod = dep["spec"]["template"]["spec"]
    c = pod["containers"][0]
    for arg in ("--tls-cert=/etc/kiln/tls/tls.crt", "--tls-key=/etc/kiln/tls/tls.key",
                "--tls-client-ca=/etc/kiln/tls/ca.crt", "--auth-tokens=/etc/kiln/auth/tokens"):
        assert arg in c["args"], arg
    assert "--insecure" not in c["args"]
    # kubelet's gRPC probes cannot speak TLS: /healthz on the metrics port.
    for probe in (c["livenessProbe"], c["readinessProbe"]):
        assert probe["httpGet"] == {"path": "/healthz", "port": 9464}
        assert "grpc" not in probe
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["tls"]["secret"]["secretName"] == "kiln-tls"
    assert volumes["auth"]["secret"]["items"] == [{"key": "tokens", "path": "tokens"}]
    for ds in by_kind(docs, "DaemonSet"):
        kind = ds["metadata"]["name"].rsplit("-", 1)[1]
        agent = ds["spec"]["template"]["spec"]
        args = agent["containers"][0]["args"]
        assert "--tls-ca=/etc/kiln/tls/ca.crt" in args
        (ca,) = [v for v in agent["volumes"] if v["name"] == "tls-ca"]
        assert ca["secret"]["items"] == [{"key": "ca.crt", "path": "ca.crt"}], \
            "agents must get the CA only, never kilnd's key"
        (token,) = [e for e in agent["containers"][0]["env"] if e["name"] == "KILN_AGENT_TOKEN"]
        assert token["valueFrom"]["secretKeyRef"] == {"name": "kiln-agent-tokens", "key": kind}
    (policy,) = by_kind(docs, "NetworkPolicy")
    grpc_rule, metrics_rule = policy["spec"]["ingress"]
    assert grpc_rule["ports"] == [{"port": 50051, "protocol": "TCP"}]
    agents_peer = grpc_rule["from"][0]["podSelector"]
    assert "agent-cpu" in agents_peer["matchExpressions"][0]["values"]
    assert grpc_rule["from"][1]["podSelector"]["matchLabels"] == {"kiln.dev/client": "true"}
    assert metrics_rule["ports"] == [{"port": 9464, "protocol": "TCP"}]
    assert policy["spec"]["podSelector"]["matchLabels"] == \
        dep["spec"]["selector"]["matchLabels"]


def test_every_value_is_documented():
    """Every key of values.yaml with a value (not a block) has a comment on
    the line above it or on one of its enclosing blocks."""
    lines = (CHART / "values.yaml").read_text().splitlines()
    stack: list[tuple[int, bool]] = []      # (indent, documented) of enclosing blocks
    undocumented = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "- ")) or ":" not in stripped:
            continue
        indent = len(line) - len(line.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        documented = (i > 0 and lines[i - 1].strip().startswith("#")) or any(d for _, d in stack)
        is_block = stripped.split(":", 1)[1].strip() == ""
        if not documented and not is_block:
            undocumented.append(f"line {i + 1}: {stripped}")
        stack.append((indent, documented))
    assert not undocumented, "values without a comment:\n" + "\n".join(undocumented)


def _documented_helm_commands() -> list[list[str]]:
    """Every `helm install ...` command in README.md, the chart's README and
    docs/operations.md, joined across backslash-newlines, comments dropped."""
    import shlex
    commands = []
    for doc in ("README.md", "deploy/helm/kiln/README.md", "docs/operations.md"):
        text = (REPO / doc).read_text().replace("\\\n", " ")
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("helm install "):
                commands.append(shlex.split(line.split("  #")[0]))
    return commands


def test_the_documented_helm_commands_work_as_written():
    """What the docs tell a user to run, with the helm install_deps.sh builds
    (a current one: no --kube-version needed), as a client-side dry run."""
    commands = _documented_helm_commands()
    assert len(commands) >= 2, commands
    version = subprocess.run([find_tool("helm"), "version", "--short"], capture_output=True,
                             text=True, timeout=60, check=True).stdout
    assert version.startswith("v4."), version
    for argv in commands:
        argv = [find_tool("helm"), *argv[1:], "--dry-run=client"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO)
        assert proc.returncode == 0, f"{' '.join(argv)}:\n{proc.stdout}\n{proc.stderr}"
        assert "kind: Deployment" in proc.stdout


SCALE_OUT = [*INSECURE, "--set", "daemon.replicas=3", "--set", "bazelRemote.enabled=true",
             "--set", "remoteCache.instanceName=team-a"]


def test_scale_out_replicas_share_bazel_remote(tmp_path):
    """Several replicas: each kilnd gets --remote-cache at the chart's
    bazel-remote, a PodDisruptionBudget keeps some up, and the whole set
    validates against the API schemas."""
    text, docs = render(*SCALE_OUT)
    proc = kubeconform(text, tmp_path)
    assert proc.returncode == 0, f"kubeconform:\n{proc.stdout}\n{proc.stderr}"
    (dep,) = by_kind(docs, "Deployment")
    assert dep["spec"]["replicas"] == 3
    assert "strategy" not in dep["spec"]            # no Recreate: no shared volume
    args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--remote-cache=grpc://kiln-bazel-remote:9092" in args
    assert "--remote-instance-name=team-a" in args
    (pdb,) = by_kind(docs, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"] == dep["spec"]["selector"]["matchLabels"]
    (sts,) = by_kind(docs, "StatefulSet")
    br = sts["spec"]["template"]["spec"]["containers"][0]
    assert "--grpc_address=0.0.0.0:9092" in br["args"]
    services = {s["metadata"]["name"]: s for s in by_kind(docs, "Service")}
    assert services["kiln-bazel-remote"]["spec"]["ports"][0]["port"] == 9092
    # Agents serve every replica through the headless Service.
    headless = services["kiln-headless"]
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["selector"] == dep["spec"]["selector"]["matchLabels"]
    for ds in by_kind(docs, "DaemonSet"):
        agent_args = ds["spec"]["template"]["spec"]["containers"][0]["args"]
        assert "--daemon-service=kiln-headless.ml.svc:50051" in agent_args
        assert "--tls-server-name=kiln.ml.svc" in agent_args
        assert not any(a.startswith("--daemon=") for a in agent_args)
    # One replica renders no PDB and no bazel-remote unless asked.
    _, single = render(*INSECURE)
    assert not by_kind(single, "PodDisruptionBudget") and not by_kind(single, "StatefulSet")
    assert "kiln-headless" not in {s["metadata"]["name"] for s in by_kind(single, "Service")}


@pytest.mark.parametrize("extra,why", [
    (["--set", "daemon.replicas=2"], "needs the shared cache tier"),
    (["--set", "daemon.replicas=2", "--set", "remoteCache.url=grpc://cache:9092",
      "--set", "cache.persistence.enabled=true"], "cannot share cache.persistence"),
])
def test_scale_out_that_cannot_work_does_not_render(extra, why):
    proc = subprocess.run([find_tool("helm"), "template", "kiln", str(CHART),
                           "--kube-version", K8S_VERSION, *INSECURE, *extra],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and why in proc.stderr, proc.stderr


def test_acap_agent_simulated_or_on_boards():
    _, docs = render(*INSECURE, "--set", "agents.acap.enabled=true",
                     "--set", "agents.acap.simulate=true")
    (acap,) = [d for d in by_kind(docs, "DaemonSet") if d["metadata"]["name"].endswith("-acap")]
    args = acap["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--simulate" in args
    assert acap["spec"]["template"]["spec"]["containers"][0]["image"].startswith(
        "kiln/kiln-agent-acap")
    _, docs = render(*INSECURE, "--set", "agents.acap.enabled=true")
    (acap,) = [d for d in by_kind(docs, "DaemonSet") if d["metadata"]["name"].endswith("-acap")]
    assert "--simulate" not in acap["spec"]["template"]["spec"]["containers"][0]["args"]


def test_mdla_agent_simulated_or_with_the_sdk_from_the_node():
    _, docs = render(*INSECURE, "--set", "agents.mdla.enabled=true",
                     "--set", "agents.mdla.simulate=true")
    (mdla,) = [d for d in by_kind(docs, "DaemonSet") if d["metadata"]["name"].endswith("-mdla")]
    pod = mdla["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert "--simulate" in args and "--bin-cache=/var/cache/kiln-agent/mdla-bin" in args
    assert not any(a.startswith("--library") for a in args)
    assert "microndla-sdk" not in [v["name"] for v in pod["volumes"]]

    _, docs = render(*INSECURE, "--set", "agents.mdla.enabled=true",
                     "--set", "agents.mdla.sdkHostPath=/opt/micron/sdk")
    (mdla,) = [d for d in by_kind(docs, "DaemonSet") if d["metadata"]["name"].endswith("-mdla")]
    pod = mdla["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert "--simulate" not in args
    assert "--library=/opt/microndla/libmicrondla.so" in args
    (sdk,) = [v for v in pod["volumes"] if v["name"] == "microndla-sdk"]
    assert sdk["hostPath"] == {"path": "/opt/micron/sdk", "type": "Directory"}
    (mount,) = [m for m in pod["containers"][0]["volumeMounts"] if m["name"] == "microndla-sdk"]
    assert mount == {"name": "microndla-sdk", "mountPath": "/opt/microndla", "readOnly": True}
