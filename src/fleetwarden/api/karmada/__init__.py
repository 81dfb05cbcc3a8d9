"""Karmada API groups: cluster.karmada.io, policy.karmada.io, work.karmada.io."""

from fleetwarden.api.karmada import cluster, policy, work
from fleetwarden.api.kinds import KindInfo

_CATEGORIES = ("karmada-io",)

# Names, scopes, short names and categories as upstream's CRDs (and, for Cluster, its
# aggregated API server) declare them.
KINDS: list[KindInfo] = [
    KindInfo(cluster.GROUP, cluster.VERSION, "Cluster", "clusters", False, cluster.Cluster),
    KindInfo(
        policy.GROUP,
        policy.VERSION,
        "PropagationPolicy",
        "propagationpolicies",
        True,
        policy.PropagationPolicy,
        ("pp",),
        _CATEGORIES,
        has_status=False,
    ),
    KindInfo(
        policy.GROUP,
        policy.VERSION,
        "ClusterPropagationPolicy",
        "clusterpropagationpolicies",
        False,
        policy.ClusterPropagationPolicy,
        ("cpp",),
        _CATEGORIES,
        has_status=False,
    ),
    KindInfo(
        policy.GROUP,
        policy.VERSION,
        "ClusterTaintPolicy",
        "clustertaintpolicies",
        False,
        policy.ClusterTaintPolicy,
        has_status=False,
    ),
    KindInfo(
        policy.GROUP,
        policy.VERSION,
        "OverridePolicy",
        "overridepolicies",
        True,
        policy.OverridePolicy,
        ("op",),
        _CATEGORIES,
        has_status=False,
    ),
    KindInfo(
        policy.GROUP,
        policy.VERSION,
        "ClusterOverridePolicy",
        "clusteroverridepolicies",
        False,
        policy.ClusterOverridePolicy,
        ("cop",),
        _CATEGORIES,
        has_status=False,
    ),
    KindInfo(
        work.GROUP,
        work.BINDING_VERSION,
        "ResourceBinding",
        "resourcebindings",
        True,
        work.ResourceBinding,
        ("rb",),
        _CATEGORIES,
    ),
    KindInfo(
        work.GROUP,
        work.BINDING_VERSION,
        "ClusterResourceBinding",
        "clusterresourcebindings",
        False,
        work.ClusterResourceBinding,
        ("crb",),
        _CATEGORIES,
    ),
    KindInfo(work.GROUP, work.WORK_VERSION, "Work", "works", True, work.Work, ("wk",), _CATEGORIES),
]
