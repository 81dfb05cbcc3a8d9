"""The real kubectl against the server: what users type, unchanged.

Every test runs with each distinct kubectl found: Debian's kubernetes-client (1.20), which
`.ci/run` unpacks under .ci/kubectl/, and the one on PATH. Each test starts its own server
and points a kubeconfig (no credentials: plain HTTP on 127.0.0.1) at it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetwarden.api.codec import without_nulls
from fleetwarden.api.registry import REGISTRY

from .conftest import CLUSTERS, DEPLOYMENTS, Api, Kubectl, cluster

SEEDS = Path(__file__).parent.parent / "data" / "seeds"
MANIFEST: list[dict[str, Any]] = yaml.safe_load((SEEDS / "MANIFEST.yaml").read_text())
# The namespaces the seeds' namespaced objects live in.
SEED_NAMESPACES = ("ns1", "demo1", "project1")


def namespace_doc(*names: str) -> str:
    return yaml.safe_dump_all(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in names
    )


def seed_ids(entry: dict[str, Any]) -> str:
    return str(entry["file"])


@pytest.mark.parametrize("entry", MANIFEST, ids=seed_ids)
def test_apply_seed(entry: dict[str, Any], kubectl: Kubectl) -> None:
    assert kubectl("apply", "-f", "-", stdin=namespace_doc(*SEED_NAMESPACES)).returncode == 0
    result = kubectl("apply", "-f", str(SEEDS / entry["file"]))
    objects = entry["objects"]
    unserved = [o for o in objects if REGISTRY.get(o["apiVersion"], o["kind"]) is None]
    if unserved:  # nor by upstream's hub
        assert result.returncode != 0
        assert result.stdout == ""
        kind, api_version = unserved[0]["kind"], unserved[0]["apiVersion"]
        assert f'no matches for kind "{kind}" in version "{api_version}"' in result.stderr
    elif any(o.get("name") is None for o in objects):
        assert result.returncode != 0
        assert "resource name may not be empty" in result.stderr  # kubectl's own check
    elif entry["expect"] == "refused":
        assert result.returncode != 0
        assert f"{entry['error']}" in result.stderr, result.stderr
        assert "is invalid" in result.stderr
    else:
        assert result.returncode == 0, result.stderr
        assert result.stdout.count(" created") == len(objects), result.stdout


def test_api_resources(kubectl: Kubectl) -> None:
    result = kubectl("api-resources")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[1:]}
    assert rows["namespaces"] == ["namespaces", "ns", "v1", "false", "Namespace"]
    assert rows["clusters"] == ["clusters", "cluster.karmada.io/v1alpha1", "false", "Cluster"]
    assert rows["propagationpolicies"][-2:] == ["true", "PropagationPolicy"]
    assert "managedclusters" in rows and "placements" in rows


def test_get_patch_and_delete(api: Api, kubectl: Kubectl) -> None:
    assert kubectl("apply", "-f", "-", stdin=json.dumps(cluster())).returncode == 0
    again = kubectl("apply", "-f", "-", stdin=json.dumps(cluster()))
    assert again.stdout == "cluster.cluster.karmada.io/member1 unchanged\n", again.stderr
    got = kubectl("get", "clusters")
    assert got.returncode == 0 and "member1" in got.stdout
    assert (
        kubectl("get", "clusters", "member1", "-o", "name").stdout
        == "cluster.cluster.karmada.io/member1\n"
    )
    merged = kubectl(
        "patch",
        "cluster",
        "member1",
        "--type=merge",
        "-p",
        '{"metadata":{"labels":{"env":"prod"}}}',
    )
    assert merged.stdout == "cluster.cluster.karmada.io/member1 patched\n", merged.stderr
    ops = '[{"op":"add","path":"/spec/region","value":"eu"}]'
    assert kubectl("patch", "cluster", "member1", "--type=json", "-p", ops).returncode == 0
    shown = json.loads(kubectl("get", "cluster", "member1", "-o", "json").stdout)
    assert shown["metadata"]["labels"] == {"env": "prod"} and shown["spec"]["region"] == "eu"
    selected = kubectl("get", "clusters", "-l", "env=prod", "-o", "name")
    assert selected.stdout == "cluster.cluster.karmada.io/member1\n"
    deleted = kubectl("delete", "cluster", "member1")
    assert deleted.stdout == 'cluster.cluster.karmada.io "member1" deleted\n', deleted.stderr
    missing = kubectl("get", "cluster", "member1")
    assert missing.returncode != 0
    assert (
        'Error from server (NotFound): clusters.cluster.karmada.io "member1" not found'
        in missing.stderr
    )


def test_taint_by_patch(kubectl: Kubectl) -> None:
    """Taints are set by patching spec.taints, as karmadactl taint and users' scripts do;
    the hub stamps a NoExecute taint's timeAdded and keeps it on later patches."""
    assert kubectl("apply", "-f", "-", stdin=json.dumps(cluster())).returncode == 0
    taints = [{"key": "maintenance", "value": "true", "effect": "NoExecute"}]
    patched = kubectl(
        "patch",
        "cluster",
        "member1",
        "--type=merge",
        "-p",
        json.dumps({"spec": {"taints": taints}}),
    )
    assert patched.stdout == "cluster.cluster.karmada.io/member1 patched\n", patched.stderr
    first = json.loads(kubectl("get", "cluster", "member1", "-o", "json").stdout)["spec"]["taints"]
    assert [(t["key"], t["effect"]) for t in first] == [("maintenance", "NoExecute")]
    assert first[0]["timeAdded"]
    ops = [{"op": "add", "path": "/spec/taints/-", "value": {"key": "gpu", "effect": "NoSchedule"}}]
    assert (
        kubectl("patch", "cluster", "member1", "--type=json", "-p", json.dumps(ops)).returncode == 0
    )
    both = json.loads(kubectl("get", "cluster", "member1", "-o", "json").stdout)["spec"]["taints"]
    assert both[0] == first[0] and [t["key"] for t in both] == ["maintenance", "gpu"]
    bad = [{"op": "replace", "path": "/spec/taints/1/effect", "value": "NoRun"}]
    refused = kubectl("patch", "cluster", "member1", "--type=json", "-p", json.dumps(bad))
    assert refused.returncode != 0
    assert 'spec.taints[1].effect: Unsupported value: "NoRun"' in refused.stderr


