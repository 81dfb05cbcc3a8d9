"""OCM's work agent on a simulated member with nodes: a ManifestWork's manifests go where a
Karmada Work's go (members/inside/): its workloads run as pods on the member's nodes, its
other objects are kept by the member's API server, and the AppliedManifestWork that owns
them is one of the member's objects; the work's update strategy, delete option, feedback
and conditions stay OCM's."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from fleetwarden.api.core import Taint
from fleetwarden.api.ocm.work import APPLIED_MANIFEST_WORK_KIND
from fleetwarden.members.inside.api_store import MEMBER_REGISTRY, MemberApiStore
from fleetwarden.members.inside.nodes import NodeSpec

from .test_ocm_work_agent import (
    CONFIG_MAP,
    DEPLOYMENT,
    MANIFEST_WORK,
    Fleet,
    Obj,
    conditions,
    config,
    config_map,
    deployment,
    edit_on_member,
    owners,
    values,
)

NODES = (NodeSpec("a"), NodeSpec("b"))
FEEDBACK = [config(DEPLOYMENT, feedbackRules=[{"type": "WellKnownStatus"}])]
ORPHAN = {"propagationPolicy": "Orphan"}
CONFIG_MAP_KIND = MEMBER_REGISTRY.info("v1", "ConfigMap")


def inside(fleet: Fleet, kind: str) -> dict[str, Obj]:
    """The member's objects of a kind, by name, as its API lists them."""
    kube = fleet.member.kube
    assert kube is not None
    return {o["metadata"]["name"]: o for o in kube.objects(fleet.clock.now()) if o["kind"] == kind}


def running_on(fleet: Fleet) -> list[str]:
    """The nodes of the member's running pods."""
    pods = inside(fleet, "Pod").values()
    return sorted(p["spec"]["nodeName"] for p in pods if p["status"]["phase"] == "Running")


def test_a_manifest_works_deployment_runs_as_pods_and_its_feedback_follows_them() -> None:
    fleet = Fleet(nodes=NODES, workload_ready_after=timedelta(seconds=25))
    fleet.apply(deployment(2), manifestConfigs=FEEDBACK)

    assert running_on(fleet) == ["a", "b"]  # LeastAllocated spreads them
    manifest = fleet.manifests()[0]
    assert values(manifest) == {"ReadyReplicas": 0, "Replicas": 2, "AvailableReplicas": 0}
    assert conditions(manifest)["Available"] == ("True", "ResourceAvailable")
    fleet.at(29)  # ready at 25s, but the agent reads status at its own pace
    assert values(fleet.manifests()[0])["ReadyReplicas"] == 0
    fleet.at(30)  # its poll
    assert values(fleet.manifests()[0]) == {
        "ReadyReplicas": 2,
        "Replicas": 2,
        "AvailableReplicas": 2,
    }
    # The Deployment and its AppliedManifestWork are objects of the member.
    applied = fleet.applied()
    assert applied is not None
    listed = inside(fleet, "AppliedManifestWork")[applied["metadata"]["name"]]
    assert listed["status"]["appliedResources"] == applied["status"]["appliedResources"]
    web = inside(fleet, "Deployment")["web"]
    assert owners(web) == [applied["metadata"]["name"]]
    assert applied["status"]["appliedResources"][0]["uid"] == web["metadata"]["uid"]
    assert web["status"]["readyReplicas"] == 2


def test_feedback_follows_pods_a_taint_evicts_and_the_work_stays_available() -> None:
    fleet = Fleet(nodes=(NodeSpec("a"),))
    fleet.apply(deployment(2), manifestConfigs=FEEDBACK)
    assert values(fleet.manifests()[0])["AvailableReplicas"] == 2

    taint = Taint(key="maintenance", effect="NoExecute")
    fleet.member.state = replace(fleet.member.state, nodes=(NodeSpec("a", taints=(taint,)),))
    fleet.at(10)  # the agent's next poll
    pods = inside(fleet, "Pod").values()
    assert [p["status"]["phase"] for p in pods] == ["Pending", "Pending"]
    assert values(fleet.manifests()[0]) == {
        "ReadyReplicas": 0,
        "Replicas": 2,
        "AvailableReplicas": 0,
    }
    # OCM's Available is the object's existence, not its replicas'.
    assert conditions(fleet.work()["status"])["Available"] == ("True", "ResourcesAvailable")

    fleet.member.state = replace(fleet.member.state, nodes=(NodeSpec("a"),))
    fleet.at(20)
    assert running_on(fleet) == ["a", "a"]
    assert values(fleet.manifests()[0])["AvailableReplicas"] == 2


def test_a_new_generation_of_the_deployment_rolls_out_through_the_work() -> None:
    fleet = Fleet(nodes=NODES)
    fleet.apply(deployment(2), manifestConfigs=FEEDBACK)
    fleet.apply(deployment(3), manifestConfigs=FEEDBACK)
    assert len(running_on(fleet)) == 3
    assert inside(fleet, "Deployment")["web"]["metadata"]["generation"] == 2
    assert values(fleet.manifests()[0])["Replicas"] == 3


