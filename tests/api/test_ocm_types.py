"""OCM kinds: registered as the upstream CRDs declare them, decoded to typed objects and encoded
back field for field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from fleetwarden.api.errors import Invalid
from fleetwarden.api.ocm import KINDS
from fleetwarden.api.ocm.cluster import ManagedCluster, ManagedClusterSetBinding
from fleetwarden.api.ocm.placement import Placement, PlacementDecision
from fleetwarden.api.registry import REGISTRY, decode

GROUP = "cluster.open-cluster-management.io"


@pytest.mark.parametrize(
    ("version", "kind", "plural", "namespaced", "short_names", "has_status"),
    [
        ("v1", "ManagedCluster", "managedclusters", False, ("mcl", "mcls"), True),
        ("v1beta2", "ManagedClusterSet", "managedclustersets", False, ("mclset", "mclsets"), True),
        ("v1beta1", "ManagedClusterSet", "managedclustersets", False, ("mclset", "mclsets"), True),
        (
            "v1beta2",
            "ManagedClusterSetBinding",
            "managedclustersetbindings",
            True,
            ("mclsetbinding", "mclsetbindings"),
            True,
        ),
        (
            "v1beta1",
            "ManagedClusterSetBinding",
            "managedclustersetbindings",
            True,
            ("mclsetbinding", "mclsetbindings"),
            True,
        ),
        ("v1beta1", "Placement", "placements", True, (), True),
        ("v1beta1", "PlacementDecision", "placementdecisions", True, (), True),
        ("v1alpha1", "ClusterClaim", "clusterclaims", False, (), False),
        ("v1alpha1", "AddOnPlacementScore", "addonplacementscores", True, (), True),
    ],
)
def test_kinds_registered_as_the_crds_declare_them(
    version: str,
    kind: str,
    plural: str,
    namespaced: bool,
    short_names: tuple[str, ...],
    has_status: bool,
) -> None:
    info = REGISTRY.get(f"{GROUP}/{version}", kind)
    assert info is not None
    assert (info.group, info.plural, info.namespaced) == (GROUP, plural, namespaced)
    assert (info.short_names, info.has_status) == (short_names, has_status)
    assert REGISTRY.by_plural(GROUP, version, plural) is info


def test_every_ocm_kind_is_listed_once() -> None:
    assert len({(k.api_version, k.kind) for k in KINDS}) == len(KINDS) == 9


def test_placement_is_served_in_v1beta1_only() -> None:
    # The seed's last example still says v1alpha1; upstream's CRD serves v1beta1 alone.
    assert REGISTRY.get(f"{GROUP}/v1alpha1", "Placement") is None


# Seed 003's examples, and objects that use every field upstream has today.
SEED_AND_FULL_OBJECTS = yaml.safe_load_all(
    """
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: ManagedClusterSet
metadata:
  name: clusterset1
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: ManagedClusterSetBinding
metadata:
  namespace: project1
  name: clusterset1
spec:
  clusterSet: clusterset1
---
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: cluster1
  labels:
    cluster.open-cluster-management.io/clusterset: clusterset1
spec:
  hubAcceptsClient: true
---
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: cluster1
spec:
  hubAcceptsClient: true
  taints:
    - effect: NoSelect
      key: gpu
      value: "true"
      timeAdded: '2022-02-21T08:11:06Z'
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: placement4
  namespace: ns1
spec:
  numberOfClusters: 3
  predicates:
    - requiredClusterSelector:
        labelSelector:
          matchLabels:
            vendor: OpenShift
        claimSelector:
          matchExpressions:
            - key: region.open-cluster-management.io
              operator: In
              values:
                - us-west-1
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: placement8
  namespace: ns1
