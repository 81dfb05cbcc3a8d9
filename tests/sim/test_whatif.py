"""What-if's copy of a hub into a scenario, against a simulated hub: the placement the hub
made is kept (not scheduled afresh), clusters and eviction tasks come as they are, faults
become steps, and the answer and the export say what the run saw."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fleetwarden.api.errors import Forbidden
from fleetwarden.api.registry import REGISTRY
from fleetwarden.sim.runner import Report, Simulation
from fleetwarden.sim.scenario import ScenarioError, load, parse
from fleetwarden.sim.whatif import (
    StoreSource,
    WhatIfError,
    answer,
    build_scenario,
    copy_fleet,
    export,
    make_fault,
    parse_fault,
)

from .conftest import CLUSTER, run, scenario

CLUSTER_INFO = REGISTRY.info(CLUSTER["apiVersion"], "Cluster")

SETTINGS = {
    "feature-gates": "Failover=true",
    "enable-no-execute-taint-eviction": "true",
    "allow-no-execute-taint-policy": "true",
}
EXAMPLES = Path(__file__).parents[2] / "examples" / "scenarios"
BINDING = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding"}


def cluster(name: str, **labels: str) -> dict[str, Any]:
    """A Pull cluster; its region label is its spec.region too."""
    meta: dict[str, Any] = {"name": name, **({"labels": labels} if labels else {})}
    region = {"region": labels["region"]} if "region" in labels else {}
    return {**CLUSTER, "metadata": meta, "spec": {"syncMode": "Pull", **region}}


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": name, "image": name}]}}},
    }  # fmt: skip


def policy(name: str, placement: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": name},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": name}],
                 "placement": placement},
    }  # fmt: skip


EVICT_NOT_READY = {
    "apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterTaintPolicy",
    "metadata": {"name": "evict-when-not-ready"},
    "spec": {
        "targetClusters": {"clusterNames": ["member1", "member2", "member3"]},
        "addOnConditions": [{"conditionType": "Ready", "operator": "NotIn",
                             "statusValues": ["True"]}],
        "removeOnConditions": [{"conditionType": "Ready", "operator": "In",
                                "statusValues": ["True"]}],
        "taints": [{"key": "not-ready", "effect": "NoExecute"}],
    },
}  # fmt: skip
# Six replicas by equal static weights over the clusters labelled tier=web.
WEIGHTED = {
    "clusterAffinity": {"labelSelector": {"matchLabels": {"tier": "web"}}},
    "replicaScheduling": {
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
        "weightPreference": {"staticWeightList": [
            {"targetCluster": {"clusterNames": [m]}, "weight": 1}
            for m in ("member1", "member2", "member3")
        ]},
    },
}  # fmt: skip
DUPLICATED_ON_TWO = {
    "clusterAffinity": {"clusterNames": ["member1", "member2", "member3"]},
    "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 2, "minGroups": 2}],
    "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
}
ONLY_ON_MEMBER2 = {"clusterAffinity": {"clusterNames": ["member2"]}}


def live_hub(steps: list[dict[str, Any]], until: str, **spec: Any) -> Simulation:
    """A simulated hub run to `until`: what what-if copies."""
    objects = [
        cluster("member1", tier="web", region="eu-west"),
        cluster("member2", tier="web", region="eu-west"),
        cluster("member3", region="us-east"),  # tier=web from 1m: after web was scheduled
        EVICT_NOT_READY,
        deployment("web", 6),
        policy("web", WEIGHTED),
        deployment("nginx", 2),
        policy("nginx", DUPLICATED_ON_TWO),
        deployment("pinned", 1),
        policy("pinned", ONLY_ON_MEMBER2),
    ]
    doc = scenario(
        settings=SETTINGS,
        members={m: {"workloadReadyAfter": "20s"} for m in ("member1", "member2", "member3")},
        objects=objects,
        steps=[{"at": "1m", "apply": [cluster("member3", tier="web", region="us-east")]}, *steps],
        until=until,
        **spec,
    )
    hub = Simulation(parse(doc, "hub.yaml"))
    hub.run()
    return hub


def what_if(hub: Simulation, *faults: Any, **options: Any) -> tuple[dict[str, Any], Report]:
    fleet = copy_fleet(StoreSource(hub.store), timedelta(seconds=20))
    doc = build_scenario(fleet, faults, SETTINGS, hub.clock.now(), **options)
    return doc, Simulation(parse(doc, "what-if"), restore=fleet.stored).run()


def binding(report: Report, name: str) -> dict[str, Any]:
    (found,) = [
        o for o in report.objects
        if o["kind"] == "ResourceBinding" and o["metadata"]["name"] == f"{name}-deployment"
    ]  # fmt: skip
    return found


def clusters_of(obj: dict[str, Any]) -> dict[str, Any]:
    return {c["name"]: c.get("replicas") for c in obj["spec"].get("clusters") or []}


def test_the_hubs_placement_is_kept_not_scheduled_afresh() -> None:
    hub = live_hub([], "2m")
    doc, report = what_if(hub, make_fault("cordon", names=["member3"]))
    # The hub placed web before member3 was a web cluster, and kept it so.
    assert clusters_of(binding(report, "web")) == {"member1": 3, "member2": 3}
    assert answer(doc, report.recording, report.timeline).moves == []
    # Its Works are the hub's own, never made again.
    works = [o for o in report.objects if o["kind"] == "Work"]
    assert {(o["metadata"]["uid"], o["metadata"]["generation"]) for o in works} == {
        (o["metadata"]["uid"], 1) for o in doc["spec"]["objects"] if o["kind"] == "Work"
    }
    # Scheduled afresh, the same fleet spreads web over the three clusters.
    fresh = dict(doc, spec={**doc["spec"], "objects": [
        o for o in doc["spec"]["objects"] if o["kind"] != "ResourceBinding"
    ]})  # fmt: skip
    assert clusters_of(binding(run(fresh), "web")) == {"member1": 2, "member2": 2, "member3": 2}


def test_clusters_come_as_they_are_and_eviction_tasks_in_progress_go_on() -> None:
    lost_at_2m = [{"at": "2m", "members": {"member1": {"reachable": False}}}]
    hub = live_hub(lost_at_2m, "2m50s")  # member1 lost at 2m40s; web not healthy elsewhere yet
    fleet = copy_fleet(StoreSource(hub.store))
    assert fleet.members["member1"] == {"reachable": False, "allocatable": {
        "cpu": "100", "memory": "400Gi", "pods": "1000"}}  # fmt: skip
    copied = {(o["kind"], o["metadata"]["name"]): o for o in fleet.objects}
    lost = StoreSource(hub.store).get(REGISTRY.info(CLUSTER["apiVersion"], "Cluster"), "member1")
    assert lost is not None
    assert copied["Cluster", "member1"]["spec"]["taints"] == lost["spec"]["taints"]
    assert {t["timeAdded"] for t in lost["spec"]["taints"]} == {"2025-01-01T00:02:40Z"}
    web = copied["ResourceBinding", "web-deployment"]
    assert [t["fromCluster"] for t in web["spec"]["gracefulEvictionTasks"]] == ["member1"]
    # The hub's uids and finalizers kept, not its resourceVersions or owners.
    assert set(web["metadata"]) == {"name", "namespace", "uid", "labels", "annotations",
                                    "finalizers"}  # fmt: skip
    # Its Works as the hub has them, status included: not made again.
    works = {o["metadata"]["namespace"]: o for o in fleet.objects if o["kind"] == "Work"}
    assert set(works) >= {"karmada-es-member1", "karmada-es-member2", "karmada-es-member3"}
    assert works["karmada-es-member2"]["status"]["conditions"][0]["type"] == "Applied"

    doc, report = what_if(hub, make_fault("not-ready", names=["member3"], at="5m"))
    result = answer(doc, report.recording, report.timeline)
    waits = {(w.workload, w.cluster): (w.start, w.end) for w in result.evictions}
    # The task the hub had (since t=0 of the copy) retires once web is healthy elsewhere:
    # the copy's members apply their Works at t=0, healthy after workloadReadyAfter (20s).
    assert waits["Deployment default/web", "member1"] == (0.0, 20.0)


def test_a_lost_region_moves_what_it_can_and_strands_the_rest() -> None:
    hub = live_hub([], "2m")
    fault = parse_fault("unreachable --region eu-west --at 1m --for 15m")
    doc, report = what_if(hub, fault)
    result = answer(doc, report.recording, report.timeline)
    assert result.faults == [
        "unreachable region eu-west (2 clusters: member1, member2) at 1m0s for 15m0s"
    ]
    moved = [(m.at, m.workload, m.after) for m in result.moves]
    # Lost at 1m40s (the 40s grace period of Pull clusters); the taint manager evicts at
    # resource-eviction-rate (0.5/s), one binding every 2s; back at 16m, placed again.
    assert moved == [
        (100.0, "Deployment default/nginx", {}),  # needs two clusters, member3 is one
        (104.0, "Deployment default/web", {"member3": 6}),
        (106.0, "Deployment default/pinned", {}),
        (970.0, "Deployment default/nginx", {"member1": 2, "member2": 2}),
        (970.0, "Deployment default/pinned", {"member2": 1}),
    ]
    nowhere = [(s.workload, s.start, s.end) for s in result.stranded]
    assert nowhere == [
        ("Deployment default/nginx", 100.0, 970.0),
        ("Deployment default/pinned", 106.0, 970.0),
    ]
    assert report.recording["end"] == (1 + 15 + 10) * 60  # 10m after the fault ends


def test_the_hubs_steady_state_copied_answers_as_making_it_again_does() -> None:
    """Works with their status and the hub's uids copied, the run starts where the hub is
    instead of making, applying and reporting every Work again; the answer is the same."""
    hub = live_hub([], "2m")
    doc, report = what_if(hub, parse_fault("unreachable --region eu-west --at 1m --for 15m"))
    kept = answer(doc, report.recording, report.timeline)
    objects = [
        {**o, "metadata": {k: v for k, v in o["metadata"].items() if k not in ("uid", "finalizers")}}
        for o in doc["spec"]["objects"] if o["kind"] != "Work"
    ]  # fmt: skip
    again = dict(doc, spec={**doc["spec"], "objects": objects})
    remade = Simulation(parse(again, "what-if")).run()
    assert kept == answer(again, remade.recording, remade.timeline)
    assert kept.moves and kept.evictions


def test_workloads_the_hub_runs_healthy_run_on_healthy_from_the_start() -> None:
    hub = live_hub([], "2m")
    fleet = copy_fleet(StoreSource(hub.store), timedelta(seconds=20))
    doc = build_scenario(fleet, [make_fault("cordon", names=["member3"])], SETTINGS,
                         hub.clock.now())  # fmt: skip
    web = {**BINDING, "namespace": "default", "name": "web-deployment"}
    health = "status.aggregatedStatus[].[clusterName, health]"
    running = [["member1", "Healthy"], ["member2", "Healthy"]]
    doc["spec"]["steps"].insert(0, {"at": "0s", "expect": [
        {"object": web, "query": health, "equals": running}
    ]})  # fmt: skip
    # Not applied again, so not 20s (workloadReadyAfter) unhealthy first.
    report = Simulation(parse(doc, "what-if"), restore=fleet.stored).run()
    assert (report.passed, report.failed) == (1, 0), report.outcomes


def test_the_fleet_is_restored_as_it_stands_and_t0_writes_nothing() -> None:
    """Each member reports what its cluster reported (its Kubernetes version and APIs, not
    the scenario's kinds), and every cluster's execution space comes with the copy (the hub
    made it when the cluster joined). The controllers resume the hub at rest: at t=0 nothing
    is written, no Cluster, no namespace, not even an Event of a sync that changed nothing."""
    hub = live_hub([{"at": "90s", "apply": [deployment("nginx", 0)]}], "2m")
    fleet = copy_fleet(StoreSource(hub.store), timedelta(seconds=20))
    for obj in fleet.stored:
        if obj["kind"] == "Cluster":
            obj["status"]["kubernetesVersion"] = "v1.31.2"
    spaces = sorted(o["metadata"]["name"] for o in fleet.stored if o["kind"] == "Namespace")
    assert spaces == ["default", "karmada-cluster", *(f"karmada-es-member{i}" for i in (1, 2, 3))]
    doc = build_scenario(fleet, [make_fault("cordon", names=["member3"], at="1m")], SETTINGS,
                         hub.clock.now())  # fmt: skip
    exported = doc["spec"]["objects"]
    used = {o["metadata"].get("namespace") for o in exported} - {None, ""}
    # An exported scenario's clusters make their spaces as they join.
    assert {o["metadata"]["name"] for o in exported if o["kind"] == "Namespace"} == used
    assert "karmada-es-member3" not in used
    simulation = Simulation(parse(doc, "what-if"), restore=fleet.stored)
    written: list[tuple[str, str]] = []
    simulation.store.subscribe(
        lambda e: (
            written.append((e.collection, e.type.value))
            if simulation.clock.now() == simulation.scenario.start_time
            else None
        )
    )
    simulation.run()
    restored = len(fleet.stored)
    assert written[restored:] == []
    versions = {c["status"]["kubernetesVersion"] for c in simulation.store.list(CLUSTER_INFO).items}
    assert versions == {"v1.31.2"}


class _NoNamespaceList(StoreSource):
    """A hub whose user may read namespaces one by one, not list them."""

    def list(self, info: Any, namespace: str | None = None, **options: Any) -> list[Any]:
        if info.kind == "Namespace":
            raise Forbidden("namespaces", "", "", 'User "viewer" cannot list resource')
        listed: list[Any] = super().list(info, namespace, **options)
        return listed


def test_namespaces_the_user_may_not_list_are_read_one_by_one() -> None:
    hub = live_hub([], "2m")
    listed = copy_fleet(StoreSource(hub.store))
    read = copy_fleet(_NoNamespaceList(hub.store))
    assert [o for o in read.stored if o["kind"] == "Namespace"] == [
        o for o in listed.stored if o["kind"] == "Namespace"
    ]


def test_a_copied_object_its_kind_cannot_hold_is_refused_naming_it() -> None:
    """What a hub answered is decoded as a scenario's objects are, before the run: a
    binding whose clusters are not a list stops it with the binding's name, not a crash
    of whichever controller reads it first."""
    hub = live_hub([], "2m")
    fleet = copy_fleet(StoreSource(hub.store), timedelta(seconds=20))
    doc = build_scenario(fleet, [make_fault("cordon", names=["member3"])], SETTINGS,
                         hub.clock.now())  # fmt: skip
    stored = [
        {**o, "spec": {**o["spec"], "clusters": "member1"}}
        if o["kind"] == "ResourceBinding" and o["metadata"]["name"] == "web-deployment"
        else o
        for o in fleet.stored
    ]
    simulation = Simulation(parse(doc, "what-if"), restore=stored)
    with pytest.raises(
        ScenarioError, match=re.escape('"web-deployment" is invalid: spec.clusters')
    ):
        simulation.run()
    assert simulation.store.resource_version == 0  # nothing restored


def test_a_copied_object_whose_owner_was_not_copied_is_in_no_cache() -> None:
    """The restore collects a dependent whose owner did not come, as after a crash; the
    controllers' caches, which start from what the restore decoded, do not hold it."""
    hub = live_hub([], "2m")
    fleet = copy_fleet(StoreSource(hub.store), timedelta(seconds=20))
    doc = build_scenario(fleet, [make_fault("cordon", names=["member3"])], SETTINGS,
                         hub.clock.now())  # fmt: skip
    orphan = {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "orphan", "namespace": "karmada-cluster", "uid": "orphan-uid",
                     "resourceVersion": str(hub.store.resource_version + 1),
                     "ownerReferences": [{"apiVersion": "cluster.karmada.io/v1alpha1",
                                          "kind": "Cluster", "name": "gone", "uid": "gone"}]},
        "spec": {"holderIdentity": "gone"},
    }  # fmt: skip
    simulation = Simulation(parse(doc, "what-if"), restore=[*fleet.stored, orphan])
    simulation.run()
    leases = simulation.driver.manager.cache.informer(
        REGISTRY.info("coordination.k8s.io/v1", "Lease")
    )
    assert leases.get("orphan", "karmada-cluster") is None
    assert leases.get("member1", "karmada-cluster") is not None


