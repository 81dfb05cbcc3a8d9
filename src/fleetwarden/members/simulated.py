"""Simulated member clusters: what a member and its agent would write to the hub.

A simulated member answers health probes (for Push clusters, probed by the hub's cluster
status controller), and runs the agent side of each dialect on the same clock as the hub:

- karmada-agent for a Pull Cluster: renews its Lease in `karmada-cluster` every
  cluster-lease-duration × cluster-lease-renew-interval-fraction, and reports status
  every cluster-status-update-frequency with the success/failure thresholds;
- OCM's registration agent for a ManagedCluster, once the hub accepted it
  (HubAcceptedManagedCluster True; before that it writes nothing): renews the renewTime of
  `managed-cluster-lease`, which the hub creates in the cluster's namespace, every
  leaseDurationSeconds, and reports Joined and Available (False only after 20 s of failed
  health checks, retried every 5 s); while the member is available, also allocatable and
  capacity, the version and status.clusterClaims (the member's ClusterClaims, the reserved
  names first, then at most 20 others, each part sorted by name);
- for every Work in `karmada-es-<member>`, while the member's Cluster is Ready and the Work
  is neither suspended nor being deleted: applies it and reports it Applied, with each
  manifest's status and health as the default resource interpreter reads them from the
  member's object, whose replicas are ready once `workloadReadyAfter` has passed since the
  Work last changed (never while `workloadsHealthy` is false); with nodes, every manifest
  is created or updated inside the member (members/inside/: workloads run as pods, other
  kinds are kept as its API server keeps them) and removed when the Work no longer lists it
  or goes, unless the Work preserves it; a Work whose status already reports every
  manifest applied and healthy when the member first sees it (what-if's copy of a hub's
  Work) runs on as reported, healthy at once;
- OCM's work agent (members/work_agent.py) for the ManifestWorks in the namespace of an
  accepted ManagedCluster, applying them to the member's objects (SimulatedSpoke); with
  nodes, inside the member where a Work's manifests go, its AppliedManifestWorks kept there
  too (MemberKubeSpoke);
- for a deleted Work of a Pull cluster, karmada-agent's execution controller: the rule of
  controllers/karmada/execution.py, run by the agent for its own cluster (the hub's
  execution controller leaves Pull clusters alone): the workload deleted from the member
  once the cluster is Ready, then the `karmada.io/execution-controller` finalizer released.
  A Push cluster's workload goes when the hub's execution controller asks
  (`delete_workload`), which fails while the member is unreachable.

A member that is not reachable writes nothing at all and answers no probe. An agent whose
cluster is not on the hub registers it: karmada-agent a Pull Cluster, the registration
agent (members/agent.py) its ManagedCluster.

The agents (MemberAgents) are one thing, the cluster they run for another: they ask a
MemberCluster for its health, its report and its workloads. SimulatedCluster is the
simulated one above; members/kube.py reaches a real cluster, and `fleetwarden agent`
runs the very same agents for either.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import itertools
import json
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeGuard, runtime_checkable

from fleetwarden.api.errors import NotFound, StatusError
from fleetwarden.api.karmada.cluster import SYNC_MODE_PULL, APIEnablement, Cluster
from fleetwarden.api.karmada.well_known import EXECUTION_CONTROLLER_FINALIZER
from fleetwarden.api.karmada.work import (
    CONDITION_WORK_APPLIED,
    RESOURCE_HEALTHY,
    ManifestStatus,
    ReplicaRequirements,
    Work,
)
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Condition, Resource, find_condition, format_micro_time
from fleetwarden.api.ocm.cluster import (
    CONDITION_HUB_ACCEPTED,
    ManagedCluster,
    ManagedClusterClaim,
    ManagedClusterVersion,
)
from fleetwarden.api.ocm.work import ManifestWork
from fleetwarden.api.registry import REGISTRY, guess_plural
from fleetwarden.members.inside.api_store import MEMBER_REGISTRY, MemberApiStore
from fleetwarden.members.inside.cluster import MemberKube, WorkloadKey, replica_needs
from fleetwarden.members.inside.nodes import KUBERNETES_VERSION, NodeSpec
from fleetwarden.members.inside.objects import ObjectKey, object_key
from fleetwarden.members.inside.workloads import WORKLOAD_KINDS
from fleetwarden.members.work_agent import (
    ObjectRef,
    Spoke,
    SpokeError,
    hub_hash,
    sync_manifest_works,
)
from fleetwarden.runtime.finalizers import handle_work_delete
from fleetwarden.runtime.manager import (
    REQUEUE,
    Context,
    Controller,
    Result,
    Watches,
    requeue_after,
)
from fleetwarden.runtime.status import update_status_if_changed
from fleetwarden.semantics.cluster_health import (
    READY,
    MemberReport,
    Probe,
    ThresholdState,
    collect_cluster_status,
    is_cluster_ready,
    observed_ready_condition,
)
from fleetwarden.semantics.conditions import set_status_condition
from fleetwarden.semantics.resource_interpreter import interpret_health, reflect_status

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
MANAGED_CLUSTER = REGISTRY.info("cluster.open-cluster-management.io/v1", "ManagedCluster")
WORK = REGISTRY.info("work.karmada.io/v1alpha1", "Work")
LEASE = REGISTRY.info("coordination.k8s.io/v1", "Lease")
MANIFEST_WORK = REGISTRY.info("work.open-cluster-management.io/v1", "ManifestWork")
# The URL whose hash names the AppliedManifestWorks of simulated members.
SIMULATED_HUB_URL = "https://fleetwarden-hub:6443"

KARMADA_LEASE_NAMESPACE = "karmada-cluster"
EXECUTION_SPACE_PREFIX = "karmada-es-"
OCM_LEASE_NAME = "managed-cluster-lease"
OCM_DEFAULT_LEASE_SECONDS = 60
OCM_HEALTH_CHECK_PERIOD = timedelta(minutes=1)
OCM_HEALTH_RETRY_INTERVAL = timedelta(seconds=5)
OCM_FAILURE_THRESHOLD = timedelta(seconds=20)
# ClusterClaims the registration agent always exposes (clusterv1alpha1.ReservedClusterClaimNames),
# and how many others it exposes (its --max-custom-cluster-claims default).
RESERVED_CLUSTER_CLAIM_NAMES = frozenset(
    {
        "id.k8s.io",
        "kubeversion.open-cluster-management.io",
        "platform.open-cluster-management.io",
        "product.open-cluster-management.io",
    }
)
MAX_CUSTOM_CLUSTER_CLAIMS = 20
DEFAULT_ALLOCATABLE = {"cpu": "100", "memory": "400Gi", "pods": "1000"}


@dataclass(frozen=True)
class MemberState:
    """A member's switches, as a scenario sets them."""

    reachable: bool = True
    ready: bool = True
    workloads_healthy: bool = True
    workload_ready_after: timedelta = timedelta(0)
    allocatable: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_ALLOCATABLE))
    cluster_claims: Mapping[str, str] = field(default_factory=dict)
    # With nodes, the member runs its workloads' pods on them (members/inside/).
    nodes: tuple[NodeSpec, ...] | None = None
    # How many Machines each of its MachineSets has made (they are named by that count).
    machines_made: Mapping[str, int] = field(default_factory=dict)


