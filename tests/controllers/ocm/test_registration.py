"""OCM's registration hub: the managed cluster, lease, clock sync, taint and add-on controllers.

Ported from upstream's pkg/registration/hub/{managedcluster,lease,taint,addon}/*_test.go
(one reconcile over seeded objects, then the writes it made), then behaviour in virtual time
with simulated registration agents, each timer checked just before and at its instant.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from ocm_harness import (
    CLUSTER_NAME,
    FINALIZER,
    Bench,
    OcmHub,
    accepted_cluster,
    accepting_cluster,
    addon,
    at,
    available,
    cluster_lease,
    condition,
    denied_cluster,
    managed_cluster,
    new_cluster,
)

from fleetwarden.api.core import Taint
from fleetwarden.api.errors import StatusError
from fleetwarden.api.meta import Condition
from fleetwarden.api.ocm.addon import ManagedClusterAddOn
from fleetwarden.controllers.ocm.addon import (
    MANAGED_CLUSTER_ADDON,
    addon_label_value,
    reconcile_addon_health,
    reconcile_addon_labels,
)
from fleetwarden.controllers.ocm.lease import LEASE, ClockSyncController, reconcile_lease
from fleetwarden.controllers.ocm.managed_cluster import NAMESPACE
from fleetwarden.controllers.ocm.managed_cluster import reconcile as reconcile_managed_cluster
from fleetwarden.controllers.ocm.taint import (
    UNAVAILABLE_TAINT,
    UNREACHABLE_TAINT,
    go_taints,
    sync_taints,
)
from fleetwarden.controllers.ocm.taint import reconcile as reconcile_taints
from fleetwarden.runtime.clock import DEFAULT_EPOCH
from fleetwarden.runtime.manager import DONE, REQUEUE, requeue_after

Obj = dict[str, Any]

AVAILABLE = "ManagedClusterConditionAvailable"
HUB_ACCEPTED = "HubAcceptedManagedCluster"
UNAVAILABLE_KEY = "cluster.open-cluster-management.io/unavailable"
UNREACHABLE_KEY = "cluster.open-cluster-management.io/unreachable"
LEASE_STOPPED = {
    "type": AVAILABLE,
    "status": "Unknown",
    "reason": "ManagedClusterLeaseUpdateStopped",
    "message": "Registration agent stopped updating its lease.",
}
FIVE_MINUTES = 300


def conditions_of(obj: Obj) -> dict[str, Obj]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def assert_condition(obj: Obj, expected: Obj) -> None:
    """testingcommon.AssertCondition: type, status, reason and message."""
    found = conditions_of(obj)[expected["type"]]
    assert {k: found[k] for k in expected} == expected


def taint_keys(obj: Obj) -> list[str]:
    return [t["key"] for t in obj["spec"].get("taints") or []]


# --- managedcluster/controller_test.go: TestSyncManagedCluster ----------------------------------


def test_sync_a_deleted_spoke_cluster() -> None:
    bench = Bench()
    assert bench.run(reconcile_managed_cluster) == DONE
    assert bench.writes == []


def test_a_new_spoke_cluster_not_accepted_is_left_alone() -> None:
    bench = Bench(new_cluster())
    bench.run(reconcile_managed_cluster)
    assert bench.writes == []


def test_accept_a_spoke_cluster() -> None:
    bench = Bench(accepting_cluster())
    bench.run(reconcile_managed_cluster)
    [cluster] = bench.written("ManagedCluster")
    assert_condition(
        cluster,
        {"type": HUB_ACCEPTED, "status": "True", "reason": "HubClusterAdminAccepted",
         "message": "Accepted by hub cluster admin"},
    )  # fmt: skip
    [namespace] = bench.written("Namespace")
    assert namespace["metadata"]["name"] == CLUSTER_NAME
    assert namespace["metadata"]["labels"] == {
        "open-cluster-management.io/cluster-name": CLUSTER_NAME
    }
    events = {e["reason"]: e["message"] for e in bench.written("Event")}
    assert events == {
        "NamespaceCreated": f"Created Namespace/{CLUSTER_NAME} because it was missing",
        "ManagedClusterAccepted": f"managed cluster {CLUSTER_NAME} is accepted by hub cluster admin",
    }


def test_sync_an_accepted_spoke_cluster_writes_only_its_namespace() -> None:
    bench = Bench(accepted_cluster())
    bench.run(reconcile_managed_cluster)
    assert bench.written("ManagedCluster") == []
    assert [n["metadata"]["name"] for n in bench.written("Namespace")] == [CLUSTER_NAME]


def test_an_accepted_cluster_gets_the_finalizer_and_its_existing_namespace_the_label() -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": CLUSTER_NAME}}
    bench = Bench(managed_cluster(hubAcceptsClient=True), namespace)
    bench.run(reconcile_managed_cluster)
    cluster = bench.get()
    assert cluster["metadata"]["finalizers"] == [FINALIZER]
    assert conditions_of(cluster)[HUB_ACCEPTED]["status"] == "True"
    labels = bench.store.get(NAMESPACE, CLUSTER_NAME)["metadata"]["labels"]
    assert labels == {"open-cluster-management.io/cluster-name": CLUSTER_NAME}


def test_a_namespace_that_cannot_be_made_leaves_the_cluster_not_accepted_with_the_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bench = Bench(accepting_cluster())
    create = bench.store.create

    def refuse_namespaces(obj: Obj) -> Obj:
        if obj["kind"] == "Namespace":
            raise StatusError('namespaces "testmanagedcluster" is forbidden')
        return create(obj)

    monkeypatch.setattr(bench.store, "create", refuse_namespaces)
    assert bench.run(reconcile_managed_cluster) == REQUEUE
    assert_condition(
        bench.get(),
        {"type": HUB_ACCEPTED, "status": "False", "reason": "Error",
         "message": 'namespaces "testmanagedcluster" is forbidden'},
    )  # fmt: skip


def test_deny_an_accepted_spoke_cluster() -> None:
    bench = Bench(denied_cluster("True"))
    bench.run(reconcile_managed_cluster)
    [cluster] = bench.written("ManagedCluster")
    assert_condition(
        cluster,
        {"type": HUB_ACCEPTED, "status": "False", "reason": "HubClusterAdminDenied",
         "message": "Denied by hub cluster admin"},
    )  # fmt: skip
    assert "HubDeniedManagedCluster" not in conditions_of(cluster)  # upstream writes none
    [event] = bench.written("Event")
    assert (event["reason"], event["message"]) == (
        "ManagedClusterDenied",
        f"managed cluster {CLUSTER_NAME} is denied by hub cluster admin",
    )
    bench.run(reconcile_managed_cluster)  # denied already: nothing more
    assert bench.writes == []


def test_delete_a_spoke_cluster_releases_the_finalizer() -> None:
    bench = Bench(accepted_cluster(), deleting=[CLUSTER_NAME])
    bench.run(reconcile_managed_cluster)
    [deleted] = [e for e in bench.writes if e.type == "DELETED"]
    assert deleted.object["metadata"]["name"] == CLUSTER_NAME


# --- lease/controller_test.go: TestSync --------------------------------------------------------


def stale_leases() -> list[Obj]:
    """managed-cluster-lease and another lease in the namespace, both renewed 5 min ago."""
    return [cluster_lease(0), cluster_lease(0, name=f"cluster-lease-{CLUSTER_NAME}")]


def assert_lease_stopped(bench: Bench) -> None:
    [cluster] = bench.written("ManagedCluster")
    assert_condition(cluster, LEASE_STOPPED)
    [event] = bench.written("Event")
    assert event["metadata"]["namespace"] == CLUSTER_NAME
    assert (event["type"], event["reason"]) == ("Warning", "AvailableUnknown")
    assert event["message"] == (
        f"The {CLUSTER_NAME} is successfully imported. However, the connection check from "
        "the managed cluster to the hub cluster has failed"
    )


def test_lease_of_an_unaccepted_cluster_is_not_looked_at() -> None:
    bench = Bench(new_cluster())
    bench.run(reconcile_lease)
    assert bench.writes == []


@pytest.mark.parametrize(
    "cluster",
    [denied_cluster("False"), accepted_cluster()],
    ids=["previously accepted", "accepted"],
)
def test_a_missing_lease_is_created(cluster: Obj) -> None:
    bench = Bench(cluster, now=42)
    assert bench.run(reconcile_lease) == DONE
    assert bench.written("ManagedCluster") == []
    [lease] = bench.written("Lease")
    assert lease["metadata"]["labels"] == {"open-cluster-management.io/cluster-name": CLUSTER_NAME}
    assert lease["spec"] == {
        "holderIdentity": "managed-cluster-lease",
        "renewTime": "2025-01-01T00:00:42.000000Z",
    }


@pytest.mark.parametrize(
    "cluster",
    [accepted_cluster(available("True")), denied_cluster("False")],
    ids=["accepted", "previously accepted"],
)
def test_a_cluster_that_stopped_updating_its_lease_is_unknown(cluster: Obj) -> None:
    bench = Bench(cluster, *stale_leases(), now=FIVE_MINUTES)
    bench.run(reconcile_lease)
    assert_lease_stopped(bench)


def test_a_cluster_with_a_fresh_lease_is_left_available() -> None:
    bench = Bench(accepted_cluster(available("True")), cluster_lease(FIVE_MINUTES))
    bench.run(reconcile_lease)
    assert bench.writes == []


def test_a_deleting_cluster_without_a_lease_is_unknown_at_once() -> None:
    bench = Bench(accepted_cluster(available("True")), deleting=[CLUSTER_NAME])
    bench.run(reconcile_lease)
    assert_lease_stopped(bench)
    assert bench.written("Lease") == []


def test_a_cluster_unknown_already_is_not_written_again() -> None:
    unknown = condition(AVAILABLE, "Unknown", "ManagedClusterUnknown", "Managed cluster is unknown")
    bench = Bench(accepted_cluster(unknown), cluster_lease(0), now=FIVE_MINUTES)
    bench.run(reconcile_lease)
    assert bench.writes == []


# --- lease/controller_test.go: TestRequeueTime -------------------------------------------------


@pytest.mark.parametrize(
    ("renewed", "requeue"),
    [
        (0, 300),  # expired 5 min ago: a grace period later (recovery comes by the watch)
        (60, 60),  # renewed 4 min ago: expires in 1 min
        (270, 270),  # renewed 30 s ago: expires in 4.5 min
    ],
)
def test_requeue_at_the_instant_the_lease_expires(renewed: float, requeue: float) -> None:
    cluster = accepted_cluster(available("True"))
    cluster["spec"]["leaseDurationSeconds"] = 60
    bench = Bench(cluster, cluster_lease(renewed), now=FIVE_MINUTES)
    assert bench.run(reconcile_lease) == requeue_after(timedelta(seconds=requeue))


@pytest.mark.parametrize("seconds", [None, 0])
def test_an_unset_lease_duration_counts_as_60_seconds(seconds: int | None) -> None:
    cluster = accepted_cluster(available("True"))
    cluster["spec"]["leaseDurationSeconds"] = seconds
    bench = Bench(cluster, cluster_lease(0), now=10)
    assert bench.run(reconcile_lease) == requeue_after(timedelta(seconds=290))


# --- lease/clocksynccontroller_test.go ----------------------------------------------------------


@pytest.mark.parametrize(
    ("renewed", "annotation", "status", "reason"),
    [
        (5, None, "True", "ManagedClusterClockSynced"),
        (301, None, "False", "ManagedClusterClockOutOfSync"),
        (301, "true", "True", "ManagedClusterClockSynced"),
        (301, "false", "False", "ManagedClusterClockOutOfSync"),
    ],
)
def test_clock_synced_when_the_renewal_is_close_to_the_hub_clock(
    renewed: float, annotation: str | None, status: str, reason: str
) -> None:
    cluster = new_cluster()
    if annotation is not None:
        key = "registration.open-cluster-management.io/skip-clock-sync-check"
        cluster["metadata"]["annotations"] = {key: annotation}
    bench = Bench(cluster, cluster_lease(-1))
    controller = ClockSyncController()
    bench.run(controller.reconcile)  # the lease as first seen: an add, not a renewal
    assert bench.writes == []
    lease = bench.store.get(LEASE, "managed-cluster-lease", CLUSTER_NAME)
    lease["spec"]["renewTime"] = cluster_lease(renewed)["spec"]["renewTime"]
    bench.store.update(lease)
    bench.run(controller.reconcile)
    [written] = bench.written("ManagedCluster")
    found = conditions_of(written)["ManagedClusterConditionClockSynced"]
    assert (found["status"], found["reason"]) == (status, reason)


def test_clock_sync_ignores_lease_updates_that_do_not_renew() -> None:
    bench = Bench(new_cluster(), cluster_lease(0), now=FIVE_MINUTES * 2)
    controller = ClockSyncController()
    bench.run(controller.reconcile)
    lease = bench.store.get(LEASE, "managed-cluster-lease", CLUSTER_NAME)
    lease["spec"]["holderIdentity"] = "someone"
    bench.store.update(lease)
    bench.run(controller.reconcile)
    assert bench.writes == []


# --- taint/controller_test.go: TestSyncTaintCluster ---------------------------------------------


@pytest.mark.parametrize(
    ("cluster", "taints"),
    [
        (accepted_cluster(available("True")), None),
        (accepted_cluster(available("False")), [UNAVAILABLE_KEY]),
        (new_cluster(), [UNREACHABLE_KEY]),  # no Available condition
        (accepted_cluster(available("Unknown")), [UNREACHABLE_KEY]),
    ],
    ids=["Available True", "Available False", "no Available", "Available Unknown"],
)
def test_sync_taint_cluster(cluster: Obj, taints: list[str] | None) -> None:
    bench = Bench(cluster, now=30)
    bench.run(reconcile_taints)
    if taints is None:
        assert bench.writes == []
        return
    [written] = bench.written("ManagedCluster")
    assert written["spec"]["taints"] == [
        {"key": taints[0], "effect": "NoSelect", "timeAdded": at(30)}
    ]
    [event] = bench.written("Event")
    assert event["reason"] == "ManagedClusterConditionAvailableUpdated"
    assert event["message"] == (
        f"Update the original taints to the [{{Key:{taints[0]} Value: Effect:NoSelect "
        "TimeAdded:2025-01-01 00:00:30 +0000 UTC}]"
    )


def test_sync_taint_of_a_deleted_spoke_cluster() -> None:
    bench = Bench()
    assert bench.run(reconcile_taints) == DONE
    assert bench.writes == []


def test_taints_of_a_deleting_cluster_are_left_alone() -> None:
    bench = Bench(accepted_cluster(available("False")), deleting=[CLUSTER_NAME])
    bench.run(reconcile_taints)
    assert bench.writes == []


USER = Taint(key="gpu", value="true", effect="NoSelect")
STAMPED = DEFAULT_EPOCH + timedelta(seconds=5)
NOW = DEFAULT_EPOCH + timedelta(seconds=90)


def built_in(taint: Taint) -> Taint:
    return taint.model_copy(update={"time_added": STAMPED})


@pytest.mark.parametrize(
    ("taints", "status", "want"),
    [
        # a built-in taint still applicable keeps its timeAdded; the user's taint stays first
        ([USER, built_in(UNREACHABLE_TAINT)], "Unknown", [USER, built_in(UNREACHABLE_TAINT)]),
        # swapped: the one removed leaves the others in order, the one added goes last, now
        ([built_in(UNREACHABLE_TAINT), USER], "False",
         [USER, UNAVAILABLE_TAINT.model_copy(update={"time_added": NOW})]),
        ([built_in(UNAVAILABLE_TAINT), USER], None,
         [USER, UNREACHABLE_TAINT.model_copy(update={"time_added": NOW})]),
        ([USER, built_in(UNAVAILABLE_TAINT), built_in(UNREACHABLE_TAINT)], "True", [USER]),
        # a status upstream has no case for changes nothing
        ([USER], "Maybe", [USER]),
    ],
)  # fmt: skip
def test_sync_taints(taints: list[Taint], status: str | None, want: list[Taint]) -> None:
    available_condition = None if status is None else Condition(type=AVAILABLE, status=status)
    assert sync_taints(taints, available_condition, NOW) == want


def test_a_user_taint_with_a_built_in_key_but_another_value_is_not_the_built_in_one() -> None:
    """helpers.IsTaintEqual compares key, value and effect."""
    lookalike = Taint(key=UNREACHABLE_KEY, value="mine", effect="NoSelect")
    stamped = UNREACHABLE_TAINT.model_copy(update={"time_added": NOW})
    assert sync_taints([lookalike], None, NOW) == [lookalike, stamped]
    assert sync_taints([lookalike, stamped], Condition(type=AVAILABLE, status="True"), NOW) == [
        lookalike
    ]


def test_go_taints_prints_as_go_does() -> None:
    assert go_taints([]) == "[]"
    assert go_taints([USER, built_in(UNREACHABLE_TAINT)]) == (
        "[{Key:gpu Value:true Effect:NoSelect TimeAdded:0001-01-01 00:00:00 +0000 UTC} "
        f"{{Key:{UNREACHABLE_KEY} Value: Effect:NoSelect TimeAdded:2025-01-01 00:00:05 +0000 UTC}}]"
    )


# --- addon/discovery_controller_test.go ---------------------------------------------------------


def addon_available(status: str) -> Obj:
    return condition("Available", status)


@pytest.mark.parametrize(
    ("conditions", "value"),
    [
        ([], "unreachable"),
        ([addon_available("True")], "available"),
        ([addon_available("False")], "unhealthy"),
        ([addon_available("Unknown")], "unreachable"),
    ],
)
def test_get_addon_label_value(conditions: list[Obj], value: str) -> None:
    obj = ManagedClusterAddOn.model_validate(addon("addon1", *conditions))
    assert addon_label_value(obj) == value


def feature(name: str) -> str:
    return f"feature.open-cluster-management.io/addon-{name}"


def test_addon_label_synced() -> None:
    bench = Bench(accepted_cluster(available("True")), addon("addon1"))
    bench.run(reconcile_addon_labels)
    [cluster] = bench.written("ManagedCluster")
    assert cluster["metadata"]["labels"] == {feature("addon1"): "unreachable"}


@pytest.mark.parametrize(
    ("objects", "deleting"),
    [
        ([], []),  # cluster not found
        ([accepted_cluster(), addon("addon1")], []),  # no Available condition yet
        ([accepted_cluster(available("True")), addon("addon1")], [CLUSTER_NAME]),  # deleting
        ([accepted_cluster(available("True"))], []),  # no add-on, no label: no change
    ],
    ids=["cluster not found", "no available condition", "cluster is deleting", "no change"],
)
def test_addon_labels_left_alone(objects: list[Obj], deleting: list[str]) -> None:
    bench = Bench(*objects, deleting=deleting)
    assert bench.run(reconcile_addon_labels) == DONE
    assert bench.writes == []


def test_addon_labels_of_a_cluster_synced() -> None:
    cluster = accepted_cluster(available("True"))
    cluster["metadata"]["labels"] = {feature("addon4"): "available", "env": "prod"}
    addon2 = addon("addon2", finalizers=["hold"])
    bench = Bench(
        cluster, addon("addon1"), addon2, addon("addon3", addon_available("True")),
    )  # fmt: skip
    bench.store.delete(MANAGED_CLUSTER_ADDON, "addon2", CLUSTER_NAME)  # addon2 is deleting
    bench.run(reconcile_addon_labels)
    [written] = bench.written("ManagedCluster")
    assert written["metadata"]["labels"] == {
        "env": "prod",
        feature("addon1"): "unreachable",
        feature("addon3"): "available",
    }


# --- addon/healthcheck_controller_test.go -------------------------------------------------------


@pytest.mark.parametrize(
    "objects",
    [[], [new_cluster(), addon("test")], [accepted_cluster(available("True")), addon("test")]],
    ids=["managed cluster is deleted", "not accepted", "available"],
)
def test_addons_are_left_to_their_agents(objects: list[Obj]) -> None:
    bench = Bench(*objects)
    bench.run(reconcile_addon_health)
    assert bench.writes == []


def test_addons_of_an_unknown_cluster_are_unknown() -> None:
    unknown = condition(AVAILABLE, "Unknown", "ManagedClusterUnknown", "Managed cluster is unknown")
    bench = Bench(accepted_cluster(unknown), addon("test", addon_available("True")))
    bench.run(reconcile_addon_health)
    [written] = bench.written("ManagedClusterAddOn")
    assert_condition(
        written,
        {"type": "Available", "status": "Unknown", "reason": "ManagedClusterUnknown",
         "message": "Managed cluster is unknown"},
    )  # fmt: skip
    [event] = bench.written("Event")
    assert (event["reason"], event["message"]) == (
        "ManagedClusterAddOnStatusUpdated",
        f'update addon "test" status to unknown on managed cluster "{CLUSTER_NAME}"',
    )
    bench.run(reconcile_addon_health)
    assert bench.writes == []


# --- behaviour in virtual time, with simulated registration agents ------------------------------


def joined(*members: str, **spec: Any) -> OcmHub:
    hub = OcmHub(members)
    for name in members:
        hub.join(name, hubAcceptsClient=True, **spec)
    return hub


def test_an_accepted_cluster_joins_and_is_available_at_once() -> None:
    """At 0 s: accepted, its namespace and Lease made by the hub, the agent's first renewal
    and status; the unreachable taint it had while it had no Available goes at once."""
    hub = joined("cluster1")
    cluster = hub.get("cluster1")
    assert cluster["metadata"]["finalizers"] == [FINALIZER]
    assert conditions_of(cluster)[HUB_ACCEPTED]["reason"] == "HubClusterAdminAccepted"
    assert conditions_of(cluster)["ManagedClusterJoined"]["status"] == "True"
    assert hub.available("cluster1") == ("True", "ManagedClusterAvailable")
    assert hub.taints("cluster1") == []
    assert hub.renewed("cluster1") == "2025-01-01T00:00:00.000000Z"
    assert hub.namespace("cluster1")["metadata"]["labels"] == {
        "open-cluster-management.io/cluster-name": "cluster1"
    }
    [added, removed] = hub.events("ManagedClusterConditionAvailableUpdated")
    assert UNREACHABLE_KEY in added["message"]
    assert removed["message"] == "Update the original taints to the []"


def test_unreachable_member_is_unknown_five_lease_durations_after_its_last_renewal() -> None:
    """Renewals every 60 s; unreachable from 65 s, its last renewal is at 60 s: Available
    Unknown and the unreachable taint at 360 s, not at 359 s. Back at 405 s, the agent's next
    loop (410 s) renews and reports Available: the taint goes at that instant."""
    hub = joined("cluster1", "cluster2")
    hub.to(65)
    assert hub.renewed("cluster1") == "2025-01-01T00:01:00.000000Z"
    hub.member("cluster1", reachable=False)
    hub.to(359)
    assert hub.available("cluster1") == ("True", "ManagedClusterAvailable")
    assert hub.taints("cluster1") == []
    hub.to(360)
    assert_condition(hub.get("cluster1"), LEASE_STOPPED)
    assert conditions_of(hub.get("cluster1"))[AVAILABLE]["lastTransitionTime"] == at(360)
    assert hub.taints("cluster1") == [(UNREACHABLE_KEY, at(360))]
    [event] = hub.events("AvailableUnknown")
    assert (event["metadata"]["namespace"], event["lastTimestamp"]) == ("cluster1", at(360))
    hub.to(405)
    hub.member("cluster1", reachable=True)
    hub.to(409)
    assert hub.taints("cluster1") == [(UNREACHABLE_KEY, at(360))]
    hub.to(410)
    assert hub.renewed("cluster1") == "2025-01-01T00:06:50.000000Z"
    assert hub.available("cluster1") == ("True", "ManagedClusterAvailable")
    assert hub.taints("cluster1") == []
    assert hub.available("cluster2") == ("True", "ManagedClusterAvailable")
    assert hub.taints("cluster2") == []


def test_lease_duration_sets_the_grace_period() -> None:
    """leaseDurationSeconds 30: renewals every 30 s, Unknown 150 s after the last one."""
    hub = joined("cluster1", leaseDurationSeconds=30)
    hub.to(65)
    hub.member("cluster1", reachable=False)
    hub.to(209)
    assert hub.available("cluster1") == ("True", "ManagedClusterAvailable")
    hub.to(210)
    assert hub.available("cluster1") == ("Unknown", "ManagedClusterLeaseUpdateStopped")
    assert hub.taints("cluster1") == [(UNREACHABLE_KEY, at(210))]


def test_unhealthy_member_is_unavailable_then_unreachable_when_it_goes_silent() -> None:
    """Not ready from 65 s: the health check at 120 s fails, Available False 20 s later
    (unavailable taint); silent from 150 s, its last renewal at 120 s: Unknown at 420 s, the
    unavailable taint swapped for the unreachable one."""
    hub = joined("cluster1")
    hub.to(65)
    hub.member("cluster1", ready=False)
    hub.to(139)
    assert hub.taints("cluster1") == []
    hub.to(140)
    assert hub.available("cluster1") == ("False", "ManagedClusterKubeAPIServerUnavailable")
    assert hub.taints("cluster1") == [(UNAVAILABLE_KEY, at(140))]
    hub.to(150)
    hub.member("cluster1", reachable=False)
    hub.to(419)
    assert hub.taints("cluster1") == [(UNAVAILABLE_KEY, at(140))]
    hub.to(420)
    assert hub.available("cluster1") == ("Unknown", "ManagedClusterLeaseUpdateStopped")
    assert hub.taints("cluster1") == [(UNREACHABLE_KEY, at(420))]


def test_user_taints_are_kept_while_the_built_in_ones_come_and_go() -> None:
    hub = joined("cluster1")
    hub.update_spec("cluster1", taints=[{"key": "gpu", "value": "true", "effect": "NoSelect"}])
    hub.to(65)
    hub.member("cluster1", reachable=False)
    hub.to(360)
    assert hub.taints("cluster1") == [("gpu", None), (UNREACHABLE_KEY, at(360))]
    hub.member("cluster1", reachable=True)
    hub.to(400)
    assert hub.taints("cluster1") == [("gpu", None)]


def test_a_cluster_never_accepted_has_no_lease_and_stays_unreachable() -> None:
    hub = OcmHub(["cluster1"])
    hub.join("cluster1", hubAcceptsClient=False)
    hub.to(3600)
    assert conditions_of(hub.get("cluster1")) == {}
    assert hub.taints("cluster1") == [(UNREACHABLE_KEY, at(0))]
    assert hub.store.list(LEASE).items == []
    assert hub.store.list(NAMESPACE).items == []


def test_a_denied_cluster_stops_renewing_and_is_unknown_after_the_grace_period() -> None:
    """Denied at 30 s: HubAccepted False; its agent stops, the last renewal was at 0 s, so
    Available turns Unknown at 300 s: the hub still watches a cluster it once accepted."""
    hub = joined("cluster1")
    hub.to(30)
    hub.update_spec("cluster1", hubAcceptsClient=False)
    accepted = conditions_of(hub.get("cluster1"))[HUB_ACCEPTED]
    assert (accepted["status"], accepted["reason"]) == ("False", "HubClusterAdminDenied")
    assert len(hub.events("ManagedClusterDenied")) == 1
    hub.to(299)
    assert hub.available("cluster1") == ("True", "ManagedClusterAvailable")
    hub.to(300)
    assert hub.renewed("cluster1") == "2025-01-01T00:00:00.000000Z"
    assert hub.available("cluster1") == ("Unknown", "ManagedClusterLeaseUpdateStopped")
    assert hub.taints("cluster1") == [(UNREACHABLE_KEY, at(300))]


def test_clock_synced_at_the_first_renewal() -> None:
    hub = joined("cluster1")
    assert hub.condition("cluster1", "ManagedClusterConditionClockSynced") is None
    hub.to(60)
    synced = hub.condition("cluster1", "ManagedClusterConditionClockSynced")
    assert synced is not None
    assert (synced["status"], synced["lastTransitionTime"]) == ("True", at(60))


def test_addon_labels_follow_the_addon_and_its_cluster() -> None:
    """An add-on reported available is labelled so; when the cluster's agent goes silent
    the add-on turns Unknown with the cluster (label unreachable); deleted, its label goes."""
    hub = joined("cluster1")
    hub.to(10)
    hub.create(addon("application-manager", cluster="cluster1"))
    assert hub.labels("cluster1") == {feature("application-manager"): "unreachable"}
    hub.addon_status("cluster1", "application-manager", addon_available("True"))
    assert hub.labels("cluster1") == {feature("application-manager"): "available"}
    hub.addon_status("cluster1", "application-manager", addon_available("False"))
    assert hub.labels("cluster1") == {feature("application-manager"): "unhealthy"}
    hub.addon_status("cluster1", "application-manager", addon_available("True"))
    hub.to(65)
    hub.member("cluster1", reachable=False)
    hub.to(360)
    assert hub.labels("cluster1") == {feature("application-manager"): "unreachable"}
    mca = hub.store.get(MANAGED_CLUSTER_ADDON, "application-manager", "cluster1")
    assert_condition(mca, {**LEASE_STOPPED, "type": "Available"})
    hub.delete(MANAGED_CLUSTER_ADDON, "application-manager", "cluster1")
    assert hub.labels("cluster1") == {}
