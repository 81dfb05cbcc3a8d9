"""The additionalPrinterColumns of the custom resources fleetwarden serves, as upstream's
CRD YAMLs declare them (each entry names its file); a CRD that declares none gets the API
server's default, Age.

Generated from karmada-io/karmada@f8fdd02df376 and
open-cluster-management-io/api@1845fd8032e4.
"""

from __future__ import annotations

from fleetwarden.api.kinds import PrinterColumn

# apiextensions-apiserver's serveDefaultColumnsIfEmpty.
DEFAULT_COLUMNS = (
    PrinterColumn(
        "Age",
        "date",
        ".metadata.creationTimestamp",
        description=(
            "CreationTimestamp is a timestamp representing the server time when this object was "
            "created. It is not guaranteed to be set in happens-before order across separate "
            "operations. Clients may not set this value. It is represented in RFC3339 form and "
            "is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
            "https://git.k8s.io/community/contributors/devel/sig-architecture/"
            "api-conventions.md#metadata"
        ),
    ),
)

# (group, version, kind) -> columns.
PRINTER_COLUMNS: dict[tuple[str, str, str], tuple[PrinterColumn, ...]] = {
    # karmada-io/karmada:
    # charts/karmada/_crds/bases/policy/policy.karmada.io_propagationpolicies.yaml
    ("policy.karmada.io", "v1alpha1", "PropagationPolicy"): (
        PrinterColumn("CONFLICT-RESOLUTION", "string", ".spec.conflictResolution"),
        PrinterColumn("PRIORITY", "string", ".spec.priority"),
        PrinterColumn("AGE", "date", ".metadata.creationTimestamp"),
    ),
    # karmada-io/karmada:
    # charts/karmada/_crds/bases/policy/policy.karmada.io_clusterpropagationpolicies.yaml
    ("policy.karmada.io", "v1alpha1", "ClusterPropagationPolicy"): (
        PrinterColumn("CONFLICT-RESOLUTION", "string", ".spec.conflictResolution"),
        PrinterColumn("PRIORITY", "string", ".spec.priority"),
        PrinterColumn("AGE", "date", ".metadata.creationTimestamp"),
    ),
    # karmada-io/karmada:
    # charts/karmada/_crds/bases/policy/policy.karmada.io_clustertaintpolicies.yaml
    ("policy.karmada.io", "v1alpha1", "ClusterTaintPolicy"): DEFAULT_COLUMNS,
    # policy.karmada.io_overridepolicies.yaml, policy.karmada.io_clusteroverridepolicies.yaml
    ("policy.karmada.io", "v1alpha1", "OverridePolicy"): DEFAULT_COLUMNS,
    ("policy.karmada.io", "v1alpha1", "ClusterOverridePolicy"): DEFAULT_COLUMNS,
    # karmada-io/karmada:
    # charts/karmada/_crds/bases/work/work.karmada.io_resourcebindings.yaml
    ("work.karmada.io", "v1alpha2", "ResourceBinding"): (
        PrinterColumn("SCHEDULED", "string", '.status.conditions[?(@.type=="Scheduled")].status'),
        PrinterColumn(
            "FULLYAPPLIED", "string", '.status.conditions[?(@.type=="FullyApplied")].status'
        ),
        PrinterColumn("AGE", "date", ".metadata.creationTimestamp"),
    ),
    # karmada-io/karmada:
    # charts/karmada/_crds/bases/work/work.karmada.io_clusterresourcebindings.yaml
    ("work.karmada.io", "v1alpha2", "ClusterResourceBinding"): (
        PrinterColumn("SCHEDULED", "string", '.status.conditions[?(@.type=="Scheduled")].status'),
        PrinterColumn(
            "FULLYAPPLIED", "string", '.status.conditions[?(@.type=="FullyApplied")].status'
        ),
        PrinterColumn("AGE", "date", ".metadata.creationTimestamp"),
    ),
    # karmada-io/karmada:
    # charts/karmada/_crds/bases/work/work.karmada.io_works.yaml
    ("work.karmada.io", "v1alpha1", "Work"): (
        PrinterColumn("WORKLOAD-KIND", "string", ".spec.workload.manifests[*].kind"),
        PrinterColumn("APPLIED", "string", '.status.conditions[?(@.type=="Applied")].status'),
        PrinterColumn("AGE", "date", ".metadata.creationTimestamp"),
    ),
    # open-cluster-management-io/api:
    # cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml
    ("cluster.open-cluster-management.io", "v1", "ManagedCluster"): (
        PrinterColumn("Hub Accepted", "boolean", ".spec.hubAcceptsClient"),
        PrinterColumn("Managed Cluster URLs", "string", ".spec.managedClusterClientConfigs[*].url"),
        PrinterColumn(
            "Joined", "string", '.status.conditions[?(@.type=="ManagedClusterJoined")].status'
        ),
        PrinterColumn(
            "Available",
            "string",
            '.status.conditions[?(@.type=="ManagedClusterConditionAvailable")].status',
        ),
        PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
    ),
    # open-cluster-management-io/api:
    # cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml
    ("cluster.open-cluster-management.io", "v1beta2", "ManagedClusterSet"): (
        PrinterColumn("Empty", "string", '.status.conditions[?(@.type=="ClusterSetEmpty")].status'),
        PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
    ),
    # open-cluster-management-io/api:
    # cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml
    # (v1beta1 is no longer served: its v1beta2 columns)
    ("cluster.open-cluster-management.io", "v1beta1", "ManagedClusterSet"): (
        PrinterColumn("Empty", "string", '.status.conditions[?(@.type=="ClusterSetEmpty")].status'),
        PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
    ),
    # open-cluster-management-io/api:
    # cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml
    ("cluster.open-cluster-management.io", "v1beta2", "ManagedClusterSetBinding"): DEFAULT_COLUMNS,
    # open-cluster-management-io/api:
    # cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml
    # (v1beta1 is no longer served: its v1beta2 columns)
    ("cluster.open-cluster-management.io", "v1beta1", "ManagedClusterSetBinding"): DEFAULT_COLUMNS,
    # open-cluster-management-io/api:
    # cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml
    ("cluster.open-cluster-management.io", "v1beta1", "Placement"): (
        PrinterColumn(
            "Succeeded", "string", '.status.conditions[?(@.type=="PlacementSatisfied")].status'
        ),
        PrinterColumn(
            "Reason", "string", '.status.conditions[?(@.type=="PlacementSatisfied")].reason'
        ),
        PrinterColumn("SelectedClusters", "integer", ".status.numberOfSelectedClusters"),
    ),
    # open-cluster-management-io/api:
    # cluster/v1beta1/0000_03_clusters.open-cluster-management.io_placementdecisions.crd.yaml
    ("cluster.open-cluster-management.io", "v1beta1", "PlacementDecision"): DEFAULT_COLUMNS,
    # open-cluster-management-io/api:
    # cluster/v1alpha1/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml
    ("cluster.open-cluster-management.io", "v1alpha1", "ClusterClaim"): DEFAULT_COLUMNS,
    # open-cluster-management-io/api:
    # cluster/v1alpha1/0000_05_clusters.open-cluster-management.io_addonplacementscores.crd.yaml
    ("cluster.open-cluster-management.io", "v1alpha1", "AddOnPlacementScore"): DEFAULT_COLUMNS,
    # open-cluster-management-io/api:
    # addon/v1beta1/0000_01_addon.open-cluster-management.io_managedclusteraddons.crd.yaml
    ("addon.open-cluster-management.io", "v1alpha1", "ManagedClusterAddOn"): (
        PrinterColumn("Available", "string", '.status.conditions[?(@.type=="Available")].status'),
        PrinterColumn("Degraded", "string", '.status.conditions[?(@.type=="Degraded")].status'),
        PrinterColumn(
            "Progressing", "string", '.status.conditions[?(@.type=="Progressing")].status'
        ),
    ),
}