# The seam between the agents and the cluster they run for -----------------------------------------


@dataclass(frozen=True)
class AppliedWork:
    """A Work as the member applied it: each manifest's object as it runs there, status
    included (None where applying it failed), why applying failed, what the reported
    status is read from (equal while that status would be), and when that status will
    change of itself (a rollout the member finishes by then)."""

    objects: Sequence[Mapping[str, Any] | None]
    observed: Hashable
    failures: Sequence[str] = ()
    recheck_at: datetime | None = None


class MemberCluster(Protocol):
    """A member cluster, as its agents see it."""

    @property
    def reaches_hub(self) -> bool:
        """Whether what its agents write reaches the hub (a partition cuts both ways)."""
        ...

    def probe(self) -> Probe:
        """The health check of its API server (/readyz)."""
        ...

    def report(self) -> MemberReport: ...

    def cluster_claims(self) -> Mapping[str, str]:
        """Its ClusterClaims that its registration agent exposes, name to value."""
        ...

    def apply(self, work: Work, now: datetime) -> AppliedWork:
        """Create or update the Work's manifests on the member and read them back."""
        ...

    def delete_workload(self, work: Work) -> bool:
        """Remove the Work's manifests from the member: True once they are gone."""
        ...

    def prune_workloads(self, live: Collection[str]) -> None:
        """Remove what was applied for Works (by uid) that are no longer in `live`."""
        ...

    def settled_by(self) -> Hashable | None:
        """What, besides its Works and the clock, what `apply` reads back depends on; None
        when it may change with nothing on the hub changing (a real cluster's workloads):
        then the agent reads every Work back at each loop."""
        ...


@dataclass(frozen=True)
class _Applied:
    """A Work as a simulated member runs it: the Work's generation, the generation of the
    member's objects (bumped by each new revision), and since when that revision runs."""

    work_generation: int
    generation: int
    since: datetime


@dataclass(frozen=True)
class _Ran:
    """What a Work put inside a member with nodes: its workloads, its other objects, and
    whether they stay when the Work goes (preserveResourcesOnDeletion)."""

    workloads: tuple[WorkloadKey, ...] = ()
    objects: tuple[ObjectKey, ...] = ()
    preserve: bool = False