spec:
  numberOfClusters: 2
  prioritizerPolicy:
    mode: Exact
    configurations:
      - scoreCoordinate:
          builtIn: ResourceAllocatableMemory
      - scoreCoordinate:
          builtIn: Steady
        weight: 3
      - scoreCoordinate:
          type: AddOn
          addOn:
            resourceName: default
            scoreName: cpuratio
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata:
  labels:
    cluster.open-cluster-management.io/placement: placement1
  name: placement1-kbc7q
  namespace: ns1
  ownerReferences:
    - apiVersion: cluster.open-cluster-management.io/v1beta1
      blockOwnerDeletion: true
      controller: true
      kind: Placement
      name: placement1
      uid: 05441cf6-2543-4ecc-8389-1079b42fe63e
status:
  decisions:
    - clusterName: cluster1
      reason: ''
    - clusterName: cluster2
      reason: ''
---
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: cluster2
spec:
  managedClusterClientConfigs:
    - url: https://api.cluster2.example.com:6443
      caBundle: ZHVtbXktY2EtYnVuZGxl
  hubAcceptsClient: false
  leaseDurationSeconds: 120
  taints:
    - key: cluster.open-cluster-management.io/unreachable
      effect: NoSelect
      timeAdded: null
status:
  conditions:
    - type: ManagedClusterConditionAvailable
      status: "True"
      reason: ManagedClusterAvailable
      message: Managed cluster is available
      lastTransitionTime: '2024-05-01T12:00:00Z'
      observedGeneration: 2
  capacity: {cpu: "4", memory: 8Gi, pods: 110}
  allocatable: {cpu: 3500m, memory: 7Gi}
  version: {kubernetes: v1.30.2}
  clusterClaims:
    - {name: id.k8s.io, value: 4f3c}
  managedNamespaces:
    - name: team-a
      clusterSet: clusterset1
      conditions: []
---
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata:
  name: edge
spec:
  clusterSelector:
    selectorType: LabelSelector
    labelSelector:
      matchLabels: {vendor: OpenShift}
      matchExpressions:
        - {key: region, operator: NotIn, values: [us-east-1]}
  managedNamespaces:
    - name: team-a
status:
  conditions:
    - type: ClusterSetEmpty
      status: "False"
      reason: ClustersSelected
      message: 3 ManagedClusters selected
      lastTransitionTime: '2024-05-01T12:00:00Z'
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: everything
  namespace: ns1
spec:
  clusterSets: [edge]
  numberOfClusters: 4
  predicates:
    - requiredClusterSelector:
        celSelector:
          celExpressions: ['managedCluster.metadata.labels["version"] >= "v1.30"']
  prioritizerPolicy:
    mode: Additive
    configurations:
      - scoreCoordinate: {type: BuiltIn, builtIn: Spread}
        weight: -2
  spreadPolicy:
    spreadConstraints:
      - topologyKey: zone
        topologyKeyType: Label
        maxSkew: 2
        whenUnsatisfiable: DoNotSchedule
  tolerations:
    - key: cluster.open-cluster-management.io/unreachable
      operator: Exists
      effect: NoSelect
      tolerationSeconds: 300
  decisionStrategy:
    groupStrategy:
      decisionGroups:
        - groupName: canary
          groupClusterSelector:
            labelSelector: {matchLabels: {canary: "true"}}
            claimSelector:
              matchExpressions: [{key: region, operator: Exists}]
      clustersPerDecisionGroup: 25%
  sortBy: Score
  scoreRateLimit: 30s
status:
  numberOfSelectedClusters: 4
  decisionGroups:
    - decisionGroupIndex: 0
      decisionGroupName: canary
      decisions: [everything-decision-1]
      clusterCount: 1
  conditions:
    - type: PlacementSatisfied
      status: "True"
      reason: AllDecisionsScheduled
      message: All cluster decisions scheduled
      lastTransitionTime: '2024-05-01T12:00:00Z'
  lastScoreUpdateTime: '2024-05-01T12:00:00Z'
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata:
  name: everything-decision-1
  namespace: ns1
  labels:
    cluster.open-cluster-management.io/placement: everything
    cluster.open-cluster-management.io/decision-group-index: "0"
    cluster.open-cluster-management.io/decision-group-name: canary