def test_replace_with_a_stale_object_is_a_conflict(
    api: Api, kubectl: Kubectl, tmp_path: Path
) -> None:
    api.post(CLUSTERS, cluster())
    stale = tmp_path / "stale.json"
    stale.write_text(kubectl("get", "cluster", "member1", "-o", "json").stdout)
    assert kubectl("label", "cluster", "member1", "env=prod").returncode == 0
    result = kubectl("replace", "-f", str(stale))
    assert result.returncode != 0
    assert "Error from server (Conflict)" in result.stderr
    assert (
        "the object has been modified; please apply your changes to the latest version"
        in result.stderr
    )


def test_a_refused_object_shows_its_field_error(kubectl: Kubectl) -> None:
    bad = cluster(taints=[{"key": "gpu", "effect": "NoRun"}])
    result = kubectl("apply", "-f", "-", stdin=json.dumps(bad))
    assert result.returncode != 0
    assert (
        'The Cluster "member1" is invalid: spec.taints[0].effect: Unsupported value: "NoRun"'
        in result.stderr
    )


def test_create_in_a_missing_namespace(kubectl: Kubectl) -> None:
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "p", "namespace": "nope"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}]},
    }
    result = kubectl("apply", "-f", "-", stdin=json.dumps(policy))
    assert result.returncode != 0
    assert 'namespaces "nope" not found' in result.stderr


