"""Inside a simulated member with nodes: its control plane, run to a given instant.

`MemberKube.sync(now)` runs, in order, what a cluster's own control plane would by then:
the node lifecycle controller (nodes.py), the taint eviction controller (a pod on a node with
a NoExecute taint it does not tolerate is deleted at once; one it tolerates for
tolerationSeconds, that long after the taint's timeAdded), the workload controllers
(workloads.py) making the pods they miss, and kube-scheduler binding pending pods
(semantics/pod_scheduling.py), in the order they were made. A pod is ready
`workloadReadyAfter` after it is bound, while its node is Ready. Timed evictions run at their
own instant, so a late sync gives the same history as a punctual one.
"""

from __future__ import annotations

import copy
import hashlib
import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from fleetwarden.api.karmada.work import ReplicaRequirements
from fleetwarden.api.meta import format_time
from fleetwarden.members.inside.nodes import Node, NodeSpec, quantities
from fleetwarden.members.inside.objects import StoredObjects
from fleetwarden.members.inside.workloads import (
    PodTemplate,
    WorkloadShape,
    safe_encode,
    shape,
    workload_status,
)
from fleetwarden.semantics.pod_scheduling import (
    PodNeeds,
    max_replicas,
    resource_amounts,
    select_node,
)
from fleetwarden.semantics.tolerations import no_execute_eviction

_APPS = "apps/v1"
API_VERSIONS = {"Deployment": _APPS, "ReplicaSet": _APPS, "StatefulSet": _APPS,
                "DaemonSet": _APPS, "Job": "batch/v1"}  # fmt: skip


@dataclass
class Pod:
    name: str
    namespace: str
    owner_kind: str
    owner: str
    template: PodTemplate
    created: datetime
    node: str | None = None
    bound_at: datetime | None = None
    message: str = ""
    # When a NoExecute taint it tolerates for a while evicts it.
    evict_at: datetime | None = None

    def ready(self, nodes: Mapping[str, Node], now: datetime, after: timedelta) -> bool:
        node = nodes.get(self.node or "")
        return (
            node is not None and node.ready and self.bound_at is not None
            and now >= self.bound_at + after
        )  # fmt: skip

    def to_dict(self, ready: bool) -> dict[str, Any]:
        spec = {**self.template.spec}
        if self.node:
            spec["nodeName"] = self.node
        return {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": self.name, "namespace": self.namespace,
                "labels": dict(self.template.labels),
                "creationTimestamp": format_time(self.created),
                "ownerReferences": [{"apiVersion": API_VERSIONS.get(self.owner_kind, _APPS),
                                     "kind": self.owner_kind, "name": self.owner,
                                     "controller": True}],
            },
            "spec": spec,
            "status": _pod_status(self, ready),
        }  # fmt: skip


def _pod_status(pod: Pod, ready: bool) -> dict[str, Any]:
    if pod.node is None:
        scheduled = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "message": pod.message}  # fmt: skip
        return {"phase": "Pending", "conditions": [scheduled]}
    containers = [
        {"name": c.get("name", ""), "image": c.get("image", ""), "ready": ready,
         "restartCount": 0, "started": True}
        for c in pod.template.spec.get("containers") or []
    ]  # fmt: skip
    return {
        "phase": "Running",
        "conditions": [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": str(ready)},
        ],
        "containerStatuses": containers,
    }


@dataclass
class Workload:
    """A workload applied to the member, and the generation of its spec."""

    manifest: Mapping[str, Any]
    shape: WorkloadShape
    generation: int
    owners: list[str] = field(default_factory=list)  # a Deployment's ReplicaSets, oldest first

    @property
    def kind(self) -> str:
        return self.shape.kind

    @property
    def namespace(self) -> str:
        return str(self.manifest.get("metadata", {}).get("namespace") or "default")

    @property
    def name(self) -> str:
        return str(self.manifest.get("metadata", {}).get("name", ""))


WorkloadKey = tuple[str, str, str]  # kind, namespace, name
Summary = tuple[dict[str, str], dict[str, str], dict[str, str]]


