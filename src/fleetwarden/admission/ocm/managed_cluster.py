"""ManagedCluster and ClusterClaim: their CRD schemas, and the hub's registration webhooks for
ManagedCluster (the rights they check: admission/ocm/permissions.py).

Upstream: open-cluster-management-io/api cluster/v1 and v1alpha1, ocm
pkg/registration/webhook/v1.
"""

from __future__ import annotations

from fleetwarden.admission.chain import Plugin, Request
from fleetwarden.admission.golang import go_quote
from fleetwarden.admission.ocm.cluster_set import MANAGED_NAMESPACE
from fleetwarden.admission.ocm.permissions import authorize_cluster
from fleetwarden.admission.schema import (
    CONDITIONS_BY_TYPE,
    QUALIFIED_NAME,
    QUANTITY,
    Array,
    Integer,
    Map,
    Object,
    String,
    apply_defaults,
    schema_plugin,
    validation,
)
from fleetwarden.admission.urls import parse_url
from fleetwarden.api.core import Taint
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.meta import Model
from fleetwarden.api.ocm.cluster import (
    CLUSTER_SET_LABEL,
    DEFAULT_CLUSTER_SET,
    GROUP,
    TAINT_EFFECTS,
    ManagedCluster,
)
from fleetwarden.semantics.validation import is_dns1123_label

_SCHEMA = Object(
    properties={
        "spec": Object(
            properties={
                "managedClusterClientConfigs": Array(
                    items=Object(properties={"caBundle": String(byte=True)}, required=("url",))
                ),
                "leaseDurationSeconds": Integer(default=60),
                "taints": Array(
                    items=Object(
                        properties={
                            "key": String(max_length=316, pattern=QUALIFIED_NAME),
                            "value": String(max_length=1024),
                            "effect": String(enum=TAINT_EFFECTS),
                        },
                        required=("effect", "key"),
                    )
                ),
            }
        ),
        "status": Object(
            properties={
                "conditions": CONDITIONS_BY_TYPE,
                "capacity": Map(values=String(pattern=QUANTITY)),
                "allocatable": Map(values=String(pattern=QUANTITY)),
                "clusterClaims": Array(
                    items=Object(
                        properties={
                            "name": String(min_length=1, max_length=253),
                            "value": String(min_length=1, max_length=1024),
                        }
                    )
                ),
                "managedNamespaces": Array(
                    items=Object(
                        properties={**MANAGED_NAMESPACE, "conditions": CONDITIONS_BY_TYPE},
                        required=("clusterSet", "name"),
                    ),
                    list_type="map",
                    list_map_keys=("clusterSet", "name"),
                ),
            }
        ),
    }
)


# --- the mutating webhook -----------------------------------------------------------------


def _mutate(request: Request) -> None:
    cluster = request.of(ManagedCluster)
    _stamp_taints(request, cluster)
    if request.config.default_cluster_set:
        _label_default_cluster_set(cluster)
    # The webhook answers with the object re-encoded from Go, which never omits spec nor
    # spec.hubAcceptsClient; the API server then applies the schema defaults once more.
    _mark_given(cluster, "spec")
    _mark_given(cluster.spec, "hub_accepts_client")
    apply_defaults(_SCHEMA, cluster)


def _stamp_taints(request: Request, cluster: ManagedCluster) -> None:
    """timeAdded belongs to the hub: stamped on a new or changed taint, kept on an unchanged one.

    On create a given timeAdded is overwritten; on update, setting one on a new or changed
    taint, or changing (or dropping) an unchanged taint's, is refused.
    """
    stamp = request.now.replace(microsecond=0)  # metav1.Time keeps whole seconds
    path = Path("spec").child("taints")
    refused: ErrorList = []
    for i, taint in enumerate(cluster.spec.taints or []):
        before = _unchanged_taint(request.old, taint)
        if before is None and (request.old is None or taint.time_added is None):
            taint.time_added = stamp
        elif before is None or before.time_added != taint.time_added:
            message = f"It is not allowed to set TimeAdded of Taint {go_quote(taint.key)}."
            refused.append(path.index(i).child("timeAdded").forbidden(message))
    if refused:
        raise request.invalid(refused)


def _unchanged_taint(old: ManagedCluster | None, taint: Taint) -> Taint | None:
    """The stored taint of that key, if the update keeps its value and effect."""
    before = next((t for t in old.spec.taints or [] if t.key == taint.key), None) if old else None
    if before is None or (before.value or "", before.effect) != (taint.value or "", taint.effect):
        return None
    return before


def _label_default_cluster_set(cluster: ManagedCluster) -> None:
    """Put a cluster without a (non-empty) clusterset label into the default set."""
    labels = cluster.metadata.labels or {}
    if not labels.get(CLUSTER_SET_LABEL):
        cluster.metadata.labels = {**labels, CLUSTER_SET_LABEL: DEFAULT_CLUSTER_SET}


def _mark_given(obj: Model, name: str) -> None:
    """Record a field as set, so that it goes on the wire."""
    setattr(obj, name, getattr(obj, name))


# --- the validating webhook ---------------------------------------------------------------


def _webhook(request: Request) -> ErrorList:
    """A name fit for a namespace, and https client URLs. Upstream checks the name first but
    reports it only when there are client configs to check too."""
    cluster = request.of(ManagedCluster)
    configs = cluster.spec.managed_cluster_client_configs or []
    if not configs:
        return []
    errors = _name_errors(cluster.metadata.name)
    path = Path("spec").child("managedClusterClientConfigs")
    for i, config in enumerate(configs):
        if not _is_https_url(config.url):
            message = f"url {go_quote(config.url)} is invalid in client configs"
            errors.append(path.index(i).child("url").invalid(config.url, message))
    return errors


def _name_errors(name: str) -> ErrorList:
    messages = is_dns1123_label(name)
    if not messages:
        return []
    message = "metadata.name format is not correct: " + ",".join(messages)
    return [Path("metadata").child("name").invalid(name, message)]


def _is_https_url(url: str) -> bool:
    """helpers.IsValidHTTPSURL: not empty, Go's url.Parse takes it, and its scheme is https."""
    try:
        return bool(url) and parse_url(url).scheme == "https"
    except ValueError:
        return False


# --- ClusterClaim -------------------------------------------------------------------------

_CLUSTER_CLAIM = Object(
    properties={"spec": Object(properties={"value": String(min_length=1, max_length=1024)})}
)

PLUGINS = [
    Plugin(
        f"{GROUP}/v1",
        "ManagedCluster",
        _mutate,
        validation(_SCHEMA, _webhook),
        authorize=authorize_cluster,
    ),
    schema_plugin(f"{GROUP}/v1alpha1", "ClusterClaim", _CLUSTER_CLAIM),
]
