"""The Karmada kinds as typed objects: registration, decoding, and lossless round trips."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from fleetwarden.api import core
from fleetwarden.api.errors import Invalid
from fleetwarden.api.karmada import cluster, policy, work
from fleetwarden.api.registry import REGISTRY, decode

CLUSTER = """
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: member1
  labels: {location: eu}
spec:
  id: 8c3f1a2e-0b1d-4c6e-9f7a-2d5e6b7c8d9e
  syncMode: Push
  apiEndpoint: https://172.18.0.3:6443
  secretRef: {namespace: karmada-cluster, name: member1}
  impersonatorSecretRef: {namespace: karmada-cluster, name: member1-impersonator}
  insecureSkipTLSVerification: false
  proxyURL: socks5://proxy.example.com:1080
  proxyHeader: {Proxy-Authorization: Basic eHl6}
  provider: aws
  region: eu-west-1
  zones: [eu-west-1a, eu-west-1b]
  taints:
  - {key: cluster.karmada.io/not-ready, effect: NoSchedule}
  - {key: cluster.karmada.io/not-ready, effect: NoExecute, timeAdded: "2025-01-02T03:04:05Z"}
  resourceModels:
  - grade: 0
    ranges:
    - {name: cpu, min: "0", max: "1"}
    - {name: memory, min: "0", max: 4Gi}
  - grade: 1
    ranges:
    - {name: cpu, min: "1", max: "9223372036854775807"}
    - {name: memory, min: 4Gi, max: "9223372036854775807"}
status:
  kubernetesVersion: v1.31.2
  apiEnablements:
  - groupVersion: apps/v1
    resources: [{name: deployments, kind: Deployment}]
  conditions:
  - type: Ready
    status: "True"
    reason: ClusterReady
    message: cluster is healthy and ready to accept workloads
    lastTransitionTime: "2025-01-02T03:04:05Z"
  nodeSummary: {totalNum: 3, readyNum: 3}
  resourceSummary:
    allocatable: {cpu: "12", memory: 48Gi, pods: "330"}
    allocating: {cpu: 250m}
    allocated: {cpu: "3", memory: 6Gi}
    allocatableModelings: [{grade: 0, count: 1}, {grade: 1, count: 2}]
  remedyActions: [TrafficControl]
"""

PROPAGATION_POLICY = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx-propagation
  namespace: default
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
  - apiVersion: v1
    kind: ConfigMap
    namespace: default
    labelSelector:
      matchLabels: {app: nginx}
      matchExpressions: [{key: tier, operator: In, values: [web]}]
  association: false
  propagateDeps: true
  placement:
    clusterAffinities:
    - affinityName: primary
      clusterNames: [member1, member2]
      exclude: [member3]
      fieldSelector:
        matchExpressions: [{key: region, operator: In, values: [eu-west-1]}]
      overflowAffinities:
      - affinityName: burst
        labelSelector: {matchLabels: {tier: burst}}
    clusterTolerations:
    - {key: cluster.karmada.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 60}
    spreadConstraints:
    - {spreadByField: region, maxGroups: 2, minGroups: 1}
    - {spreadByField: cluster, maxGroups: 3, minGroups: 2}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster: {clusterNames: [member1]}
          weight: 1
        dynamicWeight: AvailableReplicas
    workloadAffinity:
      affinity: {groupByLabelKey: app.group}
      antiAffinity: {groupByLabelKey: app.shard}
  priority: 10
  preemption: Always
  dependentOverrides: [nginx-override]
  schedulerName: default-scheduler
  failover:
    application:
      decisionConditions: {tolerationSeconds: 120}
      purgeMode: Gracefully
      gracePeriodSeconds: 600
      statePreservation:
        rules: [{aliasLabelName: failover.karmada.io/replicas, jsonPath: "{.replicas}"}]
    cluster:
      purgeMode: Directly
  conflictResolution: Overwrite
  activationPreference: Lazy
  suspension:
    dispatchingOnClusters: {clusterNames: [member2]}
  preserveResourcesOnDeletion: true
  schedulePriority: {priorityClassSource: KubePriorityClass, priorityClassName: high}
"""

