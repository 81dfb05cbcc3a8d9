"""The in-tree plugins (framework/plugins/registry.go).

Upstream runs the filters in Go map order, which differs from run to run; here they run in
one fixed order, chosen so a cluster the placement does not select at all is reported as
such rather than for its taints or APIs. The ClusterAffinity score plugin is left out: it
always gives the minimum score.
"""

from __future__ import annotations

from fleetwarden.scheduling.karmada.framework import Framework
from fleetwarden.scheduling.karmada.plugins.api_enablement import APIEnablement
from fleetwarden.scheduling.karmada.plugins.cluster_affinity import ClusterAffinity
from fleetwarden.scheduling.karmada.plugins.cluster_eviction import ClusterEviction
from fleetwarden.scheduling.karmada.plugins.cluster_locality import ClusterLocality
from fleetwarden.scheduling.karmada.plugins.spread_constraint import SpreadConstraint
from fleetwarden.scheduling.karmada.plugins.taint_toleration import TaintToleration


def in_tree_framework() -> Framework:
    return Framework(
        filters=[
            ClusterAffinity(),
            ClusterEviction(),
            TaintToleration(),
            APIEnablement(),
            SpreadConstraint(),
        ],
        scores=[ClusterLocality()],
    )
