"""Karmada's ClusterMatches; the table is pkg/util/selector_test.go TestClusterMatches."""

from dataclasses import dataclass

import pytest

from fleetwarden.api.karmada.cluster import Cluster as KarmadaCluster
from fleetwarden.api.karmada.policy import ClusterAffinity
from fleetwarden.api.meta import LabelSelector
from fleetwarden.semantics.affinity import cluster_matches, cluster_names_match


@dataclass
class Meta:
    name: str
    labels: dict[str, str] | None = None


@dataclass
class Spec:
    provider: str | None = None
    region: str | None = None
    zone: str | None = None  # deprecated, never consulted
    zones: list[str] | None = None


@dataclass
class Cluster:
    metadata: Meta
    spec: Spec


@dataclass
class Expr:
    key: str
    operator: str
    values: list[str] | None = None


@dataclass
class FieldSelector:
    match_expressions: list[Expr] | None = None


@dataclass
class Affinity:
    cluster_names: list[str] | None = None
    exclude_clusters: list[str] | None = None
    label_selector: LabelSelector | None = None
    field_selector: FieldSelector | None = None


ZONES = ["zone1", "zone2", "zone3"]
CLUSTER = Cluster(
    Meta("cluster1", {"foo": "bar"}),
    Spec(provider="provider1", region="region1", zones=ZONES),
)
FOO_BAR = LabelSelector(match_labels={"foo": "bar"})
ME, OTHER = ["cluster1"], ["cluster2"]


def expr(key: str, operator: str, *values: str) -> Expr:
    return Expr(key, operator, list(values) or None)


def affinity(
    *exprs: Expr,
    names: list[str] | None = None,
    exclude: list[str] | None = None,
    labels: LabelSelector | None = None,
) -> Affinity:
    field_selector = FieldSelector(list(exprs)) if exprs else None
    return Affinity(names, exclude, labels, field_selector)


def match_labels(**labels: str) -> LabelSelector:
    return LabelSelector(match_labels=labels)


ZONE_IN = expr("zone", "In", *ZONES)
ZONE_NOT_IN = expr("zone", "NotIn", *ZONES)

CASES = [
    ("excluded and names", affinity(exclude=ME, names=ME), False),
    ("excluded and label selector", affinity(exclude=ME, labels=FOO_BAR), False),
    ("excluded and field selector", affinity(ZONE_IN, exclude=ME), False),
    ("cluster names", affinity(names=ME), True),
    ("cluster names not matched", affinity(names=OTHER), False),
    ("names and label selector", affinity(labels=FOO_BAR, names=ME), True),
    (
        "names and label selector not matched",
        affinity(labels=match_labels(foo="x"), names=ME),
        False,
    ),
    ("names and zone & region", affinity(ZONE_IN, expr("region", "In", "region1"), names=ME), True),
    ("names and provider", affinity(expr("provider", "In", "provider1"), names=ME), True),
    ("names and region", affinity(expr("region", "In", "region1"), names=ME), True),
    ("names and zone not in", affinity(ZONE_NOT_IN, names=ME), False),
    (
        "names and provider not in",
        affinity(expr("provider", "NotIn", "provider1"), names=ME),
        False,
    ),
    ("names and region not in", affinity(expr("region", "NotIn", "region1"), names=ME), False),
    ("labels and zone", affinity(ZONE_IN, labels=FOO_BAR), True),
    ("labels and provider", affinity(expr("provider", "In", "provider1"), labels=FOO_BAR), True),
    ("labels and region", affinity(expr("region", "In", "region1"), labels=FOO_BAR), True),
    ("labels and zone not in", affinity(ZONE_NOT_IN, labels=FOO_BAR), False),
    (
        "labels and provider not in",
        affinity(expr("provider", "NotIn", "provider1"), labels=FOO_BAR),
        False,
    ),
    (
        "labels and region not in",
        affinity(expr("region", "NotIn", "region1"), labels=FOO_BAR),
        False,
    ),
    ("label selector", affinity(labels=FOO_BAR), True),
    ("label selector not matched", affinity(labels=match_labels(foo="unmatched")), False),
    ("empty affinity", affinity(), True),
    ("label selector error", affinity(labels=LabelSelector(match_labels={"": "bar"})), False),
    ("field selector error", affinity(expr("", "")), False),
    ("zone matched", affinity(ZONE_IN), True),
    ("zone partially matched", affinity(ZONE_NOT_IN, names=ME), False),
    ("zone in one of them", affinity(expr("zone", "In", "zone2"), names=ME), True),
    ("region matched", affinity(expr("region", "In", "region1")), True),
    ("region not in", affinity(expr("region", "NotIn", "region1"), names=ME), False),
    ("region not matched", affinity(expr("region", "In", "region2"), names=ME), False),
    ("provider matched", affinity(expr("provider", "In", "provider1")), True),
    ("provider not in", affinity(expr("provider", "NotIn", "provider1")), False),
    ("provider not matched", affinity(expr("provider", "In", "provider2")), False),
    ("other key not matched", affinity(expr("metadata.name", "In", "cluster1")), False),
    ("all three", affinity(ZONE_IN, labels=FOO_BAR, names=ME), True),
    ("all three, names not matched", affinity(ZONE_IN, labels=FOO_BAR, names=OTHER), False),
    ("all three, zones not matched", affinity(ZONE_NOT_IN, labels=FOO_BAR, names=ME), False),
    (
        "all three, labels not matched",
        affinity(ZONE_IN, labels=match_labels(foo="Unmatched"), names=ME),
        False,
    ),
    # beyond upstream's table
    ("empty field selector", Affinity(field_selector=FieldSelector()), True),
    ("empty label selector", affinity(labels=LabelSelector()), True),
    ("exclude of another cluster", affinity(exclude=OTHER), True),
]


@pytest.mark.parametrize(("given", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_cluster_matches(given: Affinity, want: bool) -> None:
    assert cluster_matches(CLUSTER, given) is want


def test_deprecated_zone_is_not_consulted() -> None:
    legacy = Cluster(Meta("old"), Spec(zone="zone1"))
    assert not cluster_matches(legacy, affinity(expr("zone", "In", "zone1")))
    assert cluster_matches(legacy, affinity(expr("zone", "DoesNotExist")))


def test_unset_fields_are_absent() -> None:
    bare = Cluster(Meta("bare", None), Spec(provider=""))
    assert cluster_matches(bare, affinity(expr("provider", "NotIn", "x")))
    assert not cluster_matches(bare, affinity(expr("provider", "In", "")))
    assert not cluster_matches(bare, affinity(labels=FOO_BAR))


def test_cluster_names_match() -> None:
    assert cluster_names_match("a", None)
    assert cluster_names_match("a", [])
    assert cluster_names_match("a", ["b", "a"])
    assert not cluster_names_match("a", ["b"])


def test_typed_models() -> None:
    cluster = KarmadaCluster.model_validate(
        {
            "metadata": {"name": "member1", "labels": {"env": "prod"}},
            "spec": {"provider": "aws", "region": "us-east-1", "zones": ["us-east-1a"]},
        }
    )
    affinity_ = ClusterAffinity.model_validate(
        {
            "exclude": ["member2"],
            "labelSelector": {"matchLabels": {"env": "prod"}},
            "fieldSelector": {
                "matchExpressions": [{"key": "zone", "operator": "In", "values": ["us-east-1a"]}]
            },
        }
    )
    assert cluster_matches(cluster, affinity_)
    assert not cluster_matches(cluster, ClusterAffinity.model_validate({"exclude": ["member1"]}))
