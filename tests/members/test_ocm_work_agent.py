"""OCM's work agent on a simulated member: ManifestWorks in the cluster's namespace applied
to the member's objects by their update strategy, their status and feedback reported, and
what they applied cleaned up by their delete option. Cases after ocm
pkg/work/spoke/controllers/*_test.go and pkg/work/spoke/statusfeedback/reader_test.go."""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

from fleetwarden.admission import default_chain
from fleetwarden.api.errors import NotFound
from fleetwarden.api.registry import REGISTRY
from fleetwarden.members.simulated import (
    SIMULATED_HUB_URL,
    MemberState,
    RunningMembers,
    SimulatedCluster,
)
from fleetwarden.members.work_agent import ObjectRef, applied_ref, hub_hash
from fleetwarden.runtime.clock import DEFAULT_EPOCH, VirtualClock
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver
from fleetwarden.store import MemoryStore

MANAGED_CLUSTER = REGISTRY.info("cluster.open-cluster-management.io/v1", "ManagedCluster")
MANIFEST_WORK = REGISTRY.info("work.open-cluster-management.io/v1", "ManifestWork")
FINALIZER = "cluster.open-cluster-management.io/manifest-work-cleanup"
DEPLOYMENT = ObjectRef("apps", "v1", "deployments", "default", "web")
CONFIG_MAP = ObjectRef("", "v1", "configmaps", "default", "settings")

Obj = dict[str, Any]


def deployment(replicas: int = 2, **metadata: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", **metadata},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "c"}]}}},
    }


def config_map(**data: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "default"},
        "data": data or {"mode": "a"},
    }


def config(ref: ObjectRef, **option: Any) -> Obj:
    identifier = {"group": ref.group, "resource": ref.resource,
                  "namespace": ref.namespace, "name": ref.name}  # fmt: skip
    return {"resourceIdentifier": identifier, **option}


class Fleet:
    """cluster1, a ManagedCluster the hub accepted, backed by a simulated member (with
    `nodes`, one whose workloads run as pods) whose agents run on a virtual clock."""

    def __init__(self, **state: Any) -> None:
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        self.member = SimulatedCluster(MemberState(**state), [])
        accepted = {"type": "HubAcceptedManagedCluster", "status": "True", "reason": "Accepted",
                    "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z"}  # fmt: skip
        cluster = self.store.create({"apiVersion": MANAGED_CLUSTER.api_version,
                                     "kind": "ManagedCluster", "metadata": {"name": "cluster1"},
                                     "spec": {"hubAcceptsClient": True}})  # fmt: skip
        self.store.update({**cluster, "status": {"conditions": [accepted]}}, subresource="status")
        manager = ControllerManager(self.store, self.clock)
        manager.add(RunningMembers({"cluster1": self.member}).controller())
        self.driver = VirtualDriver(manager)
        self.driver.start()
        self.driver.settle()

    def at(self, seconds: float) -> None:
        self.driver.run_until(DEFAULT_EPOCH + timedelta(seconds=seconds))

    def apply(self, *manifests: Obj, name: str = "work1", **spec: Any) -> None:
        """Create or replace the work's spec, admitted as the API server would."""
        obj = {"apiVersion": MANIFEST_WORK.api_version, "kind": "ManifestWork",
               "metadata": {"name": name, "namespace": "cluster1"},
               "spec": {"workload": {"manifests": list(manifests)}, **spec}}  # fmt: skip
        try:
            current = self.store.get(MANIFEST_WORK, name, "cluster1")
        except NotFound:
            self.store.create(default_chain().admit(obj, now=self.clock.now()).to_dict())
        else:
            old = REGISTRY.decode(current)
            given = {**current, "spec": obj["spec"]}
            self.store.update(default_chain().admit(given, old, now=self.clock.now()).to_dict())
        self.driver.settle()

    def delete(self, name: str = "work1") -> None:
        self.store.delete(MANIFEST_WORK, name, "cluster1")
        self.driver.settle()

    def work(self, name: str = "work1") -> Obj:
        """The work as stored; what the agent wrote passes the CRD's validation."""
        work = self.store.get(MANIFEST_WORK, name, "cluster1")
        default_chain().admit(work, REGISTRY.decode(work), now=self.clock.now())
        return work

    def manifests(self, name: str = "work1") -> list[Obj]:
        return list(self.work(name)["status"]["resourceStatus"]["manifests"])

    def on_member(self, ref: ObjectRef) -> Obj | None:
        return self.member.spoke(self.clock.now()).get(ref)

    def applied(self, name: str = "work1") -> Obj | None:
        return self.on_member(applied_ref(hub_hash(SIMULATED_HUB_URL), name))


