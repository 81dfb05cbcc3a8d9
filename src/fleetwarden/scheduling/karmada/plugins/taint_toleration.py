"""TaintToleration (framework/plugins/tainttoleration): a cluster with a NoSchedule or
NoExecute taint the placement's clusterTolerations do not tolerate does not fit.

A cluster already in the binding's result passes: if the workload there no longer tolerates
a taint, the taint manager evicts it after its grace period; the scheduler does not.
"""

from __future__ import annotations

from fleetwarden.scheduling.karmada.framework import ClusterInfo, Filter, ScheduleUnit
from fleetwarden.semantics.tolerations import CompiledTolerations


class TaintToleration:
    name = "TaintToleration"
    spares_scheduled = True

    def filter(self, unit: ScheduleUnit) -> Filter:
        tolerations = CompiledTolerations(unit.placement.cluster_tolerations)

        def check(cluster: ClusterInfo) -> str | None:
            taint = tolerations.find_untolerated(cluster.taints)
            return None if taint is None else f"cluster(s) had untolerated taint {{{taint}}}"

        return check
