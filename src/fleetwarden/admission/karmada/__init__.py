"""Admission for the Karmada kinds: what upstream's API servers and karmada-webhook do to an
object before it is stored, one module per kind as upstream arranges them.

Cluster is served by karmada-aggregated-apiserver (`cluster`); the policy and work kinds are
CRDs, checked by the shared schema engine and karmada-webhook's handlers (`webhook`).
"""

from fleetwarden.admission.chain import Plugin
from fleetwarden.admission.karmada import (
    binding,
    cluster,
    cluster_taint_policy,
    override_policy,
    propagation_policy,
    work,
)

PLUGINS: list[Plugin] = [
    cluster.PLUGIN,
    *propagation_policy.PLUGINS,
    cluster_taint_policy.PLUGIN,
    *override_policy.PLUGINS,
    *binding.PLUGINS,
    work.PLUGIN,
]
