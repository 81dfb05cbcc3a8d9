"""A simulated member's nodes, and its node lifecycle controller.

A node is declared by a scenario (`NodeSpec`: labels, allocatable, taints, whether its kubelet
reports Ready and reaches the control plane, spec.unschedulable). A node whose kubelet stops
reaching the control plane keeps its last Ready status for node-monitor-grace-period, then
reads Ready=Unknown. The node lifecycle controller turns its conditions into taints
(TaintNodesByCondition, and the NoExecute not-ready / unreachable taints of taint-based
eviction), each stamped with the time it was added, which NoExecute tolerationSeconds count
from. Taints the node declares keep the time they were first seen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from fleetwarden.api.core import NO_EXECUTE, Taint
from fleetwarden.api.meta import format_time
from fleetwarden.semantics.pod_scheduling import NodeInfo, condition_taints, resource_amounts
from fleetwarden.semantics.quantity import binary_si, decimal_si

DEFAULT_NODE_ALLOCATABLE = {"cpu": "16", "memory": "64Gi", "pods": "110"}
HOSTNAME_LABEL = "kubernetes.io/hostname"
# The Kubernetes version simulated members run.
KUBERNETES_VERSION = "v1.31.0"
# kube-controller-manager's --node-monitor-grace-period (40 s before Kubernetes 1.32).
NODE_MONITOR_GRACE_PERIOD = timedelta(seconds=40)


@dataclass(frozen=True)
class NodeSpec:
    """A node as a scenario declares it."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    allocatable: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_NODE_ALLOCATABLE))
    ready: bool = True
    reachable: bool = True
    unschedulable: bool = False
    # The MachineSet whose Machine the node is (OpenShift's machine API), if any.
    machine_set: str | None = None

    @property
    def all_labels(self) -> dict[str, str]:
        """Its labels, with the hostname label every kubelet sets."""
        return {HOSTNAME_LABEL: self.name, **self.labels}


class Node:
    """A node of the member: its spec, its taints as the control plane keeps them, and what
    the scheduler sees of it (its pods' requests included)."""

    def __init__(self, spec: NodeSpec, created: datetime) -> None:
        self.spec = spec
        self.created = created
        self.taints: list[Taint] = []
        # Since when its kubelet has not reached the control plane, and its Ready status.
        self.silent_since: datetime | None = None
        self.ready_status = "True"
        self.info = NodeInfo.of(spec.name, spec.all_labels, (), spec.unschedulable,
                                resource_amounts(spec.allocatable))  # fmt: skip
        self.update(spec, created)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def no_execute(self) -> bool:
        """Whether a NoExecute taint is on it (the taint eviction controller looks then)."""
        return any(t.effect == NO_EXECUTE for t in self.taints)

    @property
    def ready(self) -> bool:
        return self.ready_status == "True"

    @property
    def turns_unknown_at(self) -> datetime | None:
        """When the node lifecycle controller will find the silent node's status stale."""
        if self.silent_since is None or self.ready_status == "Unknown":
            return None
        return self.silent_since + NODE_MONITOR_GRACE_PERIOD

    def refresh(self, now: datetime) -> None:
        """monitorNodeHealth: a node silent for node-monitor-grace-period turns Ready=Unknown."""
        due = self.turns_unknown_at
        if due is not None and now >= due:
            self.update(self.spec, now)

    def _ready_status(self, now: datetime) -> str:
        """Ready as the kubelet last posted it, or Unknown once that is too old."""
        if self.spec.reachable:
            self.silent_since = None
            return str(self.spec.ready)
        self.silent_since = self.silent_since or now
        if now >= self.silent_since + NODE_MONITOR_GRACE_PERIOD:
            return "Unknown"
        return self.ready_status if self.ready_status != "Unknown" else str(self.spec.ready)

    def update(self, spec: NodeSpec, now: datetime) -> None:
        """The node lifecycle controller's taints for the node's spec and conditions: a taint
        already there keeps its timeAdded."""
        self.spec = spec
        self.ready_status = self._ready_status(now)
        added = {(t.key, t.value or "", t.effect): t.time_added for t in self.taints}
        wanted = [Taint(key=t.key, value=t.value, effect=t.effect) for t in spec.taints]
        conditions = condition_taints({"Ready": self.ready_status}, spec.unschedulable)
        wanted += [Taint(key=key, effect=effect) for key, effect in conditions]
        self.taints = [
            t.model_copy(update={"time_added": added.get((t.key, t.value or "", t.effect), now)})
            for t in wanted
        ]
        requested, non_zero = self.info.requested, self.info.non_zero
        self.info = NodeInfo.of(spec.name, spec.all_labels, self.taints, spec.unschedulable,
                                resource_amounts(spec.allocatable))  # fmt: skip
        self.info.requested, self.info.non_zero = requested, non_zero

    def to_dict(self) -> dict[str, Any]:
        spec: dict[str, Any] = {}
        if self.taints:
            spec["taints"] = [t.to_dict() for t in self.taints]
        if self.spec.unschedulable:
            spec["unschedulable"] = True
        ready = self.ready_status
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.name,
                "labels": self.spec.all_labels,
                "creationTimestamp": format_time(self.created),
                **self._annotations(),
            },
            "spec": spec,
            "status": {
                "allocatable": dict(self.spec.allocatable),
                "capacity": dict(self.spec.allocatable),
                "conditions": [{"type": "Ready", "status": ready}],
                "nodeInfo": {"kubeletVersion": KUBERNETES_VERSION},
            },
        }

    def _annotations(self) -> dict[str, Any]:
        if self.spec.machine_set is None:
            return {}
        # The machine's name is the node's (a real Machine names its node after its host).
        machine = f"openshift-machine-api/{self.name}"
        return {"annotations": {"machine.openshift.io/machine": machine}}


def quantities(amounts: Mapping[str, int]) -> dict[str, str]:
    """Whole-number amounts back as quantities: cpu from millicores, memory in BinarySI."""
    result = {}
    for name, amount in sorted(amounts.items()):
        if name == "cpu":
            result[name] = decimal_si(amount, -3)
        elif name == "memory" or name == "ephemeral-storage":
            result[name] = binary_si(amount)
        else:
            result[name] = decimal_si(amount)
    return result
