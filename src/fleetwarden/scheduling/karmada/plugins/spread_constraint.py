"""SpreadConstraint (framework/plugins/spreadconstraint): to spread by provider, region or
zone, a cluster must say which one it is in."""

from __future__ import annotations

from fleetwarden.api.karmada.policy import (
    SPREAD_BY_FIELD_PROVIDER,
    SPREAD_BY_FIELD_REGION,
    SPREAD_BY_FIELD_ZONE,
)
from fleetwarden.scheduling.karmada.framework import ClusterInfo, Filter, ScheduleUnit

# spreadByField -> the Cluster spec property it needs.
_PROPERTY = {
    SPREAD_BY_FIELD_PROVIDER: "provider",
    SPREAD_BY_FIELD_REGION: "region",
    SPREAD_BY_FIELD_ZONE: "zones",
}


class SpreadConstraint:
    name = "SpreadConstraint"
    spares_scheduled = False

    def filter(self, unit: ScheduleUnit) -> Filter:
        wanted = [
            _PROPERTY[c.spread_by_field]
            for c in unit.placement.spread_constraints or ()
            if c.spread_by_field in _PROPERTY
        ]

        def check(cluster: ClusterInfo) -> str | None:
            spec = cluster.cluster.spec
            missing = next((name for name in wanted if not getattr(spec, name)), None)
            return None if missing is None else f"cluster(s) did not have {missing} property"

        return check
