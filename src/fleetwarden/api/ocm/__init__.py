"""Open Cluster Management API group cluster.open-cluster-management.io."""

from fleetwarden.api.kinds import KindInfo

KINDS: list[KindInfo] = []
