"""addon.open-cluster-management.io/v1alpha1: ManagedClusterAddOn.

An add-on's state on one managed cluster, in the cluster's namespace on the hub, written by
the add-on's agents and managers; the hub's registration controllers read its Available
condition into the ManagedCluster's `feature.open-cluster-management.io/addon-<name>` label.
"""

from __future__ import annotations

from pydantic import Field

from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Condition, Model, Resource

GROUP = "addon.open-cluster-management.io"

# ManagedClusterAddOn condition types.
CONDITION_AVAILABLE = "Available"

# HealthCheck.mode.
HEALTH_CHECK_LEASE = "Lease"
HEALTH_CHECK_CUSTOMIZED = "Customized"


class ConfigGroupResource(Model):
    group: str = ""
    resource: str = ""


class ConfigReferent(Model):
    namespace: str | None = None
    name: str = ""


class AddOnConfig(ConfigGroupResource, ConfigReferent):
    """The group and resource, and the namespace and name, of one add-on configuration."""


class ManagedClusterAddOnSpec(Model):
    install_namespace: str | None = None  # deprecated upstream, still written
    configs: list[AddOnConfig] | None = None


# Bases in this order keep the wire order group, resource, namespace, name (AddOnConfig differs).
class ObjectReference(ConfigReferent, ConfigGroupResource):
    """An object related to the add-on: its group and resource, namespace and name."""


class AddOnMeta(Model):
    display_name: str | None = None
    description: str | None = None


class ConfigCoordinates(Model):
    crd_name: str | None = None
    cr_name: str | None = None
    last_observed_generation: int | None = None


class ConfigSpecHash(ConfigReferent):
    spec_hash: str = ""


class ConfigReference(ConfigGroupResource, ConfigReferent):
    last_observed_generation: int = 0
    desired_config: ConfigSpecHash | None = None
    last_applied_config: ConfigSpecHash | None = None


class Subject(Model):
    user: str = ""
    groups: list[str] | None = None
    organization_units: list[str] | None = Field(default=None, alias="organizationUnit")


class RegistrationConfig(Model):
    signer_name: str = ""
    subject: Subject | None = None


class HealthCheck(Model):
    mode: str | None = None


class ManagedClusterAddOnStatus(Model):
    conditions: list[Condition] | None = None
    related_objects: list[ObjectReference] | None = None
    add_on_meta: AddOnMeta | None = None
    add_on_configuration: ConfigCoordinates | None = None
    supported_configs: list[ConfigGroupResource] | None = None
    config_references: list[ConfigReference] | None = None
    namespace: str | None = None
    registrations: list[RegistrationConfig] | None = None
    health_check: HealthCheck | None = None
    kube_client_driver: str | None = None


class ManagedClusterAddOn(Resource):
    """An add-on installed on one managed cluster (namespaced: the cluster's namespace)."""

    spec: ManagedClusterAddOnSpec = Field(default_factory=ManagedClusterAddOnSpec)
    status: ManagedClusterAddOnStatus = Field(default_factory=ManagedClusterAddOnStatus)


# Scope and short names as the upstream CRD declares them.
KINDS: list[KindInfo] = [
    KindInfo(
        GROUP,
        "v1alpha1",
        "ManagedClusterAddOn",
        "managedclusteraddons",
        True,
        ManagedClusterAddOn,
        ("mca", "mcas"),
    ),
]