def conditions(obj: Obj) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in obj.get("conditions", [])}


def values(manifest: Obj) -> dict[str, Any]:
    return {
        v["name"]: next(x for k, x in v["fieldValue"].items() if k != "type")
        for v in manifest.get("statusFeedback", {}).get("values", [])
    }


def owners(obj: Obj | None) -> list[str]:
    assert obj is not None
    return [o["name"] for o in obj["metadata"].get("ownerReferences", [])]


# --- applying and status -------------------------------------------------------------------------


def test_a_work_is_applied_and_reported_with_its_applied_manifest_work() -> None:
    fleet = Fleet()
    fleet.apply(deployment(), config_map())
    work = fleet.work()
    assert FINALIZER in work["metadata"]["finalizers"]
    assert conditions(work["status"]) == {
        "Applied": ("True", "AppliedManifestWorkComplete"),
        "Available": ("True", "ResourcesAvailable"),
    }
    # Reported in the spec's order, though the ConfigMap went first.
    manifests = fleet.manifests()
    assert [m["resourceMeta"] for m in manifests] == [
        {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
         "resource": "deployments", "name": "web", "namespace": "default"},
        {"ordinal": 1, "group": "", "version": "v1", "kind": "ConfigMap",
         "resource": "configmaps", "name": "settings", "namespace": "default"},
    ]  # fmt: skip
    assert conditions(manifests[0]) == {
        "Applied": ("True", "AppliedManifestComplete"),
        "Available": ("True", "ResourceAvailable"),
        "StatusFeedbackSynced": ("True", "NoStatusFeedbackSynced"),
    }
    applied = fleet.applied()
    assert applied is not None
    assert applied["spec"]["manifestWorkName"] == "work1"
    resources = applied["status"]["appliedResources"]
    assert [(r["resource"], r["name"]) for r in resources] == [
        ("configmaps", "settings"),
        ("deployments", "web"),
    ]
    on_member = fleet.on_member(DEPLOYMENT)
    assert on_member is not None and owners(on_member) == [applied["metadata"]["name"]]
    assert resources[1]["uid"] == on_member["metadata"]["uid"]


def test_well_known_status_follows_the_deployment_as_the_agent_polls_it() -> None:
    fleet = Fleet(workload_ready_after=timedelta(seconds=25))
    rules = [{"type": "WellKnownStatus"}]
    fleet.apply(deployment(3), manifestConfigs=[config(DEPLOYMENT, feedbackRules=rules)])
    manifest = fleet.manifests()[0]
    assert values(manifest) == {"ReadyReplicas": 0, "Replicas": 3, "AvailableReplicas": 0}
    assert conditions(manifest)["StatusFeedbackSynced"] == ("True", "StatusFeedbackSynced")
    fleet.at(29)  # ready at 25s, seen at the poll of 30s
    assert values(fleet.manifests()[0])["ReadyReplicas"] == 0
    fleet.at(30)
    assert values(fleet.manifests()[0]) == {
        "ReadyReplicas": 3,
        "Replicas": 3,
        "AvailableReplicas": 3,
    }