def test_a_config_map_is_kept_by_the_member_and_goes_with_the_work() -> None:
    fleet = Fleet(nodes=NODES)
    fleet.apply(deployment(), config_map(mode="fast"))
    settings = inside(fleet, "ConfigMap")["settings"]
    assert settings["data"] == {"mode": "fast"}
    assert settings["metadata"]["uid"] and settings["metadata"]["resourceVersion"]
    applied = fleet.applied()
    assert applied is not None and owners(settings) == [applied["metadata"]["name"]]
    assert conditions(fleet.manifests()[1])["Available"] == ("True", "ResourceAvailable")

    fleet.apply(deployment(), config_map(mode="safe"))
    updated = inside(fleet, "ConfigMap")["settings"]
    assert (updated["data"], updated["metadata"]["uid"]) == (
        {"mode": "safe"}, settings["metadata"]["uid"],
    )  # fmt: skip

    fleet.delete()
    for kind in ("ConfigMap", "Deployment", "Pod", "AppliedManifestWork"):
        assert inside(fleet, kind) == {}, kind
    assert fleet.store.list(MANIFEST_WORK, "cluster1").items == []


def test_orphan_keeps_the_config_map_and_the_running_deployment() -> None:
    fleet = Fleet(nodes=NODES)
    fleet.apply(deployment(), config_map())
    assert owners(fleet.on_member(DEPLOYMENT)) != []
    # The owner reference goes from the running Deployment too (its metadata only).
    fleet.apply(deployment(), config_map(), deleteOption=ORPHAN)
    assert owners(fleet.on_member(DEPLOYMENT)) == owners(fleet.on_member(CONFIG_MAP)) == []
    assert inside(fleet, "Deployment")["web"]["metadata"]["generation"] == 1
    fleet.delete()
    assert list(inside(fleet, "ConfigMap")) == ["settings"]
    assert running_on(fleet) == ["a", "b"]
    assert inside(fleet, "AppliedManifestWork") == {}


def test_selectively_orphan_keeps_what_its_rules_name_and_deletes_the_rest() -> None:
    fleet = Fleet(nodes=NODES)
    rule = {"group": "", "resource": "configmaps", "namespace": "default", "name": "settings"}
    option = {"propagationPolicy": "SelectivelyOrphan",
              "selectivelyOrphans": {"orphaningRules": [rule]}}  # fmt: skip
    fleet.apply(deployment(), config_map(), deleteOption=option)
    fleet.delete()
    assert list(inside(fleet, "ConfigMap")) == ["settings"]
    assert inside(fleet, "Deployment") == inside(fleet, "Pod") == {}


def test_a_manifest_taken_out_of_the_work_goes_from_the_member() -> None:
    fleet = Fleet(nodes=NODES)
    fleet.apply(deployment(), config_map())
    fleet.apply(config_map())
    assert inside(fleet, "Deployment") == inside(fleet, "Pod") == {}
    assert list(inside(fleet, "ConfigMap")) == ["settings"]


def test_server_side_apply_keeps_what_someone_set_on_the_member() -> None:
    fleet = Fleet(nodes=NODES)
    ssa = [config(CONFIG_MAP, updateStrategy={"type": "ServerSideApply"})]
    fleet.apply(config_map(mode="a"), manifestConfigs=ssa)
    edit_on_member(fleet, CONFIG_MAP, {"data": {"mode": "b", "extra": "x"}})
    fleet.apply(config_map(mode="c"), manifestConfigs=ssa)
    assert inside(fleet, "ConfigMap")["settings"]["data"] == {"mode": "c", "extra": "x"}


def test_the_members_api_serves_the_applied_manifest_work_and_what_it_owns() -> None:
    fleet = Fleet(nodes=NODES)
    fleet.apply(deployment(), config_map())
    api = MemberApiStore()
    assert fleet.member.kube is not None
    api.publish(fleet.member.kube.objects(fleet.clock.now()))
    applied = api.store.list(APPLIED_MANIFEST_WORK_KIND, None).items
    assert [(a["metadata"].get("namespace"), a["spec"]["manifestWorkName"]) for a in applied] == [
        (None, "work1"),
    ]
    settings = api.store.get(CONFIG_MAP_KIND, "settings", "default")
    assert [o["kind"] for o in settings["metadata"]["ownerReferences"]] == ["AppliedManifestWork"]


def test_a_manifest_without_a_name_is_refused_by_the_member() -> None:
    fleet = Fleet(nodes=NODES)
    nameless = config_map()
    del nameless["metadata"]["name"]
    # Written past the hub's webhook, which refuses it there.
    fleet.store.create({"apiVersion": MANIFEST_WORK.api_version, "kind": "ManifestWork",
                        "metadata": {"name": "work1", "namespace": "cluster1"},
                        "spec": {"workload": {"manifests": [nameless]}}})  # fmt: skip
    fleet.driver.settle()
    work = fleet.store.get(MANIFEST_WORK, "work1", "cluster1")
    manifest = work["status"]["resourceStatus"]["manifests"][0]
    applied = next(c for c in manifest["conditions"] if c["type"] == "Applied")
    assert (applied["status"], applied["message"]) == (
        "False",
        'Failed to apply manifest: ConfigMap "" is invalid: metadata.name: Required value: '
        "name or generateName is required",
    )
    assert inside(fleet, "ConfigMap") == {}
