"""ManagedClusterAddOn (addon.open-cluster-management.io/v1alpha1): its CRD schema.

The add-on manager's webhook for this kind only converts between v1alpha1 and v1beta1
(ocm pkg/addon/webhook); v1beta1 is not served here, so admission is the schema alone.

Upstream: open-cluster-management-io/api
addon/v1alpha1/0000_01_addon.open-cluster-management.io_managedclusteraddons.crd.yaml.
"""

from __future__ import annotations

from fleetwarden.admission.schema import (
    CONDITIONS_BY_TYPE,
    DNS1123_LABEL,
    Array,
    Object,
    String,
    schema_plugin,
)
from fleetwarden.api.ocm.addon import GROUP, HEALTH_CHECK_CUSTOMIZED, HEALTH_CHECK_LEASE

# Where the add-on's agent goes on the managed cluster when the add-on does not say.
DEFAULT_INSTALL_NAMESPACE = "open-cluster-management-agent-addon"

# ConfigGroupResource's group is "" for the core group, and the CRD writes it out.
_GROUP = String(default="")
_NAME = String(min_length=1)
_RESOURCE = String(min_length=1)
_SPEC_HASH = Object(properties={"name": _NAME}, required=("name",))

_SCHEMA = Object(
    properties={
        "spec": Object(
            properties={
                "configs": Array(
                    items=Object(
                        properties={"group": _GROUP, "name": _NAME, "resource": _RESOURCE},
                        required=("name", "resource"),
                    )
                ),
                "installNamespace": String(
                    max_length=63, pattern=DNS1123_LABEL, default=DEFAULT_INSTALL_NAMESPACE
                ),
            }
        ),
        "status": Object(
            properties={
                "conditions": CONDITIONS_BY_TYPE,
                "configReferences": Array(
                    items=Object(
                        properties={
                            "desiredConfig": _SPEC_HASH,
                            "group": _GROUP,
                            "lastAppliedConfig": _SPEC_HASH,
                            "name": _NAME,
                            "resource": _RESOURCE,
                        },
                        required=("name", "resource"),
                    )
                ),
                "healthCheck": Object(
                    properties={
                        "mode": String(
                            enum=(HEALTH_CHECK_LEASE, HEALTH_CHECK_CUSTOMIZED),
                            default=HEALTH_CHECK_LEASE,
                        )
                    }
                ),
                "kubeClientDriver": String(enum=("csr", "token")),
                "registrations": Array(
                    items=Object(
                        properties={
                            "signerName": String(
                                min_length=5,
                                max_length=571,
                                pattern=r"^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$",
                            )
                        },
                        required=("signerName",),
                    )
                ),
                "relatedObjects": Array(
                    items=Object(required=("group", "name", "resource")),
                ),
                "supportedConfigs": Array(
                    items=Object(
                        properties={"group": _GROUP, "resource": _RESOURCE}, required=("resource",)
                    ),
                    list_type="map",
                    list_map_keys=("group", "resource"),
                ),
            }
        ),
    },
    required=("spec",),
)

PLUGINS = [schema_plugin(f"{GROUP}/v1alpha1", "ManagedClusterAddOn", _SCHEMA)]