class _Answering(StoreSource):
    """A hub whose Work listing holds one more item, as given."""

    def __init__(self, hub: Simulation, item: Any) -> None:
        super().__init__(hub.store)
        self.item = item

    def list(self, info: Any, namespace: str | None = None, **options: Any) -> list[Any]:
        listed: list[Any] = super().list(info, namespace, **options)
        return [*listed, self.item] if info.kind == "Work" else listed


@pytest.mark.parametrize("item", ["a string", {"kind": "Work"}, {"metadata": {"name": 7}}])
def test_a_listed_item_that_is_no_named_object_is_refused(item: Any) -> None:
    hub = live_hub([], "2m")
    with pytest.raises(
        WhatIfError, match=re.escape("the hub answered a Work without metadata.name")
    ):
        copy_fleet(_Answering(hub, item))


class _BadStatus(StoreSource):
    """A hub whose Cluster member1 has a status that is no object."""

    def list(self, info: Any, namespace: str | None = None, **options: Any) -> list[Any]:
        listed: list[Any] = super().list(info, namespace, **options)
        return [
            {**obj, "status": "bad"} if obj["metadata"]["name"] == "member1" else obj
            for obj in listed
        ]


def test_a_cluster_its_kind_cannot_hold_is_refused_naming_it() -> None:
    """What-if reads each cluster's health to make its member: a status that is no object
    stops the copy naming the cluster, not with an AttributeError."""
    hub = live_hub([], "2m")
    with pytest.raises(WhatIfError, match=re.escape(
        'the hub answered a Cluster it cannot be: Cluster.cluster.karmada.io "member1" is '
        'invalid: status: Invalid value: "bad": must be of type object'
    )):  # fmt: skip
        copy_fleet(_BadStatus(hub.store))


