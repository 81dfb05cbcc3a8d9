"""`fleetwarden up --members 2` and an OverridePolicy, as a Karmada user goes with kubectl:
upstream's samples/nginx (a Deployment, its PropagationPolicy, its OverridePolicy) applied
to the hub, each member's Work carrying its own overrides; the policy changed and then
deleted with kubectl, the Works following; a policy the webhook refuses, refused; the
Deployment scaled with `kubectl scale`, its replicas divided anew."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import test_up_crd
from .test_up import Hub, eventually, ready

MEMBERS = test_up_crd.MEMBERS
hub = test_up_crd.hub  # the fixture: `up --members 2` with short leases

SAMPLES = Path(__file__).parents[1] / "data" / "karmada"
DEBIAN_KUBECTL = Path(__file__).parents[2] / ".ci" / "kubectl" / "usr" / "bin" / "kubectl"

Obj = dict[str, Any]


def kubectl_path() -> str:
    for path in (str(DEBIAN_KUBECTL), shutil.which("kubectl")):
        if path and os.access(path, os.X_OK):
            return path
    pytest.fail(f"no kubectl: neither {DEBIAN_KUBECTL} (.ci/run unpacks it) nor on PATH")


class Kubectl:
    def __init__(self, kubeconfig: Path) -> None:
        self.path, self.kubeconfig = kubectl_path(), kubeconfig

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.path, f"--kubeconfig={self.kubeconfig}", *args],
            input=stdin, capture_output=True, text=True, timeout=60,
        )  # fmt: skip

    def ok(self, *args: str, stdin: str | None = None) -> str:
        done = self.run(*args, stdin=stdin)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def apply(self, *docs: Obj) -> str:
        return self.ok("apply", "-f", "-", stdin=yaml.safe_dump_all(docs))

    def works(self, member: str) -> list[Obj]:
        listed = json.loads(self.ok("get", "works", "-n", f"karmada-es-{member}", "-o", "json"))
        items: list[Obj] = listed["items"]
        return items


def sample(name: str) -> Obj:
    doc: Obj = yaml.safe_load((SAMPLES / name).read_text())
    return doc


def manifest_of(kubectl: Kubectl, member: str) -> Obj | None:
    works = kubectl.works(member)
    return works[0]["spec"]["workload"]["manifests"][0] if works else None


def image_of(kubectl: Kubectl, member: str) -> str | None:
    manifest = manifest_of(kubectl, member)
    if manifest is None:
        return None
    image: str = manifest["spec"]["template"]["spec"]["containers"][0]["image"]
    return image


def images(kubectl: Kubectl) -> dict[str, str | None]:
    return {m: image_of(kubectl, m) for m in MEMBERS}


def replicas(kubectl: Kubectl) -> dict[str, int | None]:
    manifests = {m: manifest_of(kubectl, m) for m in MEMBERS}
    return {m: manifest and manifest["spec"].get("replicas") for m, manifest in manifests.items()}


def wait_for_images(kubectl: Kubectl, want: dict[str, str], what: str) -> None:
    seen: dict[str, str | None] = {}

    def arrived() -> bool:
        seen.update(images(kubectl))
        return seen == want

    try:
        eventually(arrived, 60, what)
    except AssertionError as timeout:
        raise AssertionError(f"{timeout}: the Works' images were {seen}") from None


def test_an_override_policy_through_kubectl(hub: Hub) -> None:
    client = hub.start()
    kubectl = Kubectl(hub.data_dir / "kubeconfig")
    eventually(lambda: all(ready(client, m) for m in MEMBERS), 20, "two Ready clusters")

    policy = sample("nginx-overridepolicy.yaml")
    image_rule = {
        "targetCluster": {"clusterNames": ["member1"]},
        "overriders": {
            "imageOverrider": [
                {"component": "Registry", "operator": "replace", "value": "eu.registry.example"}
            ]
        },
    }
    policy["spec"]["overrideRules"].append(image_rule)
    kubectl.apply(sample("nginx-deployment.yaml"), sample("nginx-propagationpolicy.yaml"), policy)
    assert "nginx-op" in kubectl.ok("get", "op")  # the short name, as upstream's CRD has it

    want = {"member1": "eu.registry.example/nginx", "member2": "nginx"}
    wait_for_images(kubectl, want, "each member's image")
    # member2's image is the template's with or without the policy: its label tells.
    member2 = eventually(
        lambda: (
            (manifest := manifest_of(kubectl, "member2"))
            and "env" in manifest["metadata"].get("labels", {})
            and manifest
        ),
        60,
        "member2's labels overridden",
    )
    assert member2["metadata"]["labels"]["env"] == "skoala-dev"
    work = kubectl.works("member1")[0]
    applied = json.loads(work["metadata"]["annotations"]["policy.karmada.io/applied-overrides"])
    # One item per rule that applied: the sample's annotations rule and the image one.
    assert [item["policyName"] for item in applied] == ["nginx-op", "nginx-op"]
    events = kubectl.ok(
        "get", "events", "--field-selector", "reason=ApplyOverridePolicySucceed", "-o", "json"
    )
    messages = {e["message"] for e in json.loads(events)["items"]}
    assert "Apply override policy(default/nginx-op) for cluster(member1) succeed." in messages

    # Changed: the image rule now targets member2.
    image_rule["targetCluster"] = {"clusterNames": ["member2"]}
    kubectl.apply(policy)
    want = {"member1": "nginx", "member2": "eu.registry.example/nginx"}
    wait_for_images(kubectl, want, "the Works rendered again")

    # Deleted: the template's image everywhere.
    kubectl.ok("delete", "overridepolicy", "nginx-op")
    wait_for_images(kubectl, {m: "nginx" for m in MEMBERS}, "the Works without overrides")

    refused = kubectl.run(
        "apply", "-f", "-",
        stdin=yaml.safe_dump({
            "apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterOverridePolicy",
            "metadata": {"name": "bad"},
            "spec": {"overrideRules": [{"overriders": {"fieldOverrider": [{"fieldPath": "/data/x"}]}}]},
        }),
    )  # fmt: skip
    assert refused.returncode != 0
    assert "FieldOverrider must have either JSON or YAML set" in refused.stderr

    # Scaled through the /scale subresource, as `kubectl scale` and a FederatedHPA do: the
    # static weights (1:1) divide the new replicas.
    assert (
        kubectl.ok("scale", "deployment/nginx", "--replicas=4") == "deployment.apps/nginx scaled\n"
    )
    want_replicas = {"member1": 2, "member2": 2}
    eventually(lambda: replicas(kubectl) == want_replicas, 60, "the Works scaled to 2 each")