def test_json_paths_feedback_reads_scalars_and_reports_what_it_cannot() -> None:
    fleet = Fleet()
    paths = [
        {"name": "replicas", "path": ".status.replicas"},
        {"name": "generation", "path": ".observedGeneration"},  # not under the object: nothing
        {"name": "whole", "path": ".status"},
        {"name": "v2", "version": "v2", "path": ".status.replicas"},
    ]
    rules = [{"type": "JSONPaths", "jsonPaths": paths}]
    fleet.apply(deployment(), manifestConfigs=[config(DEPLOYMENT, feedbackRules=rules)])
    manifest = fleet.manifests()[0]
    assert values(manifest) == {"replicas": 2}
    synced = next(c for c in manifest["conditions"] if c["type"] == "StatusFeedbackSynced")
    assert (synced["status"], synced["reason"]) == ("False", "StatusFeedbackSyncFailed")
    assert synced["message"] == (
        "Sync status feedback failed with error [the type map[string]interface {} of the value "
        "for whole is not found, version set in the path v2 is not matched for the related "
        "resource]"
    )


def test_well_known_status_of_a_kind_without_rules_fails_the_sync() -> None:
    fleet = Fleet()
    rules = [{"type": "WellKnownStatus"}]
    fleet.apply(config_map(), manifestConfigs=[config(CONFIG_MAP, feedbackRules=rules)])
    synced = next(
        c for c in fleet.manifests()[0]["conditions"] if c["type"] == "StatusFeedbackSynced"
    )
    assert synced["message"] == (
        "Sync status feedback failed with error cannot find the wellknown statuses for "
        "resource with gvk /v1, Kind=ConfigMap"
    )


def test_a_namespaced_manifest_without_namespace_fails_to_apply() -> None:
    fleet = Fleet()
    nameless = config_map()
    del nameless["metadata"]["namespace"]
    fleet.apply(deployment(), nameless)
    work = fleet.work()
    assert conditions(work["status"])["Applied"] == ("False", "AppliedManifestWorkFailed")
    failed = fleet.manifests()[1]
    applied = next(c for c in failed["conditions"] if c["type"] == "Applied")
    assert applied["message"] == (
        "Failed to apply manifest: the server could not find the requested resource"
    )
    assert conditions(failed)["Available"] == ("False", "ResourceNotAvailable")
    assert conditions(work["status"])["Available"][0] == "False"


# --- update strategies ---------------------------------------------------------------------------


def edit_on_member(fleet: Fleet, ref: ObjectRef, change: Obj) -> None:
    """Someone on the member changes the object."""
    spoke = fleet.member.spoke(fleet.clock.now())
    obj = spoke.get(ref)
    assert obj is not None
    spoke.update(ref, {**obj, **change})


def test_update_writes_the_manifest_over_the_members_object() -> None:
    fleet = Fleet()
    fleet.apply(config_map(mode="a"))
    edit_on_member(fleet, CONFIG_MAP, {"data": {"mode": "b", "extra": "x"}})
    fleet.apply(config_map(mode="c"))
    assert fleet.on_member(CONFIG_MAP)["data"] == {"mode": "c"}  # type: ignore[index]


def test_server_side_apply_keeps_the_fields_the_manifest_does_not_set() -> None:
    fleet = Fleet()
    ssa = [config(CONFIG_MAP, updateStrategy={"type": "ServerSideApply"})]
    fleet.apply(config_map(mode="a"), manifestConfigs=ssa)
    edit_on_member(fleet, CONFIG_MAP, {"data": {"mode": "b", "extra": "x"}})
    fleet.apply(config_map(mode="c"), manifestConfigs=ssa)
    assert fleet.on_member(CONFIG_MAP)["data"] == {"mode": "c", "extra": "x"}  # type: ignore[index]


def test_create_only_never_updates_what_exists() -> None:
    fleet = Fleet()
    create_only = [config(CONFIG_MAP, updateStrategy={"type": "CreateOnly"})]
    fleet.apply(config_map(mode="a"), manifestConfigs=create_only)
    fleet.apply(config_map(mode="c"), manifestConfigs=create_only)
    assert fleet.on_member(CONFIG_MAP)["data"] == {"mode": "a"}  # type: ignore[index]


