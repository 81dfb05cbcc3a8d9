"""Names Karmada derives from other names (upstream's pkg/util/names)."""

from __future__ import annotations

NAMESPACE_KARMADA_SYSTEM = "karmada-system"
NAMESPACE_KARMADA_CLUSTER = "karmada-cluster"
EXECUTION_SPACE_PREFIX = "karmada-es-"


def generate_binding_name(kind: str, name: str) -> str:
    """`<name>-<kind>` in lower case: the (Cluster)ResourceBinding of a resource template.

    RBAC objects may carry ':' in their names, which a binding's name (a DNS subdomain)
    may not: upstream turns it into '.', and leaves rarer characters alone.
    """
    return f"{name.replace(':', '.')}-{kind}".lower()


def generate_execution_space_name(cluster: str) -> str:
    """The namespace on the hub that holds a member cluster's Work."""
    return EXECUTION_SPACE_PREFIX + cluster


def is_reserved_namespace(namespace: str) -> bool:
    """Karmada's own namespaces, whose objects are never propagated."""
    return namespace in (
        NAMESPACE_KARMADA_SYSTEM,
        NAMESPACE_KARMADA_CLUSTER,
    ) or namespace.startswith(EXECUTION_SPACE_PREFIX)
