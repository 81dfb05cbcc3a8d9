"""core/v1 and coordination.k8s.io/v1 kinds, and the taint/toleration shapes every dialect reuses.

Karmada embeds corev1.Taint and corev1.Toleration unchanged; OCM's own Taint and
Toleration have the very same fields (only their effects differ), so the semantics
layer works on these two shapes for both dialects.
"""

from __future__ import annotations

from pydantic import Field

from fleetwarden.api.meta import MicroTime, Model, Resource, Time

# Taint effects (corev1).
NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"

# Toleration operators (corev1 and OCM alike).
OP_EQUAL = "Equal"
OP_EXISTS = "Exists"


class Taint(Model):
    key: str = ""
    value: str | None = None
    effect: str = ""
    time_added: Time | None = None


class Toleration(Model):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class NodeSelectorRequirement(Model):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class NodeSelectorTerm(Model):
    match_expressions: list[NodeSelectorRequirement] | None = None
    match_fields: list[NodeSelectorRequirement] | None = None


class NodeSelector(Model):
    node_selector_terms: list[NodeSelectorTerm] = Field(default_factory=list)


class ObjectReference(Model):
    api_version: str | None = None
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class NamespaceSpec(Model):
    finalizers: list[str] | None = None


class NamespaceStatus(Model):
    phase: str | None = None


class Namespace(Resource):
    spec: NamespaceSpec = Field(default_factory=NamespaceSpec)
    status: NamespaceStatus = Field(default_factory=NamespaceStatus)


class EventSource(Model):
    component: str | None = None
    host: str | None = None


class EventSeries(Model):
    count: int | None = None
    last_observed_time: MicroTime | None = None


class Event(Resource):
    """core/v1 Event: what a controller did, to which object, how often."""

    involved_object: ObjectReference = Field(default_factory=ObjectReference)
    reason: str | None = None
    message: str | None = None
    source: EventSource | None = None
    first_timestamp: Time | None = None
    last_timestamp: Time | None = None
    count: int | None = None
    type: str | None = None
    event_time: MicroTime | None = None
    series: EventSeries | None = None
    action: str | None = None
    related: ObjectReference | None = None
    reporting_component: str | None = None
    reporting_instance: str | None = None


class LeaseSpec(Model):
    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    acquire_time: MicroTime | None = None
    renew_time: MicroTime | None = None
    lease_transitions: int | None = None
    strategy: str | None = None
    preferred_holder: str | None = None


class Lease(Resource):
    """coordination.k8s.io/v1 Lease: heartbeats of pull-mode members and OCM agents."""

    spec: LeaseSpec = Field(default_factory=LeaseSpec)


class Unstructured(Resource):
    """Any other kind (a Deployment to propagate, say): kept field for field as given."""