CLUSTER_TAINT_POLICY = """
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata:
  name: detect-cluster-notready
spec:
  targetClusters:
    clusterNames: [member1, member2]
  addOnConditions:
  - conditionType: Ready
    operator: NotIn
    statusValues: ["True"]
  removeOnConditions:
  - conditionType: Ready
    operator: In
    statusValues: ["True"]
  taints:
  - {key: cluster.karmada.io/not-ready, effect: NoSchedule}
  - {key: cluster.karmada.io/not-ready, effect: NoExecute, value: "true"}
"""

RESOURCE_BINDING = """
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: nginx-deployment
  namespace: default
  labels: {resourcebinding.karmada.io/permanent-id: 2bd5f3e1-4d3c-4a5f-9d6e-7f8a9b0c1d2e}
spec:
  resource:
    apiVersion: apps/v1
    kind: Deployment
    namespace: default
    name: nginx
    uid: 6c1d0e5b-2a3f-4b4c-8d9e-0f1a2b3c4d5e
    resourceVersion: "1042"
  propagateDeps: true
  replicaRequirements:
    nodeClaim:
      hardNodeAffinity:
        nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/os, operator: In, values: [linux]}]
      nodeSelector: {disktype: ssd}
      tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
    resourceRequest: {cpu: 100m, memory: 128Mi}
    namespace: default
    priorityClassName: high
  replicas: 3
  components:
  - name: jobmanager
    replicas: 1
    replicaRequirements: {resourceRequest: {cpu: "1"}}
  clusters:
  - {name: member1, replicas: 2}
  - name: member2
    replicas: 1
    components: [{name: jobmanager, replicas: 1}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
  gracefulEvictionTasks:
  - fromCluster: member3
    purgeMode: Gracefully
    replicas: 1
    reason: TaintUntolerated
    message: evicted by the taint manager
    producer: TaintManager
    gracePeriodSeconds: 600
    preservedLabelState: {failover.karmada.io/replicas: "1"}
    creationTimestamp: "2025-01-02T03:04:05Z"
    clustersBeforeFailover: [member3]
  - {fromCluster: member4, reason: ApplicationFailure, producer: resource-binding-application-failover-controller, suppressDeletion: true}
  requiredBy:
  - namespace: default
    name: frontend-deployment
    clusters: [{name: member1}]
  schedulerName: default-scheduler
  failover:
    application:
      decisionConditions: {tolerationSeconds: 300}
      purgeMode: Never
  conflictResolution: Abort
  rescheduleTriggeredAt: "2025-01-02T03:04:05Z"
  suspension: {dispatching: false, scheduling: true}
  preserveResourcesOnDeletion: false
  schedulePriority: {priority: 1000}
  workloadAffinityGroups: {affinityGroup: app.group=frontend}
status:
  schedulerObservedGeneration: 3
  schedulerObservingAffinityName: primary
  lastScheduledTime: "2025-01-02T03:04:05Z"
  conditions:
  - type: Scheduled
    status: "True"
    reason: Success
    message: Binding has been scheduled successfully.
    lastTransitionTime: "2025-01-02T03:04:05Z"
  aggregatedStatus:
  - clusterName: member1
    status: {replicas: 2, readyReplicas: 2, conditions: [{type: Available}]}
    applied: true
    health: Healthy
  - {clusterName: member2, applied: false, appliedMessage: "conflict: exists", health: Unknown}
"""

