"""TaintToleration (plugins/tainttoleration): a cluster passes when the placement tolerates
every taint it has, as `ocm_cluster_tolerated` decides: PreferNoSelect never keeps a cluster
out, NoSelectIfNew only a cluster not yet in this placement's decisions, and a toleration with
tolerationSeconds lasts that long from the taint's timeAdded.

A toleration with no key must have operator Exists, and one with Exists no value; otherwise
the placement is Misconfigured (checked once there are clusters to filter, as upstream).
Each kept cluster whose toleration runs out is reported with that instant, so the placement
is scheduled again then.
"""

from __future__ import annotations

from datetime import datetime

from fleetwarden.api.ocm.cluster import ManagedCluster
from fleetwarden.scheduling.ocm.framework import FilterResult, ScheduleContext, Status
from fleetwarden.semantics.tolerations import (
    ocm_cluster_tolerated,
    ocm_toleration_misconfiguration,
)

NAME = "TaintToleration"


class TaintToleration:
    name = NAME

    def filter(self, ctx: ScheduleContext, clusters: list[ManagedCluster]) -> FilterResult:
        if not clusters:
            return FilterResult(clusters)
        tolerations = ctx.placement.spec.tolerations or []
        if message := ocm_toleration_misconfiguration(tolerations):
            return FilterResult([], Status.misconfigured(self.name, message))
        decided = ctx.current_decisions
        expiries: dict[str, datetime] = {}

        def tolerated(cluster: ManagedCluster) -> bool:
            name = cluster.metadata.name
            verdict = ocm_cluster_tolerated(
                cluster.spec.taints, tolerations, in_decision=name in decided, now=ctx.now
            )
            if verdict.tolerated and verdict.requeue_time is not None:
                expiries[name] = verdict.requeue_time
            return verdict.tolerated

        # Most clusters have no taints: one pass, and a call only for the others.
        kept = [c for c in clusters if not c.spec.taints or tolerated(c)]
        return FilterResult(kept, expiries=expiries)
