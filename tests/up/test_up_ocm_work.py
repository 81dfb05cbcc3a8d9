"""`fleetwarden up --ocm-members 2` end to end with kubectl: a ManifestWorkReplicaSet over a
Placement of both clusters, applied with `kubectl apply`, makes a ManifestWork in each
cluster's namespace, which that cluster's agent (a process of its own, its work agent acting
with the cluster's identity) applies and reports Applied and Available; `kubectl get`
reads the replica set's summary. Deleting the replica set with kubectl deletes the works,
each once its agent has cleaned up and released it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetwarden.api.registry import REGISTRY

from .test_up import Hub, eventually, kill_leftover_agents
from .test_up_ocm import CLUSTERS, PLACEMENT_OBJECTS, available

ROOT = Path(__file__).parents[2]
DEBIAN_KUBECTL = ROOT / ".ci" / "kubectl" / "usr" / "bin" / "kubectl"
MANIFEST_WORK = REGISTRY.info("work.open-cluster-management.io/v1", "ManifestWork")
OWNER = "work.open-cluster-management.io/manifestworkreplicaset=default.web"
REPLICA_SET = {
    "apiVersion": "work.open-cluster-management.io/v1alpha1",
    "kind": "ManifestWorkReplicaSet",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "placementRefs": [{"name": "everywhere"}],
        "manifestWorkTemplate": {
            "workload": {"manifests": [{
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}},
                                      "spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
            }]},
        },
    },
}  # fmt: skip


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    hub = Hub(tmp_path, ["--ocm-members=2", "--ocm-lease-duration-seconds=2"])
    try:
        yield hub
    finally:
        hub.stop()
        kill_leftover_agents(tmp_path / "members")


def kubectl(hub: Hub, *args: str, stdin: str | None = None) -> str:
    path = next((str(p) for p in (DEBIAN_KUBECTL, shutil.which("kubectl")) if p and
                 os.access(p, os.X_OK)), None)  # fmt: skip
    assert path, f"no kubectl: neither {DEBIAN_KUBECTL} (.ci/run unpacks it) nor on PATH"
    env = {"KUBECONFIG": str(hub.data_dir / "kubeconfig"), "HOME": str(hub.data_dir)}
    done = subprocess.run([path, *args], input=stdin, capture_output=True, text=True, env=env,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def works(hub: Hub) -> list[dict[str, Any]]:
    listed = json.loads(kubectl(hub, "get", "manifestworks", "-A", "-l", OWNER, "-o", "json"))
    return list(listed["items"])


def work_states(hub: Hub) -> list[tuple[str, str | None]]:
    return sorted(
        (w["metadata"]["namespace"], next((c["status"] for c in w.get("status", {})
              .get("conditions", []) if c["type"] == "Available"), None))
        for w in works(hub)
    )  # fmt: skip


def test_a_replica_set_applied_with_kubectl_runs_on_both_agents(hub: Hub) -> None:
    client = hub.start()
    eventually(lambda: all(available(client, c) == "True" for c in CLUSTERS), 30, "Available")
    documents = [*PLACEMENT_OBJECTS, REPLICA_SET]
    kubectl(hub, "apply", "-f", "-", stdin=yaml.safe_dump_all(documents))
    both = [(c, "True") for c in CLUSTERS]
    eventually(lambda: work_states(hub) == both or None, 30, "both works Available")
    for work in works(hub):
        assert (
            "cluster.open-cluster-management.io/manifest-work-cleanup"
            in (work["metadata"]["finalizers"])
        )
        (manifest,) = work["status"]["resourceStatus"]["manifests"]
        assert manifest["resourceMeta"]["kind"] == "Deployment"
    summary = json.loads(kubectl(hub, "get", "mwrs", "web", "-o", "jsonpath={.status.summary}"))
    assert summary["total"] == 2
    eventually(
        lambda: json.loads(kubectl(hub, "get", "mwrs", "web", "-o",
                                   "jsonpath={.status.summary}"))["available"] == 2 or None,
        15, "the summary counting both works available",
    )  # fmt: skip

    kubectl(hub, "delete", "mwrs", "web", "--wait=false")
    eventually(lambda: works(hub) == [] or None, 30, "the works cleaned up and gone")
    assert client.list(MANIFEST_WORK)["items"] == []