def test_read_only_creates_nothing_reads_what_is_there_and_never_deletes_it() -> None:
    fleet = Fleet()
    read_only = [
        config(DEPLOYMENT, updateStrategy={"type": "ReadOnly"},
               feedbackRules=[{"type": "WellKnownStatus"}]),
    ]  # fmt: skip
    fleet.apply(deployment(), manifestConfigs=read_only)
    assert fleet.on_member(DEPLOYMENT) is None
    assert conditions(fleet.manifests()[0])["Available"] == ("False", "ResourceNotAvailable")
    assert conditions(fleet.work()["status"])["Available"][0] == "False"
    spoke = fleet.member.spoke(fleet.clock.now())
    spoke.create(DEPLOYMENT, deployment(5))
    fleet.at(10)  # the next status poll
    assert conditions(fleet.manifests()[0])["Available"] == ("True", "ResourceAvailable")
    assert values(fleet.manifests()[0])["Replicas"] == 5
    fleet.delete()
    assert fleet.on_member(DEPLOYMENT) is not None


# --- cleanup -------------------------------------------------------------------------------------


def test_deleting_a_work_deletes_what_it_applied_then_releases_it() -> None:
    fleet = Fleet()
    fleet.apply(deployment(), config_map())
    fleet.delete()
    assert fleet.on_member(DEPLOYMENT) is None and fleet.on_member(CONFIG_MAP) is None
    assert fleet.applied() is None
    assert fleet.store.list(MANIFEST_WORK, "cluster1").items == []


def test_orphan_leaves_every_object_without_the_works_owner() -> None:
    fleet = Fleet()
    fleet.apply(deployment(), config_map())
    assert owners(fleet.on_member(CONFIG_MAP)) != []
    fleet.apply(deployment(), config_map(), deleteOption={"propagationPolicy": "Orphan"})
    assert owners(fleet.on_member(CONFIG_MAP)) == []
    fleet.delete()
    assert fleet.on_member(DEPLOYMENT) is not None and fleet.on_member(CONFIG_MAP) is not None


def test_selectively_orphan_keeps_only_what_its_rules_name() -> None:
    fleet = Fleet()
    rule = {"group": "", "resource": "configmaps", "namespace": "default", "name": "settings"}
    option = {"propagationPolicy": "SelectivelyOrphan",
              "selectivelyOrphans": {"orphaningRules": [rule]}}  # fmt: skip
    fleet.apply(deployment(), config_map(), deleteOption=option)
    fleet.delete()
    assert fleet.on_member(DEPLOYMENT) is None
    assert fleet.on_member(CONFIG_MAP) is not None


def test_a_manifest_taken_out_of_the_work_is_deleted_unless_orphaned() -> None:
    fleet = Fleet()
    fleet.apply(deployment(), config_map())
    fleet.apply(deployment())
    assert fleet.on_member(CONFIG_MAP) is None
    applied = fleet.applied()
    assert applied is not None
    assert [r["name"] for r in applied["status"]["appliedResources"]] == ["web"]
    orphan = {"propagationPolicy": "Orphan"}
    fleet.apply(deployment(), config_map(), deleteOption=orphan)
    fleet.apply(deployment(), deleteOption=orphan)
    assert fleet.on_member(CONFIG_MAP) is not None


def test_an_object_two_works_apply_stays_until_the_last_goes() -> None:
    fleet = Fleet()
    fleet.apply(config_map(), name="first")
    fleet.apply(config_map(), name="second")
    assert len(owners(fleet.on_member(CONFIG_MAP))) == 2
    fleet.delete("first")
    remaining = fleet.on_member(CONFIG_MAP)
    assert remaining is not None and len(owners(remaining)) == 1
    fleet.delete("second")
    assert fleet.on_member(CONFIG_MAP) is None


