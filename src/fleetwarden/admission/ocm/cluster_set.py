"""ManagedClusterSet and ManagedClusterSetBinding, v1beta2 and v1beta1: their CRD schemas and
the hub's binding webhook, less its SubjectAccessReview (managedclustersets/bind).

Upstream: open-cluster-management-io/api cluster/v1beta2, ocm pkg/registration/webhook/v1beta2.
"""

from __future__ import annotations

from fleetwarden.admission.chain import Plugin, Request
from fleetwarden.admission.ocm.permissions import authorize_binding
from fleetwarden.admission.schema import (
    CONDITIONS,
    DNS1123_LABEL,
    SELECTOR,
    Array,
    Object,
    Schema,
    String,
    schema_plugin,
)
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.ocm.cluster import (
    EXCLUSIVE_CLUSTER_SET_LABEL,
    GROUP,
    LABEL_SELECTOR,
    LEGACY_CLUSTER_SET_LABEL,
    ManagedClusterSetBinding,
)

# A namespace the set (or, in its status, a cluster) manages.
MANAGED_NAMESPACE = {"name": String(max_length=63, pattern=DNS1123_LABEL)}

_CONDITIONS_STATUS = Object(properties={"conditions": CONDITIONS})


def _cluster_set(exclusive: str, *, managed_namespaces: bool) -> Object:
    """v1beta1 names the exclusive selector LegacyClusterSetLabel and has no managedNamespaces."""
    spec: dict[str, Schema] = {
        "clusterSelector": Object(
            properties={
                "selectorType": String(enum=(exclusive, LABEL_SELECTOR), default=exclusive),
                "labelSelector": SELECTOR,
            },
            defaulted=True,
        )
    }
    if managed_namespaces:
        spec["managedNamespaces"] = Array(
            items=Object(properties=MANAGED_NAMESPACE, required=("name",)),
            list_type="map",
            list_map_keys=("name",),
        )
    return Object(
        properties={
            "spec": Object(properties=spec, defaulted=True),
            "status": _CONDITIONS_STATUS,
        }
    )


_CLUSTER_SET_BINDING = Object(
    properties={
        "spec": Object(properties={"clusterSet": String(min_length=1)}),
        "status": _CONDITIONS_STATUS,
    }
)


def _binding_webhook(request: Request) -> ErrorList:
    """On create and update, a binding names the set it binds."""
    binding = request.of(ManagedClusterSetBinding)
    if binding.metadata.name == binding.spec.cluster_set:
        return []
    message = "The ManagedClusterSetBinding must have the same name as the target ManagedClusterSet"
    return [Path("metadata").child("name").invalid(binding.metadata.name, message)]


def _plugins(version: str, exclusive: str, *, managed_namespaces: bool) -> list[Plugin]:
    api_version = f"{GROUP}/{version}"
    return [
        schema_plugin(
            api_version,
            "ManagedClusterSet",
            _cluster_set(exclusive, managed_namespaces=managed_namespaces),
        ),
        schema_plugin(
            api_version,
            "ManagedClusterSetBinding",
            _CLUSTER_SET_BINDING,
            _binding_webhook,
            authorize_binding,
        ),
    ]


PLUGINS = [
    *_plugins("v1beta2", EXCLUSIVE_CLUSTER_SET_LABEL, managed_namespaces=True),
    *_plugins("v1beta1", LEGACY_CLUSTER_SET_LABEL, managed_namespaces=False),
]
