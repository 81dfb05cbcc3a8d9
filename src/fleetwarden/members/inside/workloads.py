"""Workloads inside a simulated member, and the pods their controllers want.

Each workload kind keeps the pods upstream's controller would keep:

- Deployment: a ReplicaSet `<name>-<pod-template-hash>` for its current template, whose
  pods are `<replicaset>-<suffix>`; a new template scales the older ReplicaSets to zero at
  once (no maxSurge / maxUnavailable pacing);
- ReplicaSet: `replicas` pods `<name>-<suffix>`;
- StatefulSet: pods `<name>-0` .. `<name>-(replicas-1)`, made again under the same name;
- Job: `parallelism` (default 1) pods `<name>-<suffix>`, running;
- DaemonSet: a pod on every node whose taints its pods tolerate and that matches its
  selector, pinned there by node affinity on metadata.name as the DaemonSet controller does.

A workload's status (replicas, ready, available) is read from its pods.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleetwarden.api.core import NodeSelector, Toleration
from fleetwarden.semantics.pod_scheduling import PodNeeds, default_tolerations, resource_amounts

WORKLOAD_KINDS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "Job", "DaemonSet"})
# k8s.io/apimachinery/pkg/util/rand: the alphabet of generated names (no vowels, no 0/1/3).
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def safe_encode(digest: bytes, length: int) -> str:
    return "".join(_ALPHANUMS[b % len(_ALPHANUMS)] for b in digest[:length])


def template_hash(template: Mapping[str, Any]) -> str:
    """A pod-template-hash: the same template, the same hash."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    return safe_encode(digest, 10)


@dataclass(frozen=True)
class PodTemplate:
    """A pod template as admission leaves it: labels, the spec as given, and what scheduling
    reads of it."""

    labels: Mapping[str, str]
    spec: Mapping[str, Any]
    needs: PodNeeds

    @classmethod
    def of(cls, template: Mapping[str, Any], *, daemon: bool = False) -> PodTemplate:
        spec = dict(template.get("spec") or {})
        tolerations = [Toleration.model_validate(t) for t in spec.get("tolerations") or []]
        tolerations = default_tolerations(
            tolerations, daemon=daemon, host_network=bool(spec.get("hostNetwork"))
        )
        spec["tolerations"] = [t.to_dict() for t in tolerations]
        return cls(
            dict((template.get("metadata") or {}).get("labels") or {}),
            spec,
            pod_needs(spec, tolerations),
        )

    def pinned(self, node: str) -> PodTemplate:
        """The template of a DaemonSet's pod for one node: required affinity to its name."""
        term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [term]}}}  # fmt: skip
        spec = {**self.spec, "affinity": affinity}
        needs = PodNeeds(
            self.needs.requests, self.needs.tolerations, self.needs.node_selector,
            NodeSelector.model_validate({"nodeSelectorTerms": [term]}),
        )  # fmt: skip
        return PodTemplate(self.labels, spec, needs)


def pod_needs(spec: Mapping[str, Any], tolerations: Sequence[Toleration]) -> PodNeeds:
    """Requests summed over the containers, nodeSelector, required node affinity."""
    requests: dict[str, int] = {}
    for container in spec.get("containers") or []:
        for name, amount in resource_amounts(
            (container.get("resources") or {}).get("requests")
        ).items():
            requests[name] = requests.get(name, 0) + amount
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    return PodNeeds(
        requests,
        tuple(tolerations),
        dict(spec.get("nodeSelector") or {}),
        NodeSelector.model_validate(required) if required else None,
    )


@dataclass(frozen=True)
class WorkloadShape:
    """What a workload's controller keeps: for each owner (the workload, or a Deployment's
    ReplicaSets) the pod template and how many pods; StatefulSet pods by ordinal."""

    kind: str
    replicas: int
    template: PodTemplate
    owner: str  # the name of the object owning the pods
    ordinals: bool = False


def shape(manifest: Mapping[str, Any]) -> WorkloadShape:
    kind = str(manifest["kind"])
    spec = manifest.get("spec") or {}
    name = str((manifest.get("metadata") or {}).get("name", ""))
    template = spec.get("template") or {}
    daemon = kind == "DaemonSet"
    pods = PodTemplate.of(template, daemon=daemon)
    if kind == "Job":
        replicas = spec.get("parallelism", 1)
    else:
        replicas = 0 if daemon else spec.get("replicas", 1)
    owner = f"{name}-{template_hash(template)}" if kind == "Deployment" else name
    return WorkloadShape(kind, int(replicas), pods, owner, ordinals=kind == "StatefulSet")


def workload_status(
    kind: str, generation: int, replicas: int, pods: Iterable[tuple[bool, bool]]
) -> dict[str, Any]:
    """The status a workload's controller writes, from its pods as (scheduled, ready)."""
    states = list(pods)
    ready = sum(1 for _, r in states if r)
    if kind == "DaemonSet":
        return {
            "observedGeneration": generation, "desiredNumberScheduled": len(states),
            "currentNumberScheduled": sum(1 for s, _ in states if s),
            "updatedNumberScheduled": len(states), "numberReady": ready,
            "numberAvailable": ready, "numberUnavailable": len(states) - ready,
        }  # fmt: skip
    if kind == "Job":
        return {"active": len(states), "ready": ready}
    status = {"observedGeneration": generation, "replicas": len(states)}
    if kind == "ReplicaSet":
        return {**status, "fullyLabeledReplicas": len(states), "readyReplicas": ready,
                "availableReplicas": ready}  # fmt: skip
    status.update(updatedReplicas=len(states), readyReplicas=ready, availableReplicas=ready)
    if kind == "StatefulSet":
        return {**status, "currentReplicas": len(states)}
    return {**status, "unavailableReplicas": max(replicas - ready, 0)}