WORK = """
apiVersion: work.karmada.io/v1alpha1
kind: Work
metadata:
  name: nginx-687f7fb96f
  namespace: karmada-es-member1
spec:
  workload:
    manifests:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: nginx, namespace: default}
      spec: {replicas: 2, template: {spec: {containers: [{name: nginx, image: "nginx:1.27"}]}}}
  suspendDispatching: false
  preserveResourcesOnDeletion: true
status:
  conditions:
  - type: Applied
    status: "True"
    reason: AppliedSuccessful
    message: Manifest has been successfully applied
    lastTransitionTime: "2025-01-02T03:04:05Z"
  manifestStatuses:
  - identifier: {ordinal: 0, group: apps, version: v1, kind: Deployment, resource: deployments, namespace: default, name: nginx}
    status: {replicas: 2, availableReplicas: 2}
    health: Healthy
"""

SAMPLES = {
    "Cluster": CLUSTER,
    "PropagationPolicy": PROPAGATION_POLICY,
    "ClusterTaintPolicy": CLUSTER_TAINT_POLICY,
    "ResourceBinding": RESOURCE_BINDING,
    "Work": WORK,
}


def sample(kind: str) -> dict[str, Any]:
    doc = yaml.safe_load(SAMPLES[kind])
    assert isinstance(doc, dict)
    return doc


def cluster_scoped(kind: str, doc: dict[str, Any]) -> dict[str, Any]:
    doc["kind"] = kind
    del doc["metadata"]["namespace"]
    return doc


ALL_SAMPLES = [
    *(sample(kind) for kind in SAMPLES),
    cluster_scoped("ClusterPropagationPolicy", sample("PropagationPolicy")),
    cluster_scoped("ClusterResourceBinding", sample("ResourceBinding")),
]


@pytest.mark.parametrize("doc", ALL_SAMPLES, ids=lambda doc: doc["kind"])
def test_round_trip_is_lossless(doc):
    obj = decode(doc)
    assert type(obj).__name__ == doc["kind"]
    assert obj.to_dict() == doc


@pytest.mark.parametrize("doc", ALL_SAMPLES, ids=lambda doc: doc["kind"])
def test_unknown_fields_are_kept(doc):
    doc["fromTheFuture"] = {"a": 1}
    doc["spec"]["newKnob"] = True
    doc["metadata"]["labels"] = {"x": "y"}
    assert decode(doc).to_dict() == doc


def test_object_without_spec_or_status_round_trips_as_given():
    doc = {"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work", "metadata": {"name": "w"}}
    assert decode(doc).to_dict() == doc


def test_cluster_fields():
    obj = decode(sample("Cluster"))
    assert isinstance(obj, cluster.Cluster)
    spec = obj.spec
    assert spec.proxy_url == "socks5://proxy.example.com:1080"
    assert spec.insecure_skip_tls_verification is False
    assert spec.secret_ref == cluster.LocalSecretReference(
        namespace="karmada-cluster", name="member1"
    )
    assert spec.taints is not None and isinstance(spec.taints[1], core.Taint)
    assert spec.taints[1].time_added == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert spec.resource_models is not None and spec.resource_models[0].ranges[1].max == "4Gi"
    summary = obj.status.resource_summary
    assert summary is not None and summary.allocatable == {
        "cpu": "12",
        "memory": "48Gi",
        "pods": "330",
    }
    assert obj.status.conditions is not None and obj.status.conditions[0].reason == "ClusterReady"


def test_propagation_policy_fields():
    obj = decode(sample("PropagationPolicy"))
    assert isinstance(obj, policy.PropagationPolicy)
    placement = obj.spec.placement
    assert placement.cluster_affinities is not None
    term = placement.cluster_affinities[0]
    assert term.exclude_clusters == ["member3"]
    assert (
        term.overflow_affinities is not None
        and term.overflow_affinities[0].affinity_name == "burst"
    )
    assert placement.cluster_tolerations == [
        core.Toleration(
            key="cluster.karmada.io/not-ready",
            operator="Exists",
            effect="NoExecute",
            toleration_seconds=60,
        )
    ]
    assert obj.spec.failover is not None and obj.spec.failover.application is not None
    assert obj.spec.failover.application.decision_conditions.toleration_seconds == 120


