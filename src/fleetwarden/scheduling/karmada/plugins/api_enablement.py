"""APIEnablement (framework/plugins/apienablement): the cluster must serve the resource's
API, by its status.apiEnablements.

Strict for new placements: a cluster whose API list is incomplete and lacks the kind does
not fit either. A cluster already in the binding's result passes, so that a CRD deleted by
accident on a member never makes the scheduler take the workload away.
"""

from __future__ import annotations

from fleetwarden.scheduling.karmada.framework import API_ENABLED, ClusterInfo, Filter, ScheduleUnit

REASON = "cluster(s) did not have the API resource"


class APIEnablement:
    name = "APIEnablement"
    spares_scheduled = True

    def filter(self, unit: ScheduleUnit) -> Filter:
        def check(cluster: ClusterInfo) -> str | None:
            enabled = cluster.api_enablement(unit.api_version, unit.kind) == API_ENABLED
            return None if enabled else REASON

        return check
