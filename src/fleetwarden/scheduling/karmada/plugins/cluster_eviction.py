"""ClusterEviction (framework/plugins/clustereviction): a cluster the binding is being
evicted from (named in spec.gracefulEvictionTasks) does not fit it again."""

from __future__ import annotations

from fleetwarden.scheduling.karmada.framework import ClusterInfo, Filter, ScheduleUnit

REASON = "cluster(s) is in the process of eviction"


class ClusterEviction:
    name = "ClusterEviction"
    spares_scheduled = False

    def filter(self, unit: ScheduleUnit) -> Filter:
        def check(cluster: ClusterInfo) -> str | None:
            return REASON if cluster.name in unit.evicting else None

        return check