@dataclass
class SimulatedCluster:
    """A simulated member: its switches, and the Works it runs (by Work uid)."""

    state: MemberState
    api_enablements: list[APIEnablement]
    applied: dict[str, _Applied] = field(default_factory=dict)
    kubernetes_version: str = KUBERNETES_VERSION
    # The probe and the report of `state`, made once: every status loop asks for them.
    _told: tuple[MemberState, Probe, MemberReport] | None = field(default=None, repr=False)
    kube: MemberKube | None = None
    _nodes: tuple[NodeSpec, ...] | None = None  # the declared nodes the member runs
    # What each Work (by uid) put inside the member, with nodes.
    ran: dict[str, _Ran] = field(default_factory=dict)
    objects: dict[tuple[str, str, str, str], _SpokeObject] = field(default_factory=dict)
    uids: Iterator[int] = field(default_factory=itertools.count)

    def spoke(self, now: datetime) -> Spoke:
        """The member's API server as its work agent reaches it at `now`: with nodes, the
        member's own (where a Work's manifests go too)."""
        if self.kube is None:
            return SimulatedSpoke(self, now)
        return MemberKubeSpoke(self, self.kube, now)

    @property
    def reaches_hub(self) -> bool:
        return self.state.reachable

    def probe(self) -> Probe:
        return self._tell()[1]

    def report(self) -> MemberReport:
        if self.kube is None:
            return self._tell()[2]
        allocatable, allocated, allocating = self.kube.resource_summary()
        # Empty maps are left out, as the Go structs' omitempty leaves them.
        return MemberReport(
            self.kubernetes_version, self.api_enablements, allocatable, allocated or None,
            allocating or None,
        )  # fmt: skip

    def reports(self, version: str | None, api_enablements: list[APIEnablement] | None) -> None:
        """Report this Kubernetes version and these APIs from now on (each, if given)."""
        if version:
            self.kubernetes_version = version
        if api_enablements is not None:
            self.api_enablements = api_enablements
        self._told = None  # made again from them at the next loop

    def _tell(self) -> tuple[MemberState, Probe, MemberReport]:
        told, state = self._told, self.state
        if told is None or told[0] is not state:
            probe = Probe(online=state.reachable, healthy=state.ready)
            report = MemberReport(
                self.kubernetes_version, self.api_enablements, dict(state.allocatable)
            )
            told = self._told = (state, probe, report)
        return told

    def sync(self, now: datetime) -> datetime | None:
        """Run the member's own control plane to `now` (with nodes); when it next changes
        of itself."""
        nodes = self.state.nodes
        if nodes is None:
            return None
        if self.kube is None:
            self.kube, self._nodes = MemberKube(nodes, now), nodes
        self.kube.ready_after = self.state.workload_ready_after
        self.kube.healthy = self.state.workloads_healthy
        if nodes is not self._nodes:  # a step changed them
            self.kube.set_nodes(nodes, now)
            self._nodes = nodes
        self.kube.sync(now)
        return self.kube.next_change(now)

    def estimate_replicas(self, requirements: ReplicaRequirements | None) -> int | None:
        """karmada-scheduler-estimator's answer; None for a member without nodes."""
        if self.kube is None:
            return None
        return self.kube.max_replicas(replica_needs(requirements))

    def cluster_claims(self) -> Mapping[str, str]:
        return self.state.cluster_claims

    def apply(self, work: Work, now: datetime) -> AppliedWork:
        """Apply a Work not applied yet, or changed since, as a new revision of its
        objects; they are healthy once `workload_ready_after` has passed since."""
        if self.kube is not None:
            return self._run(work, self.kube, now)
        uid, generation = work.metadata.uid or "", work.metadata.generation or 0
        applied = self.applied.get(uid)
        if applied is None:
            applied = self.applied[uid] = self._first(work, now)
        elif applied.work_generation != generation:
            applied = self.applied[uid] = _Applied(generation, applied.generation + 1, now)
        ready_at = applied.since + self.state.workload_ready_after
        healthy = self.state.workloads_healthy and now >= ready_at
        manifests = work.spec.workload.manifests or []
        return AppliedWork(
            [_member_object(m, applied.generation, healthy) for m in manifests],
            observed=healthy,
            recheck_at=ready_at if self.state.workloads_healthy and not healthy else None,
        )

    def _first(self, work: Work, now: datetime) -> _Applied:
        """A Work the member applies for the first time. One whose status already says
        it runs healthy (what-if's copy of a hub's Work) runs on at the revision reported,
        healthy from now, as the member it was copied from runs it."""
        generation = work.metadata.generation or 0
        running = _running_revision(work)
        if running is None:
            return _Applied(generation, 1, now)
        return _Applied(generation, running, now - self.state.workload_ready_after)

    def _run(self, work: Work, kube: MemberKube, now: datetime) -> AppliedWork:
        """Apply a Work's manifests to the member, as karmada-agent's execution controller
        creates or updates each: workloads run on its nodes, other kinds are kept by its API
        server; read them back as they are."""
        objects: list[Mapping[str, Any] | None] = []
        failures: list[str] = []
        workloads: list[WorkloadKey] = []
        stored: list[ObjectKey] = []
        for manifest in work.spec.workload.manifests or []:
            if refusal := _unnamed(manifest):
                objects.append(None)  # the member's API server refuses it
                failures.append(refusal)
            elif manifest.get("kind") in WORKLOAD_KINDS:
                workloads.append(kube.apply(manifest, now))
                objects.append(kube.workload_object(workloads[-1], now))
            else:
                stored.append(kube.stored.apply(manifest, now))
                objects.append(kube.stored.get(stored[-1]))
        preserve = bool(work.spec.preserve_resources_on_deletion)
        ran = _Ran(tuple(workloads), tuple(stored), preserve)
        self._forget(work.metadata.uid or "", keep=ran, now=now)
        self.ran[work.metadata.uid or ""] = ran
        observed = tuple(json.dumps(o, sort_keys=True) for o in objects)
        return AppliedWork(
            objects, observed=observed, failures=failures, recheck_at=kube.next_change(now)
        )

    def _forget(self, uid: str, keep: _Ran, now: datetime) -> None:
        """Delete what a Work put inside the member that `keep` does not list."""
        ran = self.ran.pop(uid, None)
        if ran is None or self.kube is None:
            return
        gone = [key for key in ran.workloads if key not in keep.workloads]
        if gone:
            self.kube.remove(gone, now)
        for key in ran.objects:
            if key not in keep.objects:
                self.kube.stored.remove(key)

    def delete_workload(self, work: Work) -> bool:
        """False while the member cannot be reached."""
        if not self.state.reachable:
            return False
        self.applied.pop(work.metadata.uid or "", None)
        if self.kube is not None:
            self._forget(work.metadata.uid or "", keep=_Ran(), now=self.kube.now)
        return True

    def settled_by(self) -> Hashable | None:
        """Its switches, without nodes: then its workloads change only at `recheck_at`;
        with nodes, pods move on their own."""
        return self.state if self.kube is None else None

    def prune_workloads(self, live: Collection[str]) -> None:
        # A Work gone without the execution controller (its finalizer removed by hand).
        self.applied = {uid: a for uid, a in self.applied.items() if uid in live}
        if self.kube is None:
            return
        gone = [uid for uid in self.ran if uid not in live]
        if not gone:
            return
        # What a live Work lists stays (a Work deleted and made again), and so does what
        # a Work preserved, as a real member's agent leaves them.
        wanted = [ran for uid, ran in self.ran.items() if uid in live]
        listed = _Ran(tuple(k for r in wanted for k in r.workloads),
                      tuple(k for r in wanted for k in r.objects))  # fmt: skip
        for uid in gone:
            self._forget(uid, keep=self.ran[uid] if self.ran[uid].preserve else listed,
                         now=self.kube.now)  # fmt: skip


@dataclass(frozen=True)
class _SpokeObject:
    """An object on a simulated member: as written, and since when its spec is what it is."""

    obj: dict[str, Any]
    since: datetime