class MemberKube:
    """The nodes, workloads and pods of one simulated member, and its objects of other
    kinds (objects.py)."""

    def __init__(self, nodes: Sequence[NodeSpec], now: datetime) -> None:
        self.nodes = {spec.name: Node(spec, now) for spec in nodes}
        self.workloads: dict[WorkloadKey, Workload] = {}
        self.stored = StoredObjects()
        self.pods: dict[tuple[str, str], Pod] = {}
        self.ready_after = timedelta(0)
        self.healthy = True
        self._now = now
        self._made = 0
        # Something changed since the control plane last ran (it runs on events, as
        # controllers and the scheduler's queue do), and the instants pods were bound at.
        self._dirty = False
        self._bound_at: list[datetime] = []
        # How many times pods or nodes changed, and the resource summary as of some count.
        self._changes = 0
        self._summary: tuple[int, Summary] | None = None

    # what changes it from outside -------------------------------------------------------------

    def set_nodes(self, specs: Sequence[NodeSpec], now: datetime) -> None:
        """The nodes as now declared: new ones join, gone ones take their pods with them."""
        self.sync(now)
        wanted = {spec.name: spec for spec in specs}
        for name in [n for n in self.nodes if n not in wanted]:
            del self.nodes[name]
            for pod in [p for p in self.pods.values() if p.node == name]:
                self._delete(pod)  # the pod garbage collector
            self._dirty = True
        for name, spec in wanted.items():
            node = self.nodes.get(name)
            if node is None:
                self.nodes[name] = Node(spec, now)
            elif node.spec != spec:
                node.update(spec, now)
            else:
                continue
            self._dirty = True
        self.sync(now)

    @property
    def now(self) -> datetime:
        """The instant it has run to."""
        return self._now

    def apply(self, manifest: Mapping[str, Any], now: datetime) -> WorkloadKey:
        """Create or update a workload; its controller and the scheduler act at once."""
        self.sync(now)
        meta = manifest.get("metadata") or {}
        key = (str(manifest["kind"]), str(meta.get("namespace") or "default"), str(meta["name"]))
        current = self.workloads.get(key)
        if current is not None and current.manifest.get("spec") == manifest.get("spec"):
            current.manifest = manifest  # its metadata written: no new generation, no rollout
            return key
        generation = current.generation + 1 if current else 1
        workload = Workload(manifest, shape(manifest), generation,
                            list(current.owners) if current else [])  # fmt: skip
        if workload.shape.owner not in workload.owners:
            workload.owners.append(workload.shape.owner)
        self.workloads[key] = workload
        self._dirty = True
        self.sync(now)
        return key

    def remove(self, keys: Iterable[WorkloadKey], now: datetime) -> None:
        self.sync(now)
        for key in keys:
            workload = self.workloads.pop(key, None)
            if workload is not None:
                for pod in self._pods_of(workload):
                    self._delete(pod)
                self._dirty = True
        self.sync(now)

    def delete_pod(self, namespace: str, name: str, now: datetime) -> None:
        """A pod deleted through the member's API: its controller makes another."""
        self.sync(now)
        pod = self.pods.get((namespace, name))
        if pod is not None:
            self._delete(pod)
            self._dirty = True
        self.sync(now)

    # time ------------------------------------------------------------------------------------

    def sync(self, now: datetime) -> None:
        """Run to `now`: every timed eviction due by then at its own instant, then whatever
        changed since it last ran."""
        while (due := self._next_timer()) is not None and due <= now:
            self._reconcile(due)
        if self._dirty:
            self._reconcile(now)
        self._now = max(self._now, now)

    def next_change(self, now: datetime) -> datetime | None:
        """When something changes of itself next: an eviction, or a pod turning ready."""
        times = [t for t in (self._next_timer(), self._next_ready(now)) if t is not None]
        return min(times, default=None)

    def _next_ready(self, now: datetime) -> datetime | None:
        while self._bound_at and self._bound_at[0] + self.ready_after <= now:
            heapq.heappop(self._bound_at)
        return self._bound_at[0] + self.ready_after if self._bound_at else None

    def _next_timer(self) -> datetime | None:
        """The next timed eviction, or a silent node turning Unknown."""
        times = [p.evict_at for p in self.pods.values() if p.evict_at]
        times += [t for n in self.nodes.values() if (t := n.turns_unknown_at) is not None]
        return min(times, default=None)

    def _reconcile(self, now: datetime) -> None:
        self._now, self._dirty = max(self._now, now), False
        self._changes += 1
        for node in self.nodes.values():
            node.refresh(now)
        self._evict(now)
        for workload in self.workloads.values():
            self._keep_pods(workload, now)
        self._schedule()

    # the taint eviction controller ------------------------------------------------------------

    def _evict(self, now: datetime) -> None:
        tainted = {name: node for name, node in self.nodes.items() if node.no_execute}
        for pod in list(self.pods.values()):
            if pod.evict_at is not None and pod.node not in tainted:
                pod.evict_at = None  # the taint went
            node = tainted.get(pod.node or "")
            if node is None:
                continue
            tolerations = pod.template.needs.tolerations
            verdict = no_execute_eviction(node.taints, tolerations, now)
            if verdict.evict_now:
                self._delete(pod)
            else:
                pod.evict_at = None if verdict.evict_after is None else now + verdict.evict_after

    # the workload controllers -----------------------------------------------------------------

    def _keep_pods(self, workload: Workload, now: datetime) -> None:
        if workload.kind == "DaemonSet":
            self._keep_daemon_pods(workload, now)
            return
        for owner in workload.owners:
            want = workload.shape.replicas if owner == workload.shape.owner else 0
            self._scale(workload, owner, want, now)
        workload.owners = [workload.shape.owner]

    def _scale(self, workload: Workload, owner: str, want: int, now: datetime) -> None:
        pods = [
            p for p in self.pods.values()
            if p.namespace == workload.namespace
            and (p.owner_kind, p.owner) == self._owner(workload, owner)
        ]  # fmt: skip
        if workload.shape.ordinals:
            # A StatefulSet keeps ordinals 0..replicas-1, made again under their names.
            names = [f"{owner}-{i}" for i in range(want)]
            extra = [p for p in pods if p.name not in names]
        else:
            names = [self._generate(owner) for _ in range(want - len(pods))]
            extra = sorted(pods, key=_scale_down_order)[: max(len(pods) - want, 0)]
        for pod in extra:
            self._delete(pod)
        for name in names:
            if (workload.namespace, name) not in self.pods:
                self._create(workload, owner, name, workload.shape.template, now)

    def _keep_daemon_pods(self, workload: Workload, now: datetime) -> None:
        """nodeShouldRunDaemonPod: a new pod on each node whose NoSchedule and NoExecute
        taints the pods tolerate and that matches their selector; a pod already there keeps
        running while its NoExecute taints are tolerated (taint eviction sees to those)."""
        template = workload.shape.template
        placed = set()
        for pod in self._pods_of(workload):
            name = _pinned_node(pod.template.needs.affinity)
            if name not in self.nodes or name in placed:
                self._delete(pod)
            else:
                placed.add(name)
        for name, node in sorted(self.nodes.items()):
            if name not in placed and not template.needs.refusals(node.info):
                pod_name = self._generate(workload.name)
                self._create(workload, workload.name, pod_name, template.pinned(name), now)

    def _owner(self, workload: Workload, owner: str) -> tuple[str, str]:
        return ("ReplicaSet" if workload.kind == "Deployment" else workload.kind), owner

    def _pods_of(self, workload: Workload) -> list[Pod]:
        owners = {self._owner(workload, o) for o in workload.owners}
        return [
            p for p in self.pods.values()
            if p.namespace == workload.namespace and (p.owner_kind, p.owner) in owners
        ]  # fmt: skip

    def _generate(self, base: str) -> str:
        """generateName's random suffix, made deterministic."""
        self._made += 1
        digest = hashlib.sha256(f"{base}/{self._made}".encode()).digest()
        return f"{base}-{safe_encode(digest, 5)}"

    def _create(
        self, workload: Workload, owner: str, name: str, template: PodTemplate, now: datetime
    ) -> None:
        kind, owner_name = self._owner(workload, owner)
        self.pods[(workload.namespace, name)] = Pod(
            name, workload.namespace, kind, owner_name, template, now
        )

    def _delete(self, pod: Pod) -> None:
        self._changes += 1
        self.pods.pop((pod.namespace, pod.name), None)
        node = self.nodes.get(pod.node or "")
        if node is not None:
            node.info.remove(pod.template.needs.requests)

    # kube-scheduler ---------------------------------------------------------------------------

    def _schedule(self) -> None:
        infos = [self.nodes[name].info for name in sorted(self.nodes)]
        for pod in self.pods.values():
            if pod.node is not None:
                continue
            chosen = select_node(pod.template.needs, infos)
            if isinstance(chosen, str):
                pod.message = chosen
                continue
            chosen.add(pod.template.needs.requests)
            pod.node, pod.bound_at, pod.message = chosen.name, self._now, ""
            heapq.heappush(self._bound_at, self._now)
        # A pod bound now may meet a NoExecute taint it tolerates only for a while.
        self._evict(self._now)

    # what it shows -------------------------------------------------------------------------

    def workload_object(self, key: WorkloadKey, now: datetime) -> dict[str, Any]:
        """The workload as it runs, with the status its controller writes from its pods."""
        self.sync(now)
        workload = self.workloads[key]
        pods = self._pods_of(workload)
        states = [(p.node is not None, self._ready(p, now)) for p in pods]
        metadata = {**(workload.manifest.get("metadata") or {}), "generation": workload.generation}
        status = workload_status(
            workload.kind, workload.generation, workload.shape.replicas, states
        )
        return {**workload.manifest, "metadata": metadata, "status": status}

    def _ready(self, pod: Pod, now: datetime) -> bool:
        return self.healthy and pod.ready(self.nodes, now, self.ready_after)

    def objects(self, now: datetime) -> list[dict[str, Any]]:
        """Every Node, Pod, ReplicaSet, workload and stored object of the member, as its API
        would list them."""
        self.sync(now)
        objects = [node.to_dict() for node in self.nodes.values()]
        objects += [copy.deepcopy(obj) for obj in self.stored.objects.values()]
        objects += [p.to_dict(self._ready(p, now)) for p in self.pods.values()]
        for key in self.workloads:
            objects.append(self.workload_object(key, now))
            objects += self._replica_sets(self.workloads[key], now)
        return objects

    def _replica_sets(self, workload: Workload, now: datetime) -> list[dict[str, Any]]:
        if workload.kind != "Deployment":
            return []
        pods = self._pods_of(workload)
        states = [(p.node is not None, self._ready(p, now)) for p in pods]
        return [{
            "apiVersion": _APPS, "kind": "ReplicaSet",
            "metadata": {"name": workload.shape.owner, "namespace": workload.namespace,
                         "ownerReferences": [{"apiVersion": _APPS, "kind": "Deployment",
                                              "name": workload.name, "controller": True}]},
            "spec": {"replicas": workload.shape.replicas,
                     "template": workload.manifest.get("spec", {}).get("template", {})},
            "status": workload_status("ReplicaSet", 1, workload.shape.replicas, states),
        }]  # fmt: skip

    def resource_summary(self) -> Summary:
        """allocatable (every node), allocated (bound pods), allocating (pending pods);
        worked out again only after pods or nodes changed."""
        if self._summary is None or self._summary[0] != self._changes:
            self._summary = (self._changes, self._resource_summary())
        return self._summary[1]

    def _resource_summary(self) -> Summary:
        allocatable: dict[str, int] = {}
        allocated: dict[str, int] = {}
        for node in self.nodes.values():
            _add(allocatable, node.info.allocatable)
            _add(allocated, {k: v for k, v in node.info.requested.items() if v})
        allocating: dict[str, int] = {}
        for pod in self.pods.values():
            if pod.node is None:
                _add(allocating, {**pod.template.needs.requests, "pods": 1})
        return quantities(allocatable), quantities(allocated), quantities(allocating)

    def max_replicas(self, needs: PodNeeds) -> int:
        """karmada-scheduler-estimator's answer for pods like these."""
        return max_replicas(needs, (node.info for node in self.nodes.values()))


def replica_needs(requirements: ReplicaRequirements | None) -> PodNeeds:
    """A ResourceBinding's replica requirements as the estimator reads them."""
    if requirements is None:
        return PodNeeds({})
    claim = requirements.node_claim
    return PodNeeds(
        resource_amounts(requirements.resource_request),
        tuple(claim.tolerations or ()) if claim else (),
        dict(claim.node_selector or {}) if claim else {},
        claim.hard_node_affinity if claim else None,
    )


def _add(total: dict[str, int], amounts: Mapping[str, int]) -> None:
    for name, amount in amounts.items():
        total[name] = total.get(name, 0) + amount


def _scale_down_order(pod: Pod) -> tuple[bool, float]:
    """Pending pods go first, then the newest (the ReplicaSet controller's preference)."""
    return pod.node is not None, -pod.created.timestamp()


def _pinned_node(affinity: Any) -> str:
    terms = affinity.node_selector_terms if affinity is not None else []
    for term in terms:
        for requirement in term.match_fields or []:
            if requirement.key == "metadata.name" and requirement.values:
                return str(requirement.values[0])
    return ""
