"""What the registration agent exposes of its member's ClusterClaims in the ManagedCluster's
status.clusterClaims (claim_reconcile.go exposeClaims; cases as claim_reconcile_test.go)."""

from fleetwarden.members.simulated import MAX_CUSTOM_CLUSTER_CLAIMS, exposed_claims


def names(claims: dict[str, str]) -> list[str | None]:
    return [claim.name for claim in exposed_claims(claims) or []]


def test_reserved_claims_come_first_then_the_others_each_sorted_by_name() -> None:
    claims = {
        "region.open-cluster-management.io": "us-west-1",
        "product.open-cluster-management.io": "OpenShift",
        "a.example.com": "a",
        "id.k8s.io": "cluster1",
    }
    assert names(claims) == [
        "id.k8s.io",
        "product.open-cluster-management.io",
        "a.example.com",
        "region.open-cluster-management.io",
    ]
    exposed = exposed_claims(claims)
    assert exposed is not None and (exposed[0].name, exposed[0].value) == ("id.k8s.io", "cluster1")


def test_custom_claims_beyond_the_maximum_are_not_exposed_reserved_ones_always_are() -> None:
    claims = {f"claim-{i:02}.example.com": str(i) for i in range(MAX_CUSTOM_CLUSTER_CLAIMS + 2)}
    claims["kubeversion.open-cluster-management.io"] = "v1.31.0"
    exposed = names(claims)
    assert len(exposed) == MAX_CUSTOM_CLUSTER_CLAIMS + 1
    assert exposed[0] == "kubeversion.open-cluster-management.io"
    assert exposed[-1] == f"claim-{MAX_CUSTOM_CLUSTER_CLAIMS - 1:02}.example.com"


def test_no_claims_leave_the_field_out() -> None:
    assert exposed_claims({}) is None