def test_get_events(api: Api, kubectl: Kubectl) -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "member1.1", "namespace": "default"},
        "involvedObject": {
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "name": "member1",
        },
        "reason": "TaintClusterSucceed",
        "message": "Taint cluster succeed",
        "type": "Normal",
    }
    assert api.post("/api/v1/namespaces/default/events", event).status == 201
    result = kubectl("get", "events")
    assert result.returncode == 0, result.stderr
    assert "member1" in result.stdout
    assert kubectl("get", "ev", "-o", "name").stdout == "event/member1.1\n"


def test_get_watch_prints_new_objects(api: Api, kubectl: Kubectl) -> None:
    api.post(CLUSTERS, cluster("first"))
    with kubectl.popen("get", "clusters", "-w") as watcher:
        try:
            assert watcher.stdout is not None
            assert watcher.stdout.readline().split() == ["NAME", "VERSION", "MODE", "READY", "AGE"]
            assert watcher.stdout.readline().split()[:2] == ["first", "Push"]
            api.post(CLUSTERS, cluster("second"))  # a row of a Table sent as a watch event
            assert watcher.stdout.readline().split()[:2] == ["second", "Push"]
        finally:
            watcher.terminate()
            watcher.wait(10)


def test_apply_again_patches_a_built_in_kind_strategically(kubectl: Kubectl) -> None:
    deployment = (SEEDS / "002-02-deployment-and-pp-duplicated.yaml").read_text()
    assert kubectl("apply", "-f", "-", stdin=deployment).returncode == 0
    changed = deployment.replace("replicas: 2", "replicas: 4")
    assert changed != deployment
    result = kubectl("apply", "-f", "-", stdin=changed)
    assert "deployment.apps/nginx configured" in result.stdout, result.stderr
    assert result.stderr == ""  # no "error calculating patch from openapi spec"
    shown = json.loads(kubectl("get", "deployment", "nginx", "-o", "json").stdout)
    assert shown["spec"]["replicas"] == 4
    assert shown["spec"]["template"]["spec"]["containers"][0]["image"].startswith("nginx")
    patched = kubectl("patch", "deployment", "nginx", "-p", '{"spec":{"replicas":1}}')
    assert patched.stdout == "deployment.apps/nginx patched\n", patched.stderr  # strategic


def test_create_subcommands_that_send_protobuf(kubectl: Kubectl) -> None:
    assert kubectl("create", "namespace", "team").stdout == "namespace/team created\n"
    created = kubectl("create", "configmap", "settings", "-n", "team", "--from-literal=mode=fast")
    assert created.stdout == "configmap/settings created\n", created.stderr
    secret = kubectl(
        "create", "secret", "generic", "token", "-n", "team", "--from-literal=pw=s3cret"
    )
    assert secret.returncode == 0, secret.stderr
    shown = json.loads(kubectl("get", "configmap", "settings", "-n", "team", "-o", "json").stdout)
    assert shown["data"] == {"mode": "fast"}
    token = json.loads(kubectl("get", "secret", "token", "-n", "team", "-o", "json").stdout)
    assert token["data"] == {"pw": "czNjcmV0"}
    rows = [line.split()[:2] for line in kubectl("get", "namespaces").stdout.splitlines()]
    assert ["team", "Active"] in rows
    missing = kubectl("create", "configmap", "c", "-n", "nope", "--from-literal=a=b")
    assert 'namespaces "nope" not found' in missing.stderr