def test_the_export_is_a_scenario_that_passes_with_what_it_observed() -> None:
    hub = live_hub([], "2m")
    doc, report = what_if(hub, make_fault("unreachable", selector="region=eu-west"))
    result = answer(doc, report.recording, report.timeline)
    exported = export(doc, report.objects, result)
    checked = run(exported)
    assert checked.failed == 0
    assert checked.passed == len(exported["spec"]["expect"]) >= 7
    # What it expects is what happened: web on member3 alone, pinned nowhere.
    expected = {(e["object"]["name"], e["query"]): e["equals"] for e in exported["spec"]["expect"]}
    assert expected["web-deployment", "spec.clusters[].[name, replicas]"] == [["member3", 6]]
    assert expected[
        "pinned-deployment", "status.conditions[?type=='Scheduled'].[status, reason] | [0]"
    ] == ["False", "NoClusterFit"]


def test_a_taint_fault_is_added_then_taken_off_keeping_the_clusters_spec() -> None:
    hub = live_hub([], "2m")
    fault = make_fault("taint", names=["member3"], taint="maintenance=yes:NoExecute",
                       at="1m", lasts="2m")  # fmt: skip
    doc, report = what_if(hub, fault)
    on, off = doc["spec"]["steps"]
    (tainted,) = on["apply"]
    assert tainted["spec"]["taints"] == [{"key": "maintenance", "value": "yes",
                                          "effect": "NoExecute"}]  # fmt: skip
    assert tainted["spec"]["syncMode"] == "Pull"
    assert (on["at"], off["at"], off["apply"][0]["spec"]["taints"]) == ("1m0s", "3m0s", [])
    lane = next(c for c in report.recording["clusters"] if c["name"] == "member3")
    assert [(t["key"], t["start"], t["end"]) for t in lane["taints"]] == [
        ("maintenance", 60.0, 180.0)
    ]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: make_fault("unreachable"), "which clusters? give cluster names, -l SELECTOR"),
        (lambda: make_fault("melt", names=["a"]), "unknown fault 'melt'"),
        (lambda: make_fault("unreachable", selector="region in (a"), "-l 'region in (a'"),
        (lambda: make_fault("unreachable", names=["a"], at="soon"), "--at 'soon'"),
        (lambda: make_fault("taint", names=["a"], taint="novalue"), "--taint 'novalue'"),
        (lambda: parse_fault("unreachable -l"), "-l needs a value"),
        (lambda: parse_fault("unreachable a --when 1m"), "unknown flag --when"),
    ],
)
def test_faults_that_cannot_be_are_refused_naming_the_flag(make: Any, message: str) -> None:
    with pytest.raises(WhatIfError) as caught:
        make()
    assert message in str(caught.value)