@dataclass
class SimulatedSpoke:
    """A simulated member's objects, as its API server serves them: each gets a uid, a
    generation moved by each change of its spec, and (a workload with replicas) the status
    its controller would write, healthy `workload_ready_after` after its spec last changed."""

    cluster: SimulatedCluster
    now: datetime

    def get(self, ref: ObjectRef) -> dict[str, Any] | None:
        stored = self.cluster.objects.get(_spoke_key(ref))
        if stored is None:
            return None
        state = self.cluster.state
        healthy = state.workloads_healthy and self.now >= stored.since + state.workload_ready_after
        generation = stored.obj["metadata"]["generation"]
        return copy.deepcopy(_member_object(stored.obj, generation, healthy))

    def create(self, ref: ObjectRef, obj: dict[str, Any]) -> dict[str, Any]:
        _check_scope(ref, obj)
        metadata = {**obj["metadata"], "uid": _new_uid(self.cluster, ref), "generation": 1}
        self.cluster.objects[_spoke_key(ref)] = _SpokeObject(
            {**obj, "metadata": metadata}, self.now
        )
        return self.get(ref) or {}

    def update(self, ref: ObjectRef, obj: dict[str, Any]) -> dict[str, Any]:
        stored = self.cluster.objects[_spoke_key(ref)]
        metadata = {**obj["metadata"], "uid": stored.obj["metadata"]["uid"]}
        generation, since = stored.obj["metadata"]["generation"], stored.since
        if obj.get("spec") != stored.obj.get("spec"):
            generation, since = generation + 1, self.now
        metadata["generation"] = generation
        self.cluster.objects[_spoke_key(ref)] = _SpokeObject({**obj, "metadata": metadata}, since)
        return self.get(ref) or {}

    def update_status(self, ref: ObjectRef, obj: dict[str, Any]) -> dict[str, Any]:
        return self.update(ref, obj)

    def delete(self, ref: ObjectRef) -> None:
        self.cluster.objects.pop(_spoke_key(ref), None)


def _spoke_key(ref: ObjectRef) -> tuple[str, str, str, str]:
    return (ref.group, ref.resource, ref.namespace, ref.name)


