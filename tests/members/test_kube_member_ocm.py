"""OCM's work agent with a real member cluster (members/kube.py's KubeSpoke): the agent of
`fleetwarden agent --mode ocm --member-kubeconfig`, joined to a hub in this process, applies
the ManifestWorks of its cluster's namespace to the member's API server (ours, over a
MemoryStore, as in test_kube_member.py) and reports their status on the hub."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fleetwarden.api.registry import REGISTRY
from fleetwarden.cli.up import agent_flags, fleetwarden_command
from fleetwarden.client.client import Client
from fleetwarden.members.agent import Agent, OcmJoin
from fleetwarden.members.kube import APPLIED_MANIFEST_WORK_CRD, KubeCluster
from fleetwarden.members.work_agent import hub_hash

from .test_agent import SETTINGS, eventually
from .test_kube_member import Member, deployment, gone, hub, kube, member

__all__ = ["hub", "kube", "member"]  # the fixtures this module shares

MANAGED_CLUSTER = REGISTRY.info("cluster.open-cluster-management.io/v1", "ManagedCluster")
MANIFEST_WORK = REGISTRY.info("work.open-cluster-management.io/v1", "ManifestWork")
NAMESPACE = REGISTRY.info("v1", "Namespace")
CONFIG_MAP = REGISTRY.info("v1", "ConfigMap")
CRD = REGISTRY.info("apiextensions.k8s.io/v1", "CustomResourceDefinition")
TIMEOUT = 60  # a loaded 2-core machine runs the hub, the agent and the member at once

Obj = dict[str, Any]


@pytest.fixture
def join(hub: Client, kube: KubeCluster) -> Iterator[Callable[[], Agent]]:
    """cluster1's registration and work agents, accepted, with the real member."""
    agents: list[Agent] = []

    def start() -> Agent:
        ocm = OcmJoin(accept=True, lease_duration_seconds=1)
        agent = Agent(hub.copy(), "cluster1", SETTINGS, mode="OCM", ocm=ocm, member=kube)
        agent.start()
        agents.append(agent)
        eventually(lambda: hub.get(NAMESPACE, "cluster1"), TIMEOUT)
        return agent

    yield start
    for agent in agents:
        agent.stop()
        agent.client.close()  # its watches open, the hub's server would wait them out


def config_map(name: str = "settings", **data: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": data or {"mode": "a"},
    }


def manifest_work(*manifests: Obj, **spec: Any) -> Obj:
    return {
        "apiVersion": MANIFEST_WORK.api_version,
        "kind": "ManifestWork",
        "metadata": {"name": "web", "namespace": "cluster1"},
        "spec": {"workload": {"manifests": list(manifests)}, **spec},
    }


def config(resource: str, name: str, **option: Any) -> Obj:
    identifier = {"group": "apps" if resource == "deployments" else "", "resource": resource,
                  "namespace": "default", "name": name}  # fmt: skip
    return {"resourceIdentifier": identifier, **option}


def work_conditions(hub: Client) -> dict[str, str]:
    status = hub.get(MANIFEST_WORK, "web", "cluster1").get("status", {})
    return {c["type"]: c["status"] for c in status.get("conditions", [])}


def manifest_statuses(hub: Client) -> list[Obj]:
    status = hub.get(MANIFEST_WORK, "web", "cluster1").get("status", {})
    return list(status.get("resourceStatus", {}).get("manifests", []))


def owners(obj: Obj) -> list[str]:
    return [o["kind"] for o in obj["metadata"].get("ownerReferences", [])]