# `kubectl create` subcommands that send their object as protobuf: (resource, arguments).
PROTOBUF_CREATES = [
    ("deployment", ["deployment", "web", "--image=nginx:1.25", "--replicas=3", "--port=8080"]),
    ("deployment", ["deployment", "zero", "--image=nginx", "--replicas=0"]),
    ("job", ["job", "once", "--image=busybox", "--", "echo", "hi"]),
    ("cronjob", ["cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *", "--", "date"]),
    ("service", ["service", "clusterip", "front", "--tcp=80:8080", "--tcp=443:https"]),
    ("service", ["service", "nodeport", "edge", "--tcp=80:8080", "--node-port=30080"]),
    ("service", ["service", "externalname", "away", "--external-name=example.com"]),
    (
        "role",
        [
            "role",
            "reader",
            "--verb=get,list",
            "--resource=pods,deployments.apps",
            "--resource-name=x",
        ],
    ),
    ("clusterrole", ["clusterrole", "logs", "--verb=get", "--non-resource-url=/logs"]),
    ("clusterrole", ["clusterrole", "gathered", "--aggregation-rule=team=a"]),
    (
        "rolebinding",
        [
            "rolebinding",
            "readers",
            "--role=reader",
            "--user=bob",
            "--group=devs",
            "--serviceaccount=default:ci",
        ],
    ),
    ("clusterrolebinding", ["clusterrolebinding", "loggers", "--clusterrole=logs", "--user=bob"]),
    (
        "ingress",
        [
            "ingress",
            "web",
            "--class=nginx",
            "--default-backend=svc:80",
            "--rule=foo.com/*=svc2:http,tls=cert",
            "--annotation=a=b",
        ],
    ),
    ("ingress", ["ingress", "simple", "--rule=bar.com/x=svc:8080"]),
    ("pdb", ["pdb", "least", "--selector=app=web", "--min-available=1"]),
    ("pdb", ["pdb", "most", "--selector=tier in (a,b)", "--max-unavailable=20%"]),
    ("quota", ["quota", "compute", "--hard=cpu=2,memory=4Gi,pods=10,count/deployments.apps=3"]),
    ("quota", ["quota", "besteffort", "--hard=pods=5", "--scopes=BestEffort"]),
    ("priorityclass", ["priorityclass", "high", "--value=1000", "--description=urgent"]),
    ("priorityclass", ["priorityclass", "zero", "--value=0", "--preemption-policy=Never"]),
]


