"""Claims: which policy a resource template (and its binding) belongs to, written as
upstream's labels and annotations (pkg/detector/claim.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleetwarden.api.karmada import well_known as wk
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import ObjectMeta, Resource
from fleetwarden.api.registry import REGISTRY

PROPAGATION_POLICY = REGISTRY.info("policy.karmada.io/v1alpha1", "PropagationPolicy")
CLUSTER_PROPAGATION_POLICY = REGISTRY.info("policy.karmada.io/v1alpha1", "ClusterPropagationPolicy")


@dataclass(frozen=True)
class Claim:
    """A policy's claim: the labels and annotations it puts on template and binding."""

    labels: Mapping[str, str]
    annotations: Mapping[str, str]


@dataclass(frozen=True)
class PolicyKind:
    """What differs between PropagationPolicy and ClusterPropagationPolicy claims."""

    info: KindInfo
    id_label: str
    namespace_annotation: str | None  # None: cluster-scoped, the claim names no namespace
    name_annotation: str
    finalizer: str
    noun: str  # as upstream's events word it: "policy", "cluster policy"
    title: str  # "Propagation policy", "Cluster propagation policy"

    def policy_id(self, policy: Resource) -> str:
        return (policy.metadata.labels or {}).get(self.id_label, "")

    def claim(self, policy: Resource) -> Claim:
        """Add(C)PPClaimMetadata's labels and annotations."""
        annotations = {self.name_annotation: policy.metadata.name}
        if self.namespace_annotation:
            annotations[self.namespace_annotation] = policy.metadata.namespace
        return Claim({self.id_label: self.policy_id(policy)}, annotations)

    def claimer(self, meta: ObjectMeta) -> tuple[str, str] | None:
        """(namespace, name) of the policy whose claim the object carries in full."""
        labels, annotations = meta.labels or {}, meta.annotations or {}
        namespace = annotations.get(self.namespace_annotation or "", "")
        name = annotations.get(self.name_annotation, "")
        complete = (
            name and labels.get(self.id_label) and (namespace or not self.namespace_annotation)
        )
        return (namespace, name) if complete else None

    def claim_keys(self) -> tuple[list[str], list[str]]:
        """The label keys and annotation keys of a claim."""
        annotations = [self.name_annotation]
        if self.namespace_annotation:
            annotations.insert(0, self.namespace_annotation)
        return [self.id_label], annotations

    def ref(self, namespace: str, name: str) -> str:
        return f"{namespace}/{name}" if self.namespace_annotation else name

    def describe(self, policy: Resource) -> str:
        return f"{self.noun}({self.ref(policy.metadata.namespace, policy.metadata.name)})"


PP = PolicyKind(
    PROPAGATION_POLICY,
    wk.PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    wk.PROPAGATION_POLICY_NAMESPACE_ANNOTATION,
    wk.PROPAGATION_POLICY_NAME_ANNOTATION,
    wk.PROPAGATION_POLICY_CONTROLLER_FINALIZER,
    "policy",
    "Propagation policy",
)
CPP = PolicyKind(
    CLUSTER_PROPAGATION_POLICY,
    wk.CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    None,
    wk.CLUSTER_PROPAGATION_POLICY_ANNOTATION,
    wk.CLUSTER_PROPAGATION_POLICY_CONTROLLER_FINALIZER,
    "cluster policy",
    "Cluster propagation policy",
)


def claimed_by(meta: ObjectMeta, kind: PolicyKind) -> tuple[str, str] | None:
    """The claimer the annotations name, as preemption reads them (no label needed)."""
    annotations = meta.annotations or {}
    name = annotations.get(kind.name_annotation)
    namespace = annotations.get(kind.namespace_annotation or "", "")
    if not name or (kind.namespace_annotation and not namespace):
        return None
    return namespace, name


def unclaimed(template: Resource) -> bool:
    if (template.metadata.labels or {}).get(wk.RESOURCE_TEMPLATE_CLAIMED_BY_LABEL):
        return False
    return all(kind.claimer(template.metadata) is None for kind in (PP, CPP))


def without_claims(wire: dict[str, Any], kinds: Sequence[PolicyKind]) -> dict[str, Any]:
    """The wire object without the claims of those policy kinds (Cleanup(C)PPClaimMetadata);
    a map left empty goes, as omitempty drops it."""
    meta = wire["metadata"]
    for kind in kinds:
        for field_name, keys in zip(("labels", "annotations"), kind.claim_keys(), strict=True):
            kept = {k: v for k, v in (meta.get(field_name) or {}).items() if k not in keys}
            if kept:
                meta[field_name] = kept
            else:
                meta.pop(field_name, None)
    return wire


def with_claim(wire: dict[str, Any], claim: Claim) -> dict[str, Any]:
    """Add(C)PPClaimMetadata on the wire object."""
    meta = wire["metadata"]
    meta["labels"] = {**(meta.get("labels") or {}), **claim.labels}
    meta["annotations"] = {**(meta.get("annotations") or {}), **claim.annotations}
    return wire
