"""`fleetwarden up --members 2` and a CustomResourceDefinition, as a Karmada user goes: the
CRD applied to the hub, a custom resource and a ClusterPropagationPolicy through its API,
and the custom resource in a Work of each member's execution space. No restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fleetwarden.api.apiextensions import KIND as CRD
from fleetwarden.client.client import Client

from .test_up import CLUSTER, WORK, Hub, eventually, kill_leftover_agents, ready

MEMBERS = ("member1", "member2")
SETTINGS = ["--cluster-lease-duration=2s", "--cluster-status-update-frequency=1s"]

CRONTAB_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "crontabs.stable.example.com"},
    "spec": {
        "group": "stable.example.com",
        "scope": "Namespaced",
        "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
        "versions": [
            {"name": "v1", "served": True, "storage": True,
             "schema": {"openAPIV3Schema": {"type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True}}}
        ],
    },
}  # fmt: skip
CRONTAB: dict[str, Any] = {
    "apiVersion": "stable.example.com/v1",
    "kind": "CronTab",
    "metadata": {"name": "my-cron", "namespace": "default"},
    "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image"},
}
POLICY: dict[str, Any] = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "ClusterPropagationPolicy",
    "metadata": {"name": "crontabs"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "stable.example.com/v1", "kind": "CronTab"}],
        "placement": {"clusterAffinity": {"clusterNames": list(MEMBERS)}},
    },
}


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    hub = Hub(tmp_path, [f"--members={len(MEMBERS)}", *SETTINGS])
    try:
        yield hub
    finally:
        hub.stop()
        kill_leftover_agents(tmp_path / "members")


def established(client: Client) -> bool:
    conditions = client.get(CRD, CRD_NAME).get("status", {}).get("conditions", [])
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def serves_crontabs(client: Client, member: str) -> bool:
    """The member's agent reports the kind enabled (the scheduler's APIEnablement filter)."""
    enablements = client.get(CLUSTER, member).get("status", {}).get("apiEnablements", [])
    return any(
        e["groupVersion"] == "stable.example.com/v1"
        and {"name": "crontabs", "kind": "CronTab"} in e.get("resources", [])
        for e in enablements
    )


def manifests(client: Client, member: str) -> list[dict[str, Any]]:
    works = client.list(WORK, f"karmada-es-{member}")["items"]
    return [m for w in works for m in w["spec"]["workload"].get("manifests", [])]


CRD_NAME = CRONTAB_CRD["metadata"]["name"]


def test_a_custom_resource_is_propagated_to_every_member(hub: Hub) -> None:
    client = hub.start()
    eventually(lambda: all(ready(client, m) for m in MEMBERS), 20, "two Ready clusters")

    client.create(CRONTAB_CRD)
    eventually(lambda: established(client), 10, "the CRD established")
    eventually(
        lambda: all(serves_crontabs(client, m) for m in MEMBERS), 15, "members serving CronTabs"
    )
    client.create(CRONTAB)  # the client reads the hub's discovery again to find the kind
    client.create(POLICY)

    for member in MEMBERS:
        found = eventually(lambda m=member: manifests(client, m), 20, f"a Work on {member}")
        (manifest,) = found
        assert (manifest["apiVersion"], manifest["kind"]) == ("stable.example.com/v1", "CronTab")
        assert manifest["metadata"]["name"] == "my-cron"
        assert manifest["spec"] == CRONTAB["spec"]
