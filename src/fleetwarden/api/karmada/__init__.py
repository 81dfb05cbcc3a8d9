"""Karmada API groups: cluster.karmada.io, policy.karmada.io, work.karmada.io."""

from fleetwarden.api.karmada import cluster, policy, work
from fleetwarden.api.kinds import Conversion, KindInfo

_CATEGORIES = ("karmada-io",)

RESOURCE_BINDING = KindInfo(
    work.GROUP,
    work.BINDING_VERSION,
    "ResourceBinding",
    "resourcebindings",
    True,
    work.ResourceBinding,
    ("rb",),
    _CATEGORIES,
)
CLUSTER_RESOURCE_BINDING = KindInfo(
    work.GROUP,
    work.BINDING_VERSION,
    "ClusterResourceBinding",
    "clusterresourcebindings",
    False,
    work.ClusterResourceBinding,
    ("crb",),
    _CATEGORIES,
)

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
    RESOURCE_BINDING,
    CLUSTER_RESOURCE_BINDING,
    KindInfo(work.GROUP, work.WORK_VERSION, "Work", "works", True, work.Work, ("wk",), _CATEGORIES),
]


def _old_binding(storage: KindInfo, model: type[work.ResourceBindingV1alpha1]) -> KindInfo:
    """The binding kind at v1alpha1, which the CRDs still serve, converted to and from
    v1alpha2 as karmada-webhook's conversion endpoint does."""
    conversion = Conversion(storage, work.binding_to_hub, work.binding_from_hub)
    return KindInfo(
        work.GROUP, work.OLD_BINDING_VERSION, storage.kind, storage.plural, storage.namespaced,
        model, storage.short_names, storage.categories, conversion=conversion,
    )  # fmt: skip


KINDS += [
    _old_binding(RESOURCE_BINDING, work.ResourceBindingV1alpha1),
    _old_binding(CLUSTER_RESOURCE_BINDING, work.ClusterResourceBindingV1alpha1),
]