def test_a_manifest_work_is_applied_to_the_real_member_reported_and_cleaned_up(
    hub: Client, member: Member, join: Callable[[], Agent]
) -> None:
    join()
    feedback = [{"type": "WellKnownStatus"}]
    hub.create(
        manifest_work(deployment(), config_map(),
                      manifestConfigs=[config("deployments", "nginx", feedbackRules=feedback)]),
        info=MANIFEST_WORK,
    )  # fmt: skip

    # The work's objects on the member, and its bookkeeping in the klusterlet's CRD.
    on_member = eventually(member.deployment, TIMEOUT)
    assert member.store.get(CRD, APPLIED_MANIFEST_WORK_CRD["metadata"]["name"])
    assert eventually(lambda: member.store.get(CONFIG_MAP, "settings", "default"), TIMEOUT)
    applied_name = f"{hub_hash(hub.server)}-web"

    def applied_manifest_work() -> Obj:
        return member.store.get(applied_manifest_works(member), applied_name)

    applied = eventually(
        lambda: (obj := applied_manifest_work()).get("status", {}).get("appliedResources") and obj,
        TIMEOUT,
    )
    assert applied["spec"]["manifestWorkName"] == "web"
    assert [(r["resource"], r["name"]) for r in applied["status"]["appliedResources"]] == [
        ("configmaps", "settings"),
        ("deployments", "nginx"),
    ]
    assert owners(on_member) == ["AppliedManifestWork"]
    assert on_member["metadata"]["ownerReferences"][0]["uid"] == applied["metadata"]["uid"]

    # Status on the hub: applied, available, and the Deployment's well-known feedback once
    # the member's deployment controller (the test) reports it.
    eventually(lambda: work_conditions(hub) == {"Applied": "True", "Available": "True"}, TIMEOUT)
    member.write_status("nginx", replicas=2, readyReplicas=2, availableReplicas=1)

    def deployment_feedback() -> dict[str, Any]:
        values = manifest_statuses(hub)[0].get("statusFeedback", {}).get("values", [])
        return {v["name"]: v["fieldValue"]["integer"] for v in values}

    eventually(
        lambda: (
            deployment_feedback() == {"ReadyReplicas": 2, "Replicas": 2, "AvailableReplicas": 1}
        ),
        TIMEOUT,
    )

    # Deleted on the hub: the objects go from the member, then the bookkeeping, then the work.
    hub.delete(MANIFEST_WORK, "web", "cluster1")
    eventually(lambda: gone(lambda: hub.get(MANIFEST_WORK, "web", "cluster1")), TIMEOUT)
    assert gone(member.deployment)
    assert gone(lambda: member.store.get(CONFIG_MAP, "settings", "default"))
    assert gone(applied_manifest_work)


def applied_manifest_works(member: Member) -> Any:
    """The kind the CRD the agent installed serves on the member (not a kind of the hub's)."""
    return member.registry.info("work.open-cluster-management.io/v1", "AppliedManifestWork")


def test_orphan_leaves_the_objects_on_the_member_without_the_works_owner(
    hub: Client, member: Member, join: Callable[[], Agent]
) -> None:
    join()
    orphan = {"propagationPolicy": "Orphan"}
    hub.create(manifest_work(deployment(), deleteOption=orphan), info=MANIFEST_WORK)
    eventually(lambda: work_conditions(hub).get("Applied") == "True", TIMEOUT)
    assert owners(member.deployment()) == []

    hub.delete(MANIFEST_WORK, "web", "cluster1")
    eventually(lambda: gone(lambda: hub.get(MANIFEST_WORK, "web", "cluster1")), TIMEOUT)
    assert member.deployment()["spec"]["replicas"] == 2


def test_selectively_orphan_keeps_only_what_its_rules_name(
    hub: Client, member: Member, join: Callable[[], Agent]
) -> None:
    join()
    rules = [{"group": "", "resource": "configmaps", "namespace": "default", "name": "keep"}]
    option = {
        "propagationPolicy": "SelectivelyOrphan",
        "selectivelyOrphans": {"orphaningRules": rules},
    }
    hub.create(
        manifest_work(config_map("keep"), config_map("drop"), deleteOption=option),
        info=MANIFEST_WORK,
    )
    eventually(lambda: work_conditions(hub).get("Applied") == "True", TIMEOUT)
    hub.delete(MANIFEST_WORK, "web", "cluster1")
    eventually(lambda: gone(lambda: hub.get(MANIFEST_WORK, "web", "cluster1")), TIMEOUT)
    assert member.store.get(CONFIG_MAP, "keep", "default")["data"] == {"mode": "a"}
    assert gone(lambda: member.store.get(CONFIG_MAP, "drop", "default"))


def test_update_strategies_on_the_real_member(
    hub: Client, member: Member, join: Callable[[], Agent]
) -> None:
    """Update writes the manifest over the member's copy; ServerSideApply keeps the fields
    it does not set; CreateOnly never writes over what is there; ReadOnly writes nothing
    and reads the member's object back as feedback."""
    for name, data in (("created-only", {"mode": "theirs"}), ("read-only", {"mode": "ro"})):
        member.store.create(config_map(name, **data))
    join()
    feedback = [{"type": "JSONPaths", "jsonPaths": [{"name": "mode", "path": ".data.mode"}]}]
    configs = [
        config("configmaps", "server-side", updateStrategy={"type": "ServerSideApply"}),
        config("configmaps", "created-only", updateStrategy={"type": "CreateOnly"}),
        config("configmaps", "read-only", updateStrategy={"type": "ReadOnly"},
               feedbackRules=feedback),
    ]  # fmt: skip
    hub.create(
        manifest_work(config_map("updated", mode="a"), config_map("server-side", mode="a"),
                      config_map("created-only", mode="ours"), config_map("read-only", mode="x"),
                      manifestConfigs=configs),
        info=MANIFEST_WORK,
    )  # fmt: skip
    eventually(lambda: work_conditions(hub) == {"Applied": "True", "Available": "True"}, TIMEOUT)

    def data(name: str) -> dict[str, str]:
        return dict(member.store.get(CONFIG_MAP, name, "default")["data"])

    # The member's side adds a key to the objects the work wrote; the work changes its mode.
    for name in ("updated", "server-side"):
        on_member = member.store.get(CONFIG_MAP, name, "default")
        on_member["data"]["extra"] = "theirs"
        member.store.update(on_member)
    stored = hub.get(MANIFEST_WORK, "web", "cluster1")
    stored["spec"]["workload"]["manifests"][:2] = [
        config_map("updated", mode="b"),
        config_map("server-side", mode="b"),
    ]
    hub.update(stored, info=MANIFEST_WORK)
    eventually(lambda: data("updated") == {"mode": "b"}, TIMEOUT)
    eventually(lambda: data("server-side") == {"mode": "b", "extra": "theirs"}, TIMEOUT)
    assert data("created-only") == {"mode": "theirs"}
    assert data("read-only") == {"mode": "ro"}
    assert owners(member.store.get(CONFIG_MAP, "read-only", "default")) == []
    read_only = next(m for m in manifest_statuses(hub) if m["resourceMeta"]["name"] == "read-only")
    assert read_only["statusFeedback"]["values"] == [
        {"name": "mode", "fieldValue": {"type": "String", "string": "ro"}}
    ]