def without_server_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as sent: no name, no fields the server sets, no nulls."""
    meta = {
        k: v
        for k, v in obj["metadata"].items()
        if k
        not in (
            "name",
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "generation",
            "managedFields",
        )
    }
    return without_nulls({**obj, "metadata": meta})


@pytest.mark.parametrize(
    ("resource", "args"), PROTOBUF_CREATES, ids=lambda a: "-".join(a) if isinstance(a, list) else a
)
def test_kubectl_create_in_protobuf_stores_what_the_same_object_in_json_does(
    kubectl: Kubectl, resource: str, args: list[str]
) -> None:
    """kubectl sends these objects as protobuf; the same object sent as JSON (its dry run,
    renamed) is the oracle: both must be stored alike."""
    name = args[2] if args[0] == "service" else args[1]
    command = args.index("--") if "--" in args else len(args)  # the container's, after --
    dry_run = kubectl("create", *args[:command], "--dry-run=client", "-o=json", *args[command:])
    assert dry_run.returncode == 0, dry_run.stderr
    as_json = json.loads(dry_run.stdout)
    if REGISTRY.get(as_json["apiVersion"], as_json["kind"]) is None:
        # kubectl 1.20 makes CronJobs and PodDisruptionBudgets of batch/v1beta1 and
        # policy/v1beta1, which no hub serves since 1.25: refused as a 1.25 refuses them.
        refused = kubectl("create", *args)
        assert refused.returncode != 0
        assert (
            "the server could not find the requested resource" in refused.stderr
            or f'in version "{as_json["apiVersion"]}"' in refused.stderr
        ), refused.stderr
        return
    as_json["metadata"]["name"] = f"{name}-json"
    assert kubectl("create", "-f", "-", stdin=json.dumps(as_json)).returncode == 0
    created = kubectl("create", *args)
    assert created.returncode == 0, created.stderr
    stored = {
        n: json.loads(kubectl("get", resource, n, "-o", "json").stdout)
        for n in (name, f"{name}-json")
    }
    assert without_server_fields(stored[name]) == without_server_fields(stored[f"{name}-json"])


def test_a_protobuf_field_the_hub_does_not_decode_is_refused_not_dropped(api: Api) -> None:
    # A Deployment whose pod spec has field 14 (securityContext, not decoded here) set: the
    # hub must not store it without.
    pod_spec = b"\x12\x0c\n\x03app\x12\x05nginx" + b"\x72\x02\x08\x01"
    template = b"\x12" + bytes([len(pod_spec)]) + pod_spec
    spec = b"\x1a" + bytes([len(template)]) + template
    raw = b"\n\x05\n\x03web" + b"\x12" + bytes([len(spec)]) + spec
    type_meta = b"\n\x07apps/v1\x12\nDeployment"
    body = b"k8s\x00\n" + bytes([len(type_meta)]) + type_meta + b"\x12" + bytes([len(raw)]) + raw
    reply = api.post(DEPLOYMENTS, body, content_type="application/vnd.kubernetes.protobuf")
    assert reply.status == 415
    assert reply.json["message"] == (
        "the protobuf Deployment has a field this server does not decode "
        "(spec.template.spec's field 14): send it as application/json (kubectl apply -f) "
        "instead"
    )
    assert api.get(DEPLOYMENTS).json["items"] == []


def length_delimited(number: int, payload: bytes) -> bytes:
    """A protobuf field of wire type 2: its tag, its varint length, its bytes."""
    size, length = len(payload), b""
    while True:
        byte, size = size & 0x7F, size >> 7
        length += bytes([byte | (0x80 if size else 0)])
        if not size:
            return bytes([number << 3 | 2]) + length + payload


def test_an_unknown_protobuf_field_nested_without_end_is_refused_not_recursed_into(
    api: Api,
) -> None:
    nested = b""
    for _ in range(5000):  # a message in a message, 5,000 deep, all of it zero
        nested = length_delimited(1, nested)
    raw = length_delimited(1, length_delimited(1, b"web")) + length_delimited(15, nested)
    type_meta = length_delimited(1, b"apps/v1") + length_delimited(2, b"Deployment")
    body = b"k8s\x00" + length_delimited(1, type_meta) + length_delimited(2, raw)
    reply = api.post(DEPLOYMENTS, body, content_type="application/vnd.kubernetes.protobuf")
    assert reply.status == 415, reply.body
    assert "(the object's field 15)" in reply.json["message"]
    assert api.get(DEPLOYMENTS).json["items"] == []


def test_a_pod_disruption_budget_as_kubectl_shows_it(kubectl: Kubectl) -> None:
    budget = {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
    }  # fmt: skip
    assert kubectl("apply", "-f", "-", stdin=json.dumps(budget)).returncode == 0
    header, row = kubectl("get", "pdb").stdout.splitlines()
    assert header.split() == [
        "NAME",
        "MIN",
        "AVAILABLE",
        "MAX",
        "UNAVAILABLE",
        "ALLOWED",
        "DISRUPTIONS",
        "AGE",
    ]
    assert row.split()[:4] == ["web", "50%", "N/A", "0"]
    both = {**budget, "spec": {**budget["spec"], "maxUnavailable": 1}}
    refused = kubectl("apply", "-f", "-", stdin=json.dumps(both))
    assert "minAvailable and maxUnavailable cannot be both set" in refused.stderr


def service(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


def test_services_as_kubectl_get_prints_them(api: Api, kubectl: Kubectl) -> None:
    web = {"port": 80, "targetPort": 8080}
    services = [
        service("front", clusterIP="10.96.0.10", ports=[{**web, "name": "http"}, {"name": "https", "port": 443, "protocol": "TCP"}], selector={"tier": "web", "app": "shop"}),
        service("edge", type="NodePort", externalIPs=["192.0.2.7"], ports=[{**web, "nodePort": 30080}]),
        service("lb", type="LoadBalancer", ports=[{"port": 53, "protocol": "UDP"}]),
        service("away", type="ExternalName", externalName="db.example.com"),
    ]  # fmt: skip
    for obj in services:
        assert kubectl("create", "-f", "-", stdin=json.dumps(obj)).returncode == 0
    status = {"status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.5"}]}}}
    path = "/api/v1/namespaces/default/services/lb/status"
    balanced = api.patch(path, status, "application/merge-patch+json")
    assert balanced.status == 200, balanced.body
    listed = kubectl("get", "services", "-o", "wide").stdout.splitlines()
    assert listed[0].split() == [
        "NAME",
        "TYPE",
        "CLUSTER-IP",
        "EXTERNAL-IP",
        "PORT(S)",
        "AGE",
        "SELECTOR",
    ]
    rows = {
        line.split()[0]: [c for i, c in enumerate(line.split()) if i != 5] for line in listed[1:]
    }
    assert rows == {
        "front": [
            "front",
            "ClusterIP",
            "10.96.0.10",
            "<none>",
            "80/TCP,443/TCP",
            "app=shop,tier=web",
        ],
        "edge": ["edge", "NodePort", "<none>", "192.0.2.7", "80:30080/TCP", "<none>"],
        "lb": ["lb", "LoadBalancer", "<none>", "203.0.113.5", "53/UDP", "<none>"],
        "away": ["away", "ExternalName", "<none>", "db.example.com", "<none>", "<none>"],
    }


def test_rbac_service_accounts_and_ingresses_as_kubectl_get_prints_them(kubectl: Kubectl) -> None:
    objects = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "ci"}, "secrets": [{"name": "ci-token"}]},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "readers"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [
                {"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"},
                {"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"},
                {"kind": "ServiceAccount", "name": "ci", "namespace": "default"},
            ],
        },
        {
            "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
            "spec": {
                "ingressClassName": "nginx", "tls": [{"hosts": ["a.example"]}],
                "rules": [{"host": h} for h in ("a.example", "b.example", "c.example", "d.example")],
            },
        },
    ]  # fmt: skip
    for obj in objects:
        assert kubectl("create", "-f", "-", stdin=json.dumps(obj)).returncode == 0

    def table(*args: str) -> list[list[str]]:
        return [line.split() for line in kubectl("get", *args).stdout.splitlines()]

    assert table("serviceaccounts", "ci")[1][:2] == ["ci", "1"]
    header, row = table("rolebinding", "readers", "-o", "wide")
    assert header == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert row[:2] == ["readers", "Role/reader"] and row[3:] == ["bob", "devs", "default/ci"]
    assert table("role", "reader")[0] == ["NAME", "CREATED", "AT"]
    header, row = table("ingress", "web")
    assert header == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert row[:7] == ["web", "nginx", "a.example,b.example,c.example", "+", "1", "more...", "80,"]


def test_a_horizontal_pod_autoscaler_as_kubectl_shows_it(api: Api, kubectl: Kubectl) -> None:
    autoscaler = {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2, "maxReplicas": 10,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
                {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}},
                {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}},
            ],
        },
    }  # fmt: skip
    assert kubectl("apply", "-f", "-", stdin=json.dumps(autoscaler)).returncode == 0
    status = {"status": {"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}},
    ]}}  # fmt: skip
    path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web/status"
    assert api.patch(path, status, "application/merge-patch+json").status == 200
    header, row = kubectl("get", "hpa").stdout.splitlines()
    assert header.split() == [
        "NAME",
        "REFERENCE",
        "TARGETS",
        "MINPODS",
        "MAXPODS",
        "REPLICAS",
        "AGE",
    ]
    assert row.split()[:10] == [
        "web",
        "Deployment/web",
        "cpu:",
        "40%/80%,",
        "<unknown>/1k",
        "+",
        "1",
        "more...",
        "2",
        "10",
    ]
    wrong = {**autoscaler, "spec": {**autoscaler["spec"], "maxReplicas": 1}}
    refused = kubectl("apply", "-f", "-", stdin=json.dumps(wrong))
    assert (
        "spec.maxReplicas: Invalid value: 1: must be greater than or equal to `minReplicas`"
        in refused.stderr
    )


def test_a_namespace_s_quota_limits_and_network_policy_as_kubectl_shows_them(
    api: Api, kubectl: Kubectl
) -> None:
    objects = [
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute"},
         "spec": {"hard": {"requests.cpu": "2", "limits.memory": "4Gi", "pods": "10"}}},
        {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults"},
         "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"}}]}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "metadata": {"name": "web"},
         "spec": {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Ingress"]}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "metadata": {"name": "deny-all"}, "spec": {"podSelector": {}}},
    ]  # fmt: skip
    for obj in objects:
        created = kubectl("apply", "-f", "-", stdin=json.dumps(obj))
        assert created.returncode == 0, created.stderr

    def table(*args: str) -> list[list[str]]:
        return [line.split() for line in kubectl("get", *args).stdout.splitlines()]

    # kube-apiserver's quota controller writes the status; the hub runs none, so here the API.
    status = {"status": {"hard": {"requests.cpu": "2", "limits.memory": "4Gi", "pods": "10"},
                         "used": {"requests.cpu": "500m", "pods": "3"}}}  # fmt: skip
    path = "/api/v1/namespaces/default/resourcequotas/compute/status"
    assert api.patch(path, status, "application/merge-patch+json").status == 200
    header, row = table("quota")
    assert header == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert row[0] == "compute"
    assert row[2:] == ["pods:", "3/10,", "requests.cpu:", "500m/2", "limits.memory:", "0/4Gi"]
    assert table("limits")[0] == ["NAME", "CREATED", "AT"]
    header, *rows = table("netpol")
    assert header == ["NAME", "POD-SELECTOR", "AGE"]
    assert [r[:2] for r in rows] == [["deny-all", "<none>"], ["web", "app=web"]]

    wrong = {**objects[0], "spec": {"hard": {"pods": "2.5"}}}
    refused = kubectl("apply", "-f", "-", stdin=json.dumps(wrong))
    assert 'spec.hard[pods]: Invalid value: "2.5": must be an integer' in refused.stderr
    bad_cidr = {**objects[3], "spec": {"podSelector": {}, "ingress": [
        {"from": [{"ipBlock": {"cidr": "10.0.0.0/33"}}]}]}}  # fmt: skip
    refused = kubectl("apply", "-f", "-", stdin=json.dumps(bad_cidr))
    assert 'spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/33"' in refused.stderr
    # As upstream's strategies: only the quota has a status subresource.
    assert api.get("/api/v1/namespaces/default/limitranges/defaults/status").status == 404
    netpol = "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/web/status"
    assert api.get(netpol).status == 404


def test_kubectl_autoscale_writes_v1_which_reads_back_as_v2(kubectl: Kubectl) -> None:
    assert kubectl("create", "deployment", "web", "--image=nginx").returncode == 0
    made = kubectl("autoscale", "deployment/web", "--max=5", "--cpu-percent=80")
    assert made.returncode == 0, made.stderr
    as_v2 = json.loads(kubectl("get", "hpa.v2.autoscaling", "web", "-o", "json").stdout)
    assert as_v2["spec"] == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 5,
        "metrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }
        ],
    }
    _header, row = kubectl("get", "hpa").stdout.splitlines()
    assert row.split()[:6] == ["web", "Deployment/web", "cpu:", "<unknown>/80%", "<unset>", "5"]
    as_v1 = json.loads(
        kubectl("get", "horizontalpodautoscalers.v1.autoscaling", "web", "-o", "json").stdout
    )
    assert as_v1["apiVersion"] == "autoscaling/v1"
    assert as_v1["spec"]["targetCPUUtilizationPercentage"] == 80
    assert "annotations" not in as_v1["metadata"]  # nothing v1 lacks to keep
    inverted = {**as_v1, "metadata": {"name": "inverted"},
                "spec": {**as_v1["spec"], "minReplicas": 7}}  # fmt: skip
    refused = kubectl("apply", "-f", "-", stdin=json.dumps(inverted))
    assert (  # admitted as the v2 it is stored as
        "spec.maxReplicas: Invalid value: 5: must be greater than or equal to `minReplicas`"
        in refused.stderr
    )