def test_a_fault_on_no_cluster_of_the_hub_is_refused() -> None:
    hub = live_hub([], "1m")
    fleet = copy_fleet(StoreSource(hub.store))
    for fault, message in [
        (make_fault("unreachable", names=["member9"]), "no cluster named member9 on the hub"),
        (make_fault("unreachable", selector="region=mars"), "no cluster matches 'region=mars'"),
        (make_fault("cordon", region="mars"), "no cluster matches region 'mars'"),
    ]:
        with pytest.raises(WhatIfError) as caught:
            build_scenario(fleet, [fault], {}, hub.clock.now())
        assert message in str(caught.value)


def test_managed_clusters_no_fault_hits_keep_their_claims_and_placements() -> None:
    scenario = load(str(EXAMPLES / "ocm-placement-predicates.yaml"))
    hub = Simulation(replace(scenario, steps=[], expect=[], until=timedelta(seconds=30)))
    hub.run()
    fleet = copy_fleet(StoreSource(hub.store))
    fault = make_fault("unreachable", names=["cluster5"])
    doc = build_scenario(fleet, [fault], scenario.settings.to_flags(), hub.clock.now())
    assert list(doc["spec"]["members"]) == ["cluster5"]
    report = Simulation(parse(doc, "what-if")).run()
    result = answer(doc, report.recording, report.timeline)
    # Only placement1 (vendor=OpenShift) had cluster5, unavailable after five lease
    # durations (5 x 60s); the claim-selecting Placements keep theirs.
    assert [(m.at, m.workload, sorted(m.after)) for m in result.moves] == [
        (300.0, "Placement ns1/placement1", ["cluster1", "cluster2", "cluster3"])
    ]
    claims = {
        o["metadata"]["name"]: o["status"].get("clusterClaims")
        for o in report.objects
        if o["kind"] == "ManagedCluster"
    }
    assert claims["cluster1"] == [{"name": "region.open-cluster-management.io",
                                   "value": "us-west-1"}]  # fmt: skip


def test_fleet_protection_shows_each_regions_state() -> None:
    scenario = load(str(EXAMPLES / "fleet-protection-all-regions-lost.yaml"))
    hub = Simulation(replace(scenario, steps=[], expect=[], until=timedelta(seconds=30)))
    hub.run()
    fleet = copy_fleet(StoreSource(hub.store))
    every = make_fault("unreachable", names=sorted(fleet.clusters), lasts="10m")
    doc = build_scenario(fleet, [every], scenario.settings.to_flags(), hub.clock.now())
    report = Simulation(parse(doc, "what-if")).run()
    result = answer(doc, report.recording, report.timeline)
    lost = [(e["at"], e["detail"]) for e in result.protection if "eu-west" in e["detail"]]
    assert lost == [
        ("40s", "Region eu-west is now FullDisruption (was Normal): 2 of 2 clusters not Ready; "
                "evictions stopped."),
        ("10m10s", "Region eu-west is now Normal (was FullDisruption): 0 of 2 clusters not "
                   "Ready; evictions at 0.5/s."),
    ]  # fmt: skip
    assert any("Every region is fully disrupted" in e["detail"] for e in result.protection)
    assert result.moves == []  # the hub took itself to be cut off: nothing evicted