def test_what_the_member_refuses_is_reported_and_the_rest_applied(
    hub: Client, member: Member, join: Callable[[], Agent]
) -> None:
    join()
    widget = {"apiVersion": "example.com/v1", "kind": "Widget",
              "metadata": {"name": "w", "namespace": "default"}}  # fmt: skip
    hub.create(manifest_work(widget, config_map()), info=MANIFEST_WORK)
    eventually(lambda: work_conditions(hub) == {"Applied": "False", "Available": "False"}, TIMEOUT)
    failed, applied = manifest_statuses(hub)
    assert {c["type"]: (c["status"], c["message"]) for c in failed["conditions"]}["Applied"] == (
        "False",
        'Failed to apply manifest: no matches for kind "Widget" in version "example.com/v1"',
    )
    assert {c["type"]: c["status"] for c in applied["conditions"]}["Applied"] == "True"
    assert member.store.get(CONFIG_MAP, "settings", "default")


def test_a_deleted_work_waits_for_the_members_finalizers(
    hub: Client, member: Member, join: Callable[[], Agent]
) -> None:
    join()
    hub.create(manifest_work(config_map()), info=MANIFEST_WORK)
    on_member = eventually(lambda: member.store.get(CONFIG_MAP, "settings", "default"), TIMEOUT)
    on_member["metadata"]["finalizers"] = ["example.com/protect"]
    member.store.update(on_member)
    eventually(lambda: work_conditions(hub).get("Applied") == "True", TIMEOUT)

    hub.delete(MANIFEST_WORK, "web", "cluster1")
    deleting = eventually(
        lambda: member.store.get(CONFIG_MAP, "settings", "default")["metadata"].get(
            "deletionTimestamp"
        ),
        TIMEOUT,
    )
    assert deleting
    assert hub.get(MANIFEST_WORK, "web", "cluster1")["metadata"]["finalizers"] == [
        "cluster.open-cluster-management.io/manifest-work-cleanup"
    ]
    held = member.store.get(CONFIG_MAP, "settings", "default")
    held["metadata"]["finalizers"] = []
    member.store.update(held)
    eventually(lambda: gone(lambda: hub.get(MANIFEST_WORK, "web", "cluster1")), TIMEOUT)


def test_fleetwarden_agent_in_ocm_mode_applies_manifest_works_to_its_member_kubeconfig(
    hub: Client, member: Member, tmp_path: Path
) -> None:
    kubeconfig = tmp_path / "admin.kubeconfig"  # as the admin_client fixture wrote it
    command = fleetwarden_command(
        "agent", f"--hub-kubeconfig={kubeconfig}", "--cluster-name=cluster1", "--mode=ocm",
        "--accept", f"--member-kubeconfig={member.kubeconfig}", "--exit-on-stdin-close",
        *agent_flags(SETTINGS),
    )  # fmt: skip
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as agent:
        try:
            eventually(lambda: hub.get(NAMESPACE, "cluster1"), TIMEOUT)
            hub.create(manifest_work(config_map()), info=MANIFEST_WORK)
            eventually(lambda: member.store.get(CONFIG_MAP, "settings", "default"), TIMEOUT)
            eventually(lambda: work_conditions(hub).get("Available") == "True", TIMEOUT)
            applied = member.store.list(applied_manifest_works(member)).items
            assert [a["metadata"]["name"] for a in applied] == [f"{hub_hash(hub.server)}-web"]
        finally:
            agent.communicate(timeout=10)  # its standard input closes: it stops
    assert agent.returncode == 0