@dataclass
class MemberKubeSpoke:
    """A simulated member with nodes as OCM's work agent reaches it: the member's own
    objects (MemberKube), where a Karmada Work's manifests go too. Workloads run as pods on
    its nodes, with the status their controllers write from them; other objects, the
    agent's AppliedManifestWorks among them, are kept as its API server keeps them."""

    cluster: SimulatedCluster
    kube: MemberKube
    now: datetime

    def get(self, ref: ObjectRef) -> dict[str, Any] | None:
        kind = self._kind(ref)
        if kind in WORKLOAD_KINDS:
            key = (kind, ref.namespace, ref.name)
            found = key in self.kube.workloads
            return copy.deepcopy(self.kube.workload_object(key, self.now)) if found else None
        stored = self.kube.stored.objects.get((ref.group, kind or "", ref.namespace, ref.name))
        return copy.deepcopy(stored) if stored is not None else None

    def create(self, ref: ObjectRef, obj: dict[str, Any]) -> dict[str, Any]:
        _check_scope(ref, obj)
        if refusal := _unnamed(obj):
            raise SpokeError(refusal)
        if obj.get("kind") in WORKLOAD_KINDS:  # the others get their uid where they are kept
            obj = {**obj, "metadata": {**obj["metadata"], "uid": _new_uid(self.cluster, ref)}}
        return self.update(ref, obj)

    def update(self, ref: ObjectRef, obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("kind") in WORKLOAD_KINDS:
            self.kube.apply(obj, self.now)
        else:
            self.kube.stored.apply(obj, self.now)
        return self.get(ref) or {}

    def update_status(self, ref: ObjectRef, obj: dict[str, Any]) -> dict[str, Any]:
        """A workload's status is its controller's: only a kept object's is written."""
        self.update(ref, obj)
        if obj.get("kind") not in WORKLOAD_KINDS:
            self.kube.stored.update_status(object_key(obj), obj.get("status"))
        return self.get(ref) or {}

    def delete(self, ref: ObjectRef) -> None:
        kind = self._kind(ref)
        if kind in WORKLOAD_KINDS:
            self.kube.remove([(kind, ref.namespace, ref.name)], self.now)
        elif kind is not None:
            self.kube.stored.remove((ref.group, kind, ref.namespace, ref.name))

    def _kind(self, ref: ObjectRef) -> str | None:
        """The kind of the resource: the member's, else the hub's; for a custom resource
        neither serves, the kind of the object there whose plural, guessed as the work
        agent guessed it, is the resource."""
        resource = (ref.group, ref.version, ref.resource)
        info = MEMBER_REGISTRY.by_plural(*resource) or REGISTRY.by_plural(*resource)
        if info is not None:
            return info.kind
        return next(
            (kind for group, kind, namespace, name in self.kube.stored.objects
             if (group, namespace, name) == (ref.group, ref.namespace, ref.name)
             and guess_plural(kind) == ref.resource),
            None,
        )  # fmt: skip


def _check_scope(ref: ObjectRef, obj: Mapping[str, Any]) -> None:
    info = REGISTRY.get(
        f"{ref.group}/{ref.version}" if ref.group else ref.version, str(obj.get("kind"))
    )
    if info is not None and info.namespaced and not ref.namespace:
        # The dynamic client posts it to the cluster-scoped path, which does not exist.
        raise SpokeError("the server could not find the requested resource")


def _new_uid(cluster: SimulatedCluster, ref: ObjectRef) -> str:
    return f"{ref.name}-{next(cluster.uids)}"  # unique, and the same every run


def _unnamed(manifest: Mapping[str, Any]) -> str | None:
    """kube-apiserver's refusal of an object without a name."""
    if (manifest.get("metadata") or {}).get("name"):
        return None
    return (f'{manifest.get("kind")} "" is invalid: metadata.name: '
            "Required value: name or generateName is required")  # fmt: skip


@runtime_checkable
class RunsManifestWorks(Protocol):
    """A member whose work agent applies ManifestWorks."""

    def spoke(self, now: datetime) -> Spoke: ...


@dataclass
class _Agent:
    """What a member's agents keep in memory between loops, as upstream's do."""

    threshold: ThresholdState | None = None
    next_lease: datetime | None = None
    # The Lease as the lease controller last wrote it (karmada-agent's latestLease).
    lease: dict[str, Any] | None = None
    next_status: datetime | None = None
    ocm_first_failure: datetime | None = None
    # What the last status loop read, when it found nothing to report (see below).
    steady: tuple[str | None, Probe, MemberReport] | None = None
    # The Work version and what its status was read from, last reported, by Work uid.
    reported: dict[str, tuple[str | None, Hashable]] = field(default_factory=dict)
    # What the Work loop last read, and when it asked to look again (see _work_agent).
    works_read: tuple[object, tuple[datetime, ...]] | None = None
    # The same of OCM's work agent on a member with nodes (RunningMembers._work_agent).
    manifest_works_read: tuple[tuple[int, bool], tuple[datetime, ...]] | None = None


Registration = Callable[[str], dict[str, Any]]


class MemberAgents:
    """The agents of member clusters, as one controller keyed by member name; `register`
    gives the object an agent creates when its cluster is on the hub in neither dialect
    (karmada-agent's Pull Cluster unless told otherwise); `hub_url` is the hub's address
    as the agents reach it (its hash names their AppliedManifestWorks)."""

    controller_name = "member-agents"

    def __init__(
        self,
        members: Mapping[str, MemberCluster],
        register: Registration | None = None,
        hub_url: str = SIMULATED_HUB_URL,
    ) -> None:
        self.clusters = dict(members)
        self._register = register or pull_cluster
        self._agents = {name: _Agent() for name in members}
        self._hub_hash = hub_hash(hub_url)

    def backs(self, name: str) -> bool:
        return name in self.clusters

    def probe(self, name: str) -> Probe | None:
        """A Push cluster's health probe; None for a cluster no member here backs."""
        member = self.clusters.get(name)
        return member.probe() if member else None

    def report(self, name: str) -> MemberReport | None:
        member = self.clusters.get(name)
        return member.report() if member else None

    def delete_workload(self, name: str, work: Work) -> bool:
        """The execution controller deleting a Work's workload from a member: True once it
        is gone (a cluster no member here backs has nothing to delete), False when the
        member cannot be reached."""
        member = self.clusters.get(name)
        return member.delete_workload(work) if member else True

    def estimate_replicas(self, name: str, requirements: ReplicaRequirements | None) -> int | None:
        """No scheduler-estimator runs beside these members: the general estimate only."""
        return None

    def controller(self) -> Controller:
        return Controller(
            name=self.controller_name,
            watches=[
                Watches(CLUSTER, self._own_name),
                Watches(MANAGED_CLUSTER, self._own_name),
                Watches(WORK, self._execution_space_owner),
                Watches(MANIFEST_WORK, self._cluster_namespace_owner),
            ],
            reconcile=self.reconcile,
            # An agent starts with its member, before the hub has anything of it to watch.
            start_keys=tuple(self.clusters),
        )

    def _own_name(self, obj: Resource) -> list[str]:
        return [obj.name] if obj.name in self.clusters else []

    def _cluster_namespace_owner(self, obj: Resource) -> list[str]:
        return [obj.namespace] if obj.namespace in self.clusters else []

    def _execution_space_owner(self, obj: Resource) -> list[str]:
        name = obj.namespace.removeprefix(EXECUTION_SPACE_PREFIX)
        return (
            [name]
            if obj.namespace.startswith(EXECUTION_SPACE_PREFIX) and name in self.clusters
            else []
        )

    def reconcile(self, key: str, ctx: Context) -> Result:
        member = self.clusters.get(key)
        if member is None:
            return Result()
        agent, now = self._agents[key], ctx.clock.now()
        cluster = ctx.cache.informer(CLUSTER).get(key)
        managed = ctx.cache.informer(MANAGED_CLUSTER).get(key)
        if not member.reaches_hub:
            # Nothing leaves the member, not even its registration; look again at the
            # agent's usual pace.
            return requeue_after(ctx.settings.cluster_status_update_frequency)
        if cluster is None and managed is None:
            # The agent registers, then its status loop reports straight away.
            registered = REGISTRY.decode(ctx.store.create(self._register(key)))
            if isinstance(registered, ManagedCluster):
                managed = registered
            else:
                cluster = registered
        wakeups = _work_agent(key, member, agent, cluster, ctx, now)
        if isinstance(managed, ManagedCluster):
            wakeups += _ocm_agent(member, agent, managed, ctx, now)
            wakeups += self._work_agent(member, managed, ctx, now)
        elif _pull(cluster):
            wakeups += _karmada_agent(member, agent, cluster, ctx, now)
        else:
            wakeups.append(now + ctx.settings.cluster_status_update_frequency)
        return requeue_after(min(wakeups) - now)

    def _work_agent(
        self, member: MemberCluster, cluster: ManagedCluster, ctx: Context, now: datetime
    ) -> list[datetime]:
        """OCM's work agent, once the hub accepted its cluster (no hub credentials before)."""
        if not _hub_accepted(cluster) or not isinstance(member, RunsManifestWorks):
            return []
        works = ctx.cache.informer(MANIFEST_WORK).list(cluster.name)
        typed = [w for w in works if isinstance(w, ManifestWork)]
        return sync_manifest_works(member.spoke(now), typed, self._hub_hash, ctx, now)


class RunningMembers(MemberAgents):
    """The agents of simulated members, each member's own control plane run to now first
    (its nodes and pods); they look again when it next changes of itself. A member served
    by an API of its own (`apis`) has its users' edits taken before, and its objects
    published there after."""

    def __init__(
        self,
        members: Mapping[str, SimulatedCluster],
        register: Registration | None = None,
        apis: Mapping[str, MemberApiStore] | None = None,
        hub_url: str = SIMULATED_HUB_URL,
    ) -> None:
        self.members = dict(members)
        self.apis = dict(apis or {})
        super().__init__(self.members, register, hub_url)

    def reconcile(self, key: str, ctx: Context) -> Result:
        member, now = self.members.get(key), ctx.clock.now()
        if member is None:
            return super().reconcile(key, ctx)
        api = self.apis.get(key)
        if api is not None:
            nodes = api.take_edits(member.state.nodes or (), member.kube, now)
            if nodes is not None:
                member.state = replace(member.state, nodes=nodes)
        changes = member.sync(now)
        result = super().reconcile(key, ctx)
        if api is not None and member.kube is not None:
            api.publish(member.kube.objects(now))
        if changes is None or result.requeue_after is None:
            return result
        return requeue_after(min(result.requeue_after, changes - now))

    def _work_agent(
        self, member: MemberCluster, cluster: ManagedCluster, ctx: Context, now: datetime
    ) -> list[datetime]:
        """A member with nodes wakes its agents whenever its pods change; OCM's work agent
        still runs at its own pace, as upstream's: when a ManifestWork of its cluster
        changes, and when it asked to (its status poll, every STATUS_SYNC_INTERVAL)."""
        simulated = self.members.get(cluster.name)
        if simulated is None or simulated.kube is None:
            return super()._work_agent(member, cluster, ctx, now)
        agent = self._agents[cluster.name]
        # Accepted or not: the agent has the hub's credentials only once it is.
        read = (ctx.cache.informer(MANIFEST_WORK).changes(cluster.name), _hub_accepted(cluster))
        if agent.manifest_works_read is not None:
            last, asked = agent.manifest_works_read
            if last == read and all(at > now for at in asked):
                return list(asked)
        wakeups = super()._work_agent(member, cluster, ctx, now)
        agent.manifest_works_read = (read, tuple(wakeups))
        return wakeups


class SimulatedFleet(RunningMembers):
    """The simulated members, and the controller that runs their agents."""

    def __init__(
        self, states: Mapping[str, MemberState], enabled_kinds: Iterable[KindInfo]
    ) -> None:
        enablements = api_enablements((i.api_version, i.plural, i.kind) for i in enabled_kinds)
        super().__init__(
            {name: SimulatedCluster(state, enablements) for name, state in states.items()}
        )

    def reports_as(self, cluster: Cluster) -> None:
        """The cluster's member reports the Kubernetes version and the APIs its status says
        (what-if's copy of a live cluster: the member as it is, not the scenario's kinds)."""
        member, status = self.members.get(cluster.name), cluster.status
        if member is not None:
            member.reports(status.kubernetes_version, status.api_enablements)

    def set_state(self, name: str, state: MemberState) -> None:
        """New switches; nodes change when the member's agents next run (enqueue them)."""
        self.members[name].state = state

    def state(self, name: str) -> MemberState:
        return self.members[name].state

    def estimate_replicas(self, name: str, requirements: ReplicaRequirements | None) -> int | None:
        """karmada-scheduler-estimator of a member with nodes; None for the others."""
        member = self.members.get(name)
        return member.estimate_replicas(requirements) if member is not None else None

    def objects(self, name: str, now: datetime) -> list[dict[str, Any]]:
        """Every object inside a member with nodes (Nodes, Pods, workloads), as of now."""
        member = self.members[name]
        member.sync(now)
        return member.kube.objects(now) if member.kube is not None else []


# karmada-agent ------------------------------------------------------------------------------------


def _karmada_agent(
    member: MemberCluster, agent: _Agent, cluster: Cluster, ctx: Context, now: datetime
) -> list[datetime]:
    s = ctx.settings
    if agent.next_lease is None or now >= agent.next_lease:
        seconds = int(s.cluster_lease_duration.total_seconds())
        agent.lease = _renew_lease(ctx, KARMADA_LEASE_NAMESPACE, cluster, seconds, now, agent.lease)
        agent.next_lease = now + s.cluster_lease_duration * s.cluster_lease_renew_interval_fraction
    if agent.next_status is None or now >= agent.next_status:
        _report_cluster_status(member, agent, cluster, ctx, now)
        agent.next_status = now + s.cluster_status_update_frequency
    return [agent.next_lease, agent.next_status]


def _report_cluster_status(
    member: MemberCluster, agent: _Agent, cluster: Cluster, ctx: Context, now: datetime
) -> None:
    """The agent's status loop. Once Ready agrees with the probe and nothing it reads
    has changed since, another run would write the very same status: skip it."""
    probe, s = member.probe(), ctx.settings
    report = member.report() if probe.online else _NOTHING_REPORTED
    inputs = (cluster.metadata.resource_version, probe, report)
    if agent.steady == inputs:
        return
    status, agent.threshold = collect_cluster_status(
        cluster.status, probe, report, agent.threshold, now,
        s.cluster_success_threshold, s.cluster_failure_threshold,
    )  # fmt: skip
    wrote = update_status_if_changed(ctx.store, cluster, status)
    ready = find_condition(status.conditions, READY)
    settled = ready is not None and ready.status == observed_ready_condition(probe).status
    agent.steady = inputs if settled and not wrote else None


# OCM registration agent ---------------------------------------------------------------------------


def _ocm_agent(
    member: MemberCluster,
    agent: _Agent,
    cluster: ManagedCluster,
    ctx: Context,
    now: datetime,
) -> list[datetime]:
    if not _hub_accepted(cluster):
        # Neither the lease nor the status before the hub accepts the cluster; both
        # start at once when it does (its update wakes us), else the resync looks again.
        agent.next_lease = agent.next_status = None
        return [now + OCM_HEALTH_CHECK_PERIOD]
    seconds = cluster.spec.lease_duration_seconds or OCM_DEFAULT_LEASE_SECONDS
    if agent.next_lease is None or now >= agent.next_lease:
        _renew_ocm_lease(ctx, cluster.name, now)
        agent.next_lease = now + timedelta(seconds=seconds)
    if agent.next_status is None or now >= agent.next_status:
        agent.next_status = now + _ocm_status(member, agent, cluster, ctx, now)
    return [agent.next_lease, agent.next_status]


def _ocm_status(
    member: MemberCluster, agent: _Agent, cluster: ManagedCluster, ctx: Context, now: datetime
) -> timedelta:
    """The spoke's status loop, its reconcilers in upstream's order: joining, available,
    then (only while available) resources and claims; the delay to its next run."""
    status = cluster.status.model_copy()
    status.conditions = set_status_condition(cluster.status.conditions, _JOINED, now)
    next_run = OCM_HEALTH_CHECK_PERIOD
    if member.probe().healthy:
        agent.ocm_first_failure = None
        status.conditions = set_status_condition(status.conditions, _AVAILABLE, now)
        report = member.report()
        status.allocatable = dict(report.allocatable)
        status.capacity = dict(report.allocatable)
        version = ManagedClusterVersion(kubernetes=report.kubernetes_version)
        status.version = status.version or version
        status.cluster_claims = exposed_claims(member.cluster_claims())
    else:
        agent.ocm_first_failure = agent.ocm_first_failure or now
        if now - agent.ocm_first_failure >= OCM_FAILURE_THRESHOLD:
            status.conditions = set_status_condition(status.conditions, _KUBE_API_UNAVAILABLE, now)
        else:
            next_run = OCM_HEALTH_RETRY_INTERVAL
    update_status_if_changed(ctx.store, cluster, status)
    return next_run


def exposed_claims(claims: Mapping[str, str]) -> list[ManagedClusterClaim] | None:
    """exposeClaims: the reserved claims, then at most MAX_CUSTOM_CLUSTER_CLAIMS others, each
    part sorted by name; None when there is none."""
    reserved = sorted(name for name in claims if name in RESERVED_CLUSTER_CLAIM_NAMES)
    custom = sorted(name for name in claims if name not in RESERVED_CLUSTER_CLAIM_NAMES)
    exposed = [*reserved, *custom[:MAX_CUSTOM_CLUSTER_CLAIMS]]
    return [ManagedClusterClaim(name=n, value=claims[n]) for n in exposed] or None


# Work ---------------------------------------------------------------------------------------------


def _work_agent(
    name: str,
    member: MemberCluster,
    agent: _Agent,
    cluster: Resource | None,
    ctx: Context,
    now: datetime,
) -> list[datetime]:
    informer, space = ctx.cache.informer(WORK), EXECUTION_SPACE_PREFIX + name
    # A loop that reads what the last one read (its cluster, its member's switches, no
    # Work changed since), before anything it asked to look again at, would apply, report
    # and delete nothing new (the lease's timer woke it): skip it, without listing.
    settled_by = member.settled_by()
    version = cluster.metadata.resource_version if cluster is not None else None
    read = (settled_by, version, informer.changes(space))
    if settled_by is not None and agent.works_read is not None:
        last, asked = agent.works_read
        if last == read and all(at > now for at in asked):
            return list(asked)
    works = informer.list(space)
    if not works:  # the idle member's every loop: nothing to apply, report or delete
        agent.reported = {}
        member.prune_workloads(())
        return []
    live = {work.metadata.uid or "" for work in works}
    agent.reported = {uid: r for uid, r in agent.reported.items() if uid in live}
    ready = isinstance(cluster, Cluster) and is_cluster_ready(cluster)
    wakeups = _apply_and_report(member, agent, works, ctx, now) if ready else []
    if _pull(cluster):
        wakeups += _delete_works(member, cluster, works, ctx, now)
    # After applying: a Work deleted and made again keeps the objects it still lists.
    member.prune_workloads(live)
    agent.works_read = (read, tuple(wakeups))
    return wakeups


def _delete_works(
    member: MemberCluster, cluster: Cluster, works: list[Resource], ctx: Context, now: datetime
) -> list[datetime]:
    """karmada-agent's execution controller on deleted Works: the hub's rule, for the
    member at hand; when to try again a deletion the member did not complete."""
    retry = False
    for work in works:
        assert isinstance(work, Work)
        deleted = work.metadata.deletion_timestamp is not None
        if deleted and EXECUTION_CONTROLLER_FINALIZER in (work.metadata.finalizers or []):
            delete = functools.partial(member.delete_workload, work)
            retry |= handle_work_delete(ctx.store, work, cluster, delete) == REQUEUE
    # Upstream backs off per Work; the agent's status pace is as good a retry here.
    return [now + ctx.settings.cluster_status_update_frequency] if retry else []


def _apply_and_report(
    member: MemberCluster, agent: _Agent, works: list[Resource], ctx: Context, now: datetime
) -> list[datetime]:
    """Apply every Work neither deleted nor suspended, and report its status; when to look
    again for a status that changes of itself."""
    wakeups: list[datetime] = []
    for work in works:
        assert isinstance(work, Work)
        if work.metadata.deletion_timestamp is not None or work.spec.suspend_dispatching:
            continue
        applied = member.apply(work, now)
        if applied.recheck_at is not None:
            wakeups.append(applied.recheck_at)
        seen = (work.metadata.resource_version, applied.observed)
        if agent.reported.get(uid := str(work.metadata.uid)) != seen:
            # Reported once per Work version and observation: a repeat writes nothing new.
            written = _report_work(ctx, work, applied, now)
            agent.reported[uid] = (written or work.metadata.resource_version, applied.observed)
    return wakeups


def _pull(cluster: Resource | None) -> TypeGuard[Cluster]:
    return isinstance(cluster, Cluster) and cluster.spec.sync_mode == SYNC_MODE_PULL


_JOINED = Condition(
    type="ManagedClusterJoined", status="True", reason="ManagedClusterJoined",
    message="Managed cluster joined",
)  # fmt: skip
_AVAILABLE = Condition(
    type="ManagedClusterConditionAvailable", status="True", reason="ManagedClusterAvailable",
    message="Managed cluster is available",
)  # fmt: skip
_KUBE_API_UNAVAILABLE = Condition(
    type="ManagedClusterConditionAvailable", status="False",
    reason="ManagedClusterKubeAPIServerUnavailable",
    message="The kube-apiserver is not ok, status code: 503, ",
)  # fmt: skip
_NOTHING_REPORTED = MemberReport("", [], {})  # what an offline member tells
_APPLIED = Condition(
    type="Applied", status="True", reason="AppliedSuccessful",
    message="Manifest has been successfully applied",
)  # fmt: skip


def pull_cluster(name: str) -> dict[str, Any]:
    """The Cluster karmada-agent registers for its member."""
    return {
        "apiVersion": CLUSTER.api_version,
        "kind": CLUSTER.kind,
        "metadata": {"name": name},
        "spec": {"syncMode": "Pull"},
    }


def _renew_lease(
    ctx: Context,
    namespace: str,
    owner: Resource,
    seconds: int,
    now: datetime,
    latest: dict[str, Any] | None,
) -> dict[str, Any]:
    """The lease controller's sync (component-helpers' lease controller, which
    karmada-agent runs): the Lease named after its cluster renewed, and returned as written.
    The latest one it wrote is updated without reading it first, as long as no one else
    writes it; else (a conflict, or it is gone) it is read, or created, again."""
    spec = {
        "holderIdentity": owner.name,
        "leaseDurationSeconds": seconds,
        "renewTime": format_micro_time(now),
    }
    if latest is not None:
        with contextlib.suppress(StatusError):
            return ctx.store.update({**latest, "spec": {**latest.get("spec", {}), **spec}})
    # What karmada-agent's role grants on leases: get, create, update.
    try:
        current = ctx.store.get(LEASE, owner.name, namespace)
    except NotFound:
        return ctx.store.create(
            {
                "apiVersion": LEASE.api_version,
                "kind": LEASE.kind,
                "metadata": {
                    "name": owner.name,
                    "namespace": namespace,
                    "ownerReferences": [_owner_reference(owner)],
                },
                "spec": spec,
            }
        )
    return ctx.store.update({**current, "spec": {**current.get("spec", {}), **spec}})


def _hub_accepted(cluster: ManagedCluster) -> bool:
    accepted = find_condition(cluster.status.conditions, CONDITION_HUB_ACCEPTED)
    return accepted is not None and accepted.status == "True"


def _renew_ocm_lease(ctx: Context, namespace: str, now: datetime) -> None:
    """The registration agent's lease update: renewTime on the Lease the hub created; while
    there is none, nothing (it tries again at its next renewal)."""
    # Read, then update: the registration role grants leases get, list, watch and update.
    try:
        lease = ctx.store.get(LEASE, OCM_LEASE_NAME, namespace)
    except NotFound:
        return
    spec = {**lease.get("spec", {}), "renewTime": format_micro_time(now)}
    ctx.store.update({**lease, "spec": spec})


def _owner_reference(owner: Resource) -> dict[str, Any]:
    return {
        "apiVersion": owner.api_version,
        "kind": owner.kind,
        "name": owner.name,
        "uid": owner.metadata.uid or "",
    }


def _report_work(ctx: Context, work: Work, applied: AppliedWork, now: datetime) -> str | None:
    """The execution controller's Applied condition and the work status controller's
    manifestStatuses, for the objects the member runs."""
    status = work.status.model_copy()
    applied_condition = _applied_condition(len(applied.objects), applied.failures)
    status.conditions = set_status_condition(work.status.conditions, applied_condition, now)
    status.manifest_statuses = [
        _manifest_status(i, obj) for i, obj in enumerate(applied.objects) if obj is not None
    ]
    return update_status_if_changed(ctx.store, work, status)


def _applied_condition(total: int, failures: Sequence[str]) -> Condition:
    """syncToClusters' Applied condition; failures aggregated as errors.NewAggregate does."""
    if not failures:
        return _APPLIED
    errors = failures[0] if len(failures) == 1 else f"[{', '.join(failures)}]"
    return Condition(
        type="Applied", status="False", reason="AppliedFailed",
        message=f"Failed to apply all manifests ({total - len(failures)}/{total}): {errors}",
    )  # fmt: skip


def _running_revision(work: Work) -> int | None:
    """The revision of its objects a Work's status reports running, every manifest applied
    and healthy; None when it reports less."""
    applied = find_condition(work.status.conditions, CONDITION_WORK_APPLIED)
    reported = work.status.manifest_statuses or []
    if applied is None or applied.status != "True":
        return None
    if len(reported) != len(work.spec.workload.manifests or []):
        return None
    if any(status.health != RESOURCE_HEALTHY for status in reported):
        return None
    return max((int((status.status or {}).get("generation") or 1) for status in reported),
               default=1)  # fmt: skip


def _member_object(manifest: Mapping[str, Any], generation: int, healthy: bool) -> dict[str, Any]:
    """The manifest as it runs on the member; a workload with replicas gets the status its
    controller would write: every replica updated, and ready and available when healthy."""
    obj = {**manifest, "metadata": {**(manifest.get("metadata") or {}), "generation": generation}}
    replicas = (manifest.get("spec") or {}).get("replicas")
    if isinstance(replicas, int):
        ready = replicas if healthy else 0
        obj["status"] = {
            "observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": ready, "availableReplicas": ready,
            "unavailableReplicas": replicas - ready,
        }  # fmt: skip
    return obj


def _manifest_status(ordinal: int, obj: Mapping[str, Any]) -> ManifestStatus:
    """What the work status controller reports: the object's identity, reflected status
    and interpreted health."""
    info = REGISTRY.info(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    metadata = obj.get("metadata") or {}
    identifier = {
        "ordinal": ordinal,
        "group": info.group,
        "version": info.version,
        "kind": info.kind,
        "resource": info.plural,
        "namespace": metadata.get("namespace", ""),
        "name": metadata.get("name", ""),
    }
    result: dict[str, Any] = {"identifier": identifier, "health": interpret_health(obj)}
    status = reflect_status(obj)
    if status is not None:
        result["status"] = status
    return ManifestStatus.model_validate(result)


def api_enablements(resources: Iterable[tuple[str, str, str]]) -> list[APIEnablement]:
    """getAPIEnablements' shape, from (groupVersion, resource, kind): sorted by group
    version, then by resource."""
    by_group_version: dict[str, dict[str, str]] = {}
    for group_version, plural, kind in resources:
        by_group_version.setdefault(group_version, {})[plural] = kind
    return [
        APIEnablement.model_validate(
            {
                "groupVersion": gv,
                "resources": [{"name": p, "kind": k} for p, k in sorted(resources.items())],
            }
        )
        for gv, resources in sorted(by_group_version.items())
    ]