def test_affinity_name_comes_first_on_the_wire():
    term = policy.ClusterAffinityTerm(cluster_names=["m1"], affinity_name="primary")
    assert list(term.to_dict()) == ["affinityName", "clusterNames"]


def test_resource_binding_fields():
    obj = decode(sample("ResourceBinding"))
    assert isinstance(obj, work.ResourceBinding)
    assert obj.status.scheduler_observed_affinity_name == "primary"
    assert obj.spec.suspension is not None and obj.spec.suspension.scheduling is True
    tasks = obj.spec.graceful_eviction_tasks
    assert tasks is not None and tasks[0].creation_timestamp == datetime(
        2025, 1, 2, 3, 4, 5, tzinfo=UTC
    )
    assert obj.status.aggregated_status is not None
    assert obj.status.aggregated_status[0].status == {
        "replicas": 2,
        "readyReplicas": 2,
        "conditions": [{"type": "Available"}],
    }


def test_work_manifests_stay_free_form():
    obj = decode(sample("Work"))
    assert isinstance(obj, work.Work)
    manifests = obj.spec.workload.manifests
    assert manifests is not None and manifests[0]["kind"] == "Deployment"
    statuses = obj.status.manifest_statuses
    assert statuses is not None and statuses[0].identifier.resource == "deployments"


def test_wrongly_typed_field_is_a_field_error():
    doc = sample("ResourceBinding")
    doc["spec"]["replicas"] = "three"
    with pytest.raises(Invalid) as caught:
        decode(doc)
    assert [str(e) for e in caught.value.errors] == [
        'spec.replicas: Invalid value: "three": must be of type integer'
    ]


@pytest.mark.parametrize(
    ("placement", "want"),
    [
        (policy.Placement(), "Duplicated"),
        (policy.Placement(replica_scheduling=policy.ReplicaSchedulingStrategy()), ""),
        (
            policy.Placement(
                replica_scheduling=policy.ReplicaSchedulingStrategy(
                    replica_scheduling_type="Divided"
                )
            ),
            "Divided",
        ),
    ],
)
def test_replica_scheduling_type(placement, want):
    assert placement.replica_scheduling_type() == want


@pytest.mark.parametrize(
    ("api_version", "kind", "plural", "namespaced", "short_names", "has_status"),
    [
        ("cluster.karmada.io/v1alpha1", "Cluster", "clusters", False, (), True),
        (
            "policy.karmada.io/v1alpha1",
            "PropagationPolicy",
            "propagationpolicies",
            True,
            ("pp",),
            False,
        ),
        (
            "policy.karmada.io/v1alpha1",
            "ClusterPropagationPolicy",
            "clusterpropagationpolicies",
            False,
            ("cpp",),
            False,
        ),
        (
            "policy.karmada.io/v1alpha1",
            "ClusterTaintPolicy",
            "clustertaintpolicies",
            False,
            (),
            False,
        ),
        ("work.karmada.io/v1alpha2", "ResourceBinding", "resourcebindings", True, ("rb",), True),
        (
            "work.karmada.io/v1alpha2",
            "ClusterResourceBinding",
            "clusterresourcebindings",
            False,
            ("crb",),
            True,
        ),
        ("work.karmada.io/v1alpha1", "Work", "works", True, ("wk",), True),
    ],
)
def test_kinds_are_registered(api_version, kind, plural, namespaced, short_names, has_status):
    info = REGISTRY.get(api_version, kind)
    assert info is not None
    assert (info.plural, info.namespaced, info.short_names, info.has_status) == (
        plural,
        namespaced,
        short_names,
        has_status,
    )
    assert info.categories == (() if kind in ("Cluster", "ClusterTaintPolicy") else ("karmada-io",))
    assert REGISTRY.by_plural(info.group, info.version, plural) is info
