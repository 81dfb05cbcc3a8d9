"""The cluster status controller for Push clusters: probe the member, report its status.

Upstream runs it in karmada-controller-manager for Push clusters (karmada-agent runs the
same loop for Pull ones): every cluster-status-update-frequency it probes the member's API
server and writes Ready (threshold-adjusted), CompleteAPIEnablements, the version, the
enabled APIs and the resource summary. How a member is probed is given from outside: a
simulated member in `fleetwarden simulate`, an HTTP health check for a real one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.registry import REGISTRY
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches, requeue_after
from fleetwarden.runtime.metrics import seconds_since
from fleetwarden.runtime.status import update_status_if_changed
from fleetwarden.semantics.cluster_health import (
    MemberReport,
    Probe,
    ThresholdState,
    collect_cluster_status,
)

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
NAME = "cluster-status-controller"


@dataclass
class ClusterStatusController:
    probe: Callable[[str], Probe | None]
    report: Callable[[str], MemberReport | None]
    # clusterConditionStore: the threshold bookkeeping upstream keeps in memory.
    thresholds: dict[str, ThresholdState] = field(default_factory=dict)

    def controller(self) -> Controller:
        return Controller(name=NAME, watches=[Watches(CLUSTER)], reconcile=self.reconcile)

    def reconcile(self, key: str, ctx: Context) -> Result:
        start = ctx.clock.now()
        cluster = ctx.cache.informer(CLUSTER).get(key)
        probe = self.probe(key)
        if not isinstance(cluster, Cluster) or cluster.spec.sync_mode != "Push" or probe is None:
            self.thresholds.pop(key, None)
            if cluster is None:
                ctx.metrics.forget_cluster(key)
            return DONE
        report = self.report(key) or MemberReport("", [], {})
        s = ctx.settings
        status, self.thresholds[key] = collect_cluster_status(
            cluster.status, probe, report, self.thresholds.get(key), ctx.clock.now(),
            s.cluster_success_threshold, s.cluster_failure_threshold,
        )  # fmt: skip
        update_status_if_changed(ctx.store, cluster, status)
        ctx.metrics.observe_cluster_sync(key, seconds_since(ctx.clock, start))
        return requeue_after(s.cluster_status_update_frequency)
