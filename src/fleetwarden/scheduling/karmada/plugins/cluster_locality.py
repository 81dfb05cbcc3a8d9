"""ClusterLocality (framework/plugins/clusterlocality): a cluster that already has the
resource (is in the binding's result) scores MAX_CLUSTER_SCORE, so rescheduling keeps
workloads where they run."""

from __future__ import annotations

from collections.abc import Collection, Container

from fleetwarden.scheduling.karmada.framework import MAX_CLUSTER_SCORE, ScheduleUnit


class ClusterLocality:
    name = "ClusterLocality"

    def score(
        self, unit: ScheduleUnit, scheduled: Collection[str], feasible: Container[str]
    ) -> dict[str, int]:
        return {name: MAX_CLUSTER_SCORE for name in scheduled if name in feasible}
