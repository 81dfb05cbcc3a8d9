"""Admission for the OCM kinds: their CRD schemas (open-cluster-management-io/api
cluster/*/0000_*.crd.yaml, addon/v1alpha1/0000_*.crd.yaml, work/v1/0000_*.crd.yaml), the hub's
registration webhooks (ocm pkg/registration/webhook) and its work webhook (pkg/work/webhook),
one module per kind as upstream arranges them.
"""

from fleetwarden.admission.chain import Plugin
from fleetwarden.admission.ocm import addon, cluster_set, managed_cluster, placement, work

PLUGINS: list[Plugin] = [
    *managed_cluster.PLUGINS,
    *cluster_set.PLUGINS,
    *placement.PLUGINS,
    *addon.PLUGINS,
    *work.PLUGINS,
]