status:
  decisions:
    - {clusterName: cluster1, reason: '', score: 87}
---
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: ClusterClaim
metadata:
  name: id.k8s.io
spec:
  value: 4f3c
---
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: AddOnPlacementScore
metadata:
  name: default
  namespace: cluster1
status:
  conditions:
    - type: Available
      status: "True"
      reason: Scored
      message: ''
      lastTransitionTime: '2024-05-01T12:00:00Z'
  scores:
    - {name: cpuratio, value: 74}
  validUntil: '2024-05-01T13:00:00Z'
"""
)
OBJECTS = list(SEED_AND_FULL_OBJECTS)


@pytest.mark.parametrize(
    "obj", OBJECTS, ids=[f"{o['kind']}-{o['metadata']['name']}" for o in OBJECTS]
)
def test_decode_and_encode_round_trip(obj: dict[str, Any]) -> None:
    typed = decode(obj)
    info = REGISTRY.get(obj["apiVersion"], obj["kind"])
    assert info is not None and isinstance(typed, info.model)
    assert typed.to_dict() == obj


def test_fields_are_typed() -> None:
    placement = decode(OBJECTS[5])
    assert isinstance(placement, Placement)
    policy = placement.spec.prioritizer_policy
    assert policy is not None and policy.configurations is not None
    coordinate = policy.configurations[2].score_coordinate
    assert coordinate is not None and coordinate.add_on is not None
    assert (coordinate.type, coordinate.add_on.score_name) == ("AddOn", "cpuratio")

    cluster = decode(OBJECTS[3])
    assert isinstance(cluster, ManagedCluster) and cluster.spec.taints
    assert cluster.spec.taints[0].time_added == datetime(2022, 2, 21, 8, 11, 6, tzinfo=UTC)

    decision = decode(OBJECTS[6])
    assert isinstance(decision, PlacementDecision) and decision.status.decisions
    assert [d.cluster_name for d in decision.status.decisions] == ["cluster1", "cluster2"]


def test_unknown_fields_are_kept() -> None:
    binding = {
        "apiVersion": f"{GROUP}/v1beta2",
        "kind": "ManagedClusterSetBinding",
        "metadata": {"name": "set1", "namespace": "ns1"},
        "spec": {"clusterSet": "set1", "futureField": {"a": [1, 2]}},
        "somethingNew": True,
    }
    typed = decode(binding)
    assert isinstance(typed, ManagedClusterSetBinding)
    assert typed.to_dict() == binding


@pytest.mark.parametrize(
    ("obj", "error"),
    [
        (
            {"spec": {"numberOfClusters": "3"}},
            'spec.numberOfClusters: Invalid value: "3": must be of type integer',
        ),
        (
            {"spec": {"decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": True}}}},
            "spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup: Invalid value: true: "
            "must be of type integer",
        ),
        (
            {"spec": {"tolerations": [{"tolerationSeconds": "300"}]}},
            'spec.tolerations[0].tolerationSeconds: Invalid value: "300": must be of type integer',
        ),
    ],
)
def test_type_errors_name_the_field(obj: dict[str, Any], error: str) -> None:
    placement = {
        "apiVersion": f"{GROUP}/v1beta1",
        "kind": "Placement",
        "metadata": {"name": "p", "namespace": "ns1"},
        **obj,
    }
    with pytest.raises(Invalid) as err:
        decode(placement)
    assert error in err.value.message


@pytest.mark.parametrize("per_group", [3, "3", "50%"])
def test_clusters_per_decision_group_is_an_int_or_a_string(per_group: int | str) -> None:
    placement = decode(
        {
            "apiVersion": f"{GROUP}/v1beta1",
            "kind": "Placement",
            "metadata": {"name": "p", "namespace": "ns1"},
            "spec": {
                "decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": per_group}}
            },
        }
    )
    assert isinstance(placement, Placement)
    strategy = placement.spec.decision_strategy
    assert strategy is not None and strategy.group_strategy is not None
    assert strategy.group_strategy.clusters_per_decision_group == per_group