def test_an_unreachable_member_applies_nothing_and_keeps_a_deleted_work() -> None:
    fleet = Fleet()
    fleet.apply(config_map())
    fleet.member.state = MemberState(reachable=False)
    fleet.delete()
    assert fleet.work()["metadata"]["deletionTimestamp"]
    assert fleet.on_member(CONFIG_MAP) is not None
    fleet.member.state = MemberState()
    fleet.at(60)  # the agent's next look
    assert fleet.store.list(MANIFEST_WORK, "cluster1").items == []
    assert fleet.on_member(CONFIG_MAP) is None


# --- condition rules -----------------------------------------------------------------------------

PROGRESSING = {
    "condition": "Progressing",
    "type": "CEL",
    "celExpressions": ["object.status.readyReplicas != object.spec.replicas"],
    "messageExpression": 'result ? "rolling out" : ""',
}


def condition_of(obj: Obj, type_: str) -> Obj:
    return next(c for c in obj["conditions"] if c["type"] == type_)


def test_a_cel_rule_sets_the_manifests_condition_and_the_work_aggregates_it() -> None:
    fleet = Fleet(workload_ready_after=timedelta(seconds=15))
    fleet.apply(deployment(), manifestConfigs=[config(DEPLOYMENT, conditionRules=[PROGRESSING])])
    progressing = condition_of(fleet.manifests()[0], "Progressing")
    assert (progressing["status"], progressing["reason"], progressing["message"]) == (
        "True", "ConditionRuleEvaluated", "rolling out",
    )  # fmt: skip
    work = condition_of(fleet.work()["status"], "Progressing")
    assert (work["status"], work["reason"], work["message"], work["observedGeneration"]) == (
        "True", "ConditionRulesAggregated", "rolling out", 1,
    )  # fmt: skip
    fleet.at(20)  # ready at 15s, read at the 20s poll
    done = condition_of(fleet.manifests()[0], "Progressing")
    # No message from the expression (empty): the default one.
    assert (done["status"], done["message"]) == ("False", "Manifest is not Progressing")
    assert condition_of(fleet.work()["status"], "Progressing")["status"] == "False"


def test_a_rule_that_does_not_compile_is_false_with_the_error() -> None:
    fleet = Fleet()
    broken = {
        "condition": "Degraded",
        "type": "CEL",
        "celExpressions": [
            "object.status ==",
        ],
    }
    fleet.apply(deployment(), manifestConfigs=[config(DEPLOYMENT, conditionRules=[broken])])
    degraded = condition_of(fleet.manifests()[0], "Degraded")
    assert (degraded["status"], degraded["reason"]) == ("False", "ConditionRuleExpressionError")
    assert degraded["message"].startswith("ERROR: <input>:1:17: Syntax error: mismatched input")


def test_a_removed_rule_takes_its_conditions_with_it() -> None:
    fleet = Fleet()
    fleet.apply(deployment(), manifestConfigs=[config(DEPLOYMENT, conditionRules=[PROGRESSING])])
    fleet.apply(deployment(), manifestConfigs=[config(DEPLOYMENT)])
    assert "Progressing" not in conditions(fleet.manifests()[0])
    assert "Progressing" not in conditions(fleet.work()["status"])


def test_well_known_conditions_complete_a_finished_pod_and_ignore_other_kinds() -> None:
    fleet = Fleet()
    pod_ref = ObjectRef("", "v1", "pods", "default", "job-pod")
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "job-pod", "namespace": "default"},
           "status": {"phase": "Succeeded"}}  # fmt: skip
    fleet.member.spoke(fleet.clock.now()).create(pod_ref, pod)
    complete = [{"condition": "Complete", "type": "WellKnownConditions"}]
    fleet.apply(
        pod, config_map(),
        manifestConfigs=[
            config(pod_ref, updateStrategy={"type": "ReadOnly"}, conditionRules=complete),
            config(CONFIG_MAP, conditionRules=complete),
        ],
    )  # fmt: skip
    pod_status, config_map_status = fleet.manifests()
    complete_condition = condition_of(pod_status, "Complete")
    assert (complete_condition["status"], complete_condition["message"]) == (
        "True", "Pod is in phase Succeeded",
    )  # fmt: skip
    assert "Complete" not in conditions(config_map_status)
