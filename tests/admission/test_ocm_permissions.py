"""The rights OCM's registration webhooks check with a SubjectAccessReview: `bind` to create a
ManagedClusterSetBinding, `join` on the old and the new set when a ManagedCluster changes set,
and `accept` when hubAcceptsClient turns true.

Cases from ocm pkg/registration/webhook/v1/managedcluster_validating_test.go and
v1beta2/managedclustersetbinding_validating_test.go; messages as /work/research/ocm-auth.md §1
words them. The authorizer is the real RBAC authorizer fed with roles and bindings.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetwarden.admission import AdmissionConfig, default_chain
from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.errors import WebhookDenied
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Resource
from fleetwarden.auth.rbac import RBAC

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
GROUP = "cluster.open-cluster-management.io"
REGISTER_GROUP = "register.open-cluster-management.io"
SET_LABEL = "cluster.open-cluster-management.io/clusterset"
RBAC_GROUP = "rbac.authorization.k8s.io"
BOB = UserInfo.of("bob", ["system:authenticated"])
ROOT = UserInfo.of("root", ["system:masters"])
BINDING_WEBHOOK = "managedclustersetbindingvalidators.admission.cluster.open-cluster-management.io"
CLUSTER_WEBHOOK = "managedclustervalidators.admission.cluster.open-cluster-management.io"


def rights(*rules: dict[str, Any]) -> RBAC:
    """An authorizer under which bob holds these rules cluster-wide."""
    rbac = RBAC()
    rbac.observe(
        f"{RBAC_GROUP}/clusterroles",
        {"metadata": {"name": "bob", "resourceVersion": "1"}, "rules": list(rules)},
    )
    rbac.observe(
        f"{RBAC_GROUP}/clusterrolebindings",
        {
            "metadata": {"name": "bob", "resourceVersion": "2"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "bob"},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "User", "name": "bob"}],
        },
    )
    return rbac


def bind(*sets: str) -> dict[str, Any]:
    return {
        "apiGroups": [GROUP],
        "resources": ["managedclustersets/bind"],
        "resourceNames": list(sets),
        "verbs": ["create"],
    }


def join(*sets: str) -> dict[str, Any]:
    return {
        "apiGroups": [GROUP],
        "resources": ["managedclustersets/join"],
        "resourceNames": list(sets),
        "verbs": ["create"],
    }


ACCEPT = {
    "apiGroups": [REGISTER_GROUP],
    "resources": ["managedclusters/accept"],
    "verbs": ["update"],
}


def binding(
    cluster_set: str = "s1", namespace: str = "ns1", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": cluster_set, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    return {
        "apiVersion": f"{GROUP}/v1beta2",
        "kind": "ManagedClusterSetBinding",
        "metadata": metadata,
        "spec": {"clusterSet": cluster_set},
    }


def cluster(
    cluster_set: str | None = "s1", accepted: bool = False, name: str = "c1"
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if cluster_set is not None:
        metadata["labels"] = {SET_LABEL: cluster_set}
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ManagedCluster",
        "metadata": metadata,
        "spec": {"hubAcceptsClient": accepted},
    }


def admit(
    obj: dict[str, Any],
    old: Resource | None = None,
    *,
    authorizer: RBAC | None = None,
    user: UserInfo = BOB,
    config: AdmissionConfig | None = None,
    namespaces: dict[str, dict[str, Any]] | None = None,
) -> Resource:
    """Admitted as `user` under `authorizer`, on a hub with these Namespaces (by name)."""

    def lookup(info: KindInfo, name: str, namespace: str) -> dict[str, Any] | None:
        assert (info.kind, namespace) == ("Namespace", "")
        return (namespaces or {}).get(name)

    admitted: Resource = (
        default_chain()
        .review(
            obj, old, now=NOW, config=config, user=user, authorizer=authorizer or rights(),
            lookup=lookup,
        )
        .obj
    )  # fmt: skip
    return admitted


def stored(obj: dict[str, Any], config: AdmissionConfig | None = None) -> Resource:
    return admit(obj, user=ROOT, config=config)


def denied(
    obj: dict[str, Any],
    old: Resource | None = None,
    *,
    authorizer: RBAC | None = None,
    config: AdmissionConfig | None = None,
    namespaces: dict[str, dict[str, Any]] | None = None,
) -> WebhookDenied:
    with pytest.raises(WebhookDenied) as err:
        admit(obj, old, authorizer=authorizer, config=config, namespaces=namespaces)
    assert err.value.code == 403
    assert err.value.reason == "Forbidden"
    return err.value


def join_refusal(cluster_set: str) -> str:
    return (
        f'admission webhook "{CLUSTER_WEBHOOK}" denied the request: '
        f'managedclustersets/join.cluster.open-cluster-management.io "{cluster_set}" is forbidden: '
        f'user "bob" cannot add/remove a ManagedCluster to/from ManagedClusterSet "{cluster_set}"'
    )


# --- ManagedClusterSetBinding: bind --------------------------------------------------------------


def test_binding_without_bind_is_denied() -> None:
    err = denied(binding("s1"))
    assert err.message == (
        f'admission webhook "{BINDING_WEBHOOK}" denied the request: '
        'managedclustersets/bind.apps "s1" is forbidden: user "bob" is not allowed to bind '
        'cluster set "s1"'
    )
    assert err.status()["details"] == {
        "name": "s1",
        "group": "apps",
        "kind": "managedclustersets/bind",
    }


def test_binding_with_bind_on_the_set() -> None:
    admit(binding("s1"), authorizer=rights(bind("s1")))


def test_bind_on_another_set_does_not_count() -> None:
    denied(binding("s1"), authorizer=rights(bind("s2")))


def test_bind_in_the_wrong_group_does_not_count() -> None:
    wrong = {**bind("s1"), "apiGroups": [REGISTER_GROUP]}
    denied(binding("s1"), authorizer=rights(wrong))


def test_bind_is_checked_cluster_wide_not_in_the_bindings_namespace() -> None:
    rbac = RBAC()
    rbac.observe(
        f"{RBAC_GROUP}/clusterroles",
        {"metadata": {"name": "binder", "resourceVersion": "1"}, "rules": [bind("s1")]},
    )
    rbac.observe(
        f"{RBAC_GROUP}/rolebindings",
        {
            "metadata": {"name": "binder", "namespace": "ns1", "resourceVersion": "2"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "binder"},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "User", "name": "bob"}],
        },
    )
    denied(binding("s1", namespace="ns1"), authorizer=rbac)


def test_system_masters_may_bind() -> None:
    stored(binding("s1"))


def test_binding_update_needs_no_bind() -> None:
    old = stored(binding("s1"))
    admitted = admit(binding("s1", labels={"team": "a"}), old)
    assert admitted.metadata.labels == {"team": "a"}


# --- ManagedCluster: join ------------------------------------------------------------------------


def test_create_in_a_set_needs_join_on_it() -> None:
    assert denied(cluster("s1")).message == join_refusal("s1")
    admit(cluster("s1"), authorizer=rights(join("s1")))


def test_create_without_a_set_lands_in_default_and_needs_join_on_it() -> None:
    assert denied(cluster(None)).message == join_refusal("default")
    admitted = admit(cluster(None), authorizer=rights(join("default")))
    assert admitted.metadata.labels == {SET_LABEL: "default"}


def test_an_empty_set_label_is_the_default_set() -> None:
    assert denied(cluster("")).message == join_refusal("default")


def test_without_the_default_set_gate_an_unlabelled_cluster_needs_no_join() -> None:
    config = AdmissionConfig(default_cluster_set=False)
    admitted = admit(cluster(None), config=config)
    assert not (admitted.metadata.labels or {}).get(SET_LABEL)


def test_moving_needs_join_on_both_sets() -> None:
    old = stored(cluster("clusterset1"))
    admit(cluster("clusterset2"), old, authorizer=rights(join("clusterset1", "clusterset2")))


def test_moving_checks_the_old_set_first() -> None:
    old = stored(cluster("clusterset1"))
    assert denied(cluster("clusterset2"), old).message == join_refusal("clusterset1")
    err = denied(cluster("clusterset2"), old, authorizer=rights(join("clusterset1")))
    assert err.message == join_refusal("clusterset2")
    err = denied(cluster("clusterset2"), old, authorizer=rights(join("clusterset2")))
    assert err.message == join_refusal("clusterset1")


def test_keeping_the_set_needs_no_join() -> None:
    old = stored(cluster("clusterset1"))
    changed = cluster("clusterset1")
    changed["metadata"]["labels"]["team"] = "a"
    admit(changed, old)


def test_removing_the_default_label_needs_no_join() -> None:
    old = stored(cluster(None))
    admitted = admit(cluster(None), old)
    assert admitted.metadata.labels == {SET_LABEL: "default"}


def test_removing_a_set_label_moves_to_default() -> None:
    old = stored(cluster("clusterset1"))
    assert denied(
        cluster(None), old, authorizer=rights(join("clusterset1"))
    ).message == join_refusal("default")
    admit(cluster(None), old, authorizer=rights(join("clusterset1", "default")))


def test_removing_a_set_label_without_the_gate_needs_join_on_the_old_set_only() -> None:
    config = AdmissionConfig(default_cluster_set=False)
    old = stored(cluster("clusterset1"), config)
    assert denied(cluster(None), old, config=config).message == join_refusal("clusterset1")
    admit(cluster(None), old, authorizer=rights(join("clusterset1")), config=config)


def test_join_on_every_set() -> None:
    every = {"apiGroups": [GROUP], "resources": ["managedclustersets/join"], "verbs": ["create"]}
    old = stored(cluster("a"))
    admit(cluster("b"), old, authorizer=rights(every))


# --- ManagedCluster: accept ----------------------------------------------------------------------


def accept_refusal(name: str = "c1") -> str:
    return (
        f'admission webhook "{CLUSTER_WEBHOOK}" denied the request: '
        f'managedclusters/accept.cluster.open-cluster-management.io "{name}" is forbidden: '
        'user "bob" cannot update the HubAcceptsClient field'
    )


def test_creating_an_accepted_cluster_needs_accept() -> None:
    assert (
        denied(cluster("s1", accepted=True), authorizer=rights(join("s1"))).message
        == accept_refusal()
    )
    admit(cluster("s1", accepted=True), authorizer=rights(join("s1"), ACCEPT))


def test_accept_is_checked_before_join() -> None:
    assert denied(cluster("s1", accepted=True)).message == accept_refusal()


def test_accepting_needs_accept() -> None:
    old = stored(cluster("s1"))
    err = denied(cluster("s1", accepted=True), old)
    assert err.message == accept_refusal()
    assert err.status()["details"] == {
        "name": "c1",
        "group": GROUP,
        "kind": "managedclusters/accept",
    }
    admit(cluster("s1", accepted=True), old, authorizer=rights(ACCEPT))


def namespace(name: str = "c1", **status_or_metadata: Any) -> dict[str, Any]:
    deleted = status_or_metadata.get("deletionTimestamp")
    metadata = {"name": name, **({"deletionTimestamp": deleted} if deleted else {})}
    phase = status_or_metadata.get("phase", "Active")
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": metadata,
        "status": {"phase": phase},
    }


def terminating_refusal(name: str = "c1") -> str:
    return (
        f'admission webhook "{CLUSTER_WEBHOOK}" denied the request: '
        f'managedclusters/accept.cluster.open-cluster-management.io "{name}" is forbidden: '
        f'cluster namespace "{name}" is terminating'
    )


@pytest.mark.parametrize(
    "being_deleted",
    [namespace(phase="Terminating"), namespace(deletionTimestamp="2024-05-01T11:00:00Z")],
)
def test_accepting_while_the_cluster_namespace_terminates_is_refused(
    being_deleted: dict[str, Any],
) -> None:
    """validateAcceptByClusterNamespace, on create and on update, whoever asks (it comes
    before the accept review)."""
    everything = rights(join("s1"), ACCEPT)
    namespaces = {"c1": being_deleted}
    refused = denied(cluster("s1", accepted=True), authorizer=everything, namespaces=namespaces)
    assert refused.message == terminating_refusal()
    assert refused.status()["details"]["kind"] == "managedclusters/accept"
    old = stored(cluster("s1"))
    refused = denied(
        cluster("s1", accepted=True), old, authorizer=everything, namespaces=namespaces
    )
    assert refused.message == terminating_refusal()
    # Not accepting, nothing to check; an accepted cluster stays accepted.
    admit(cluster("s1"), old, namespaces=namespaces)
    accepted = stored(cluster("s1", accepted=True))
    admit(cluster("s1", accepted=True), accepted, namespaces=namespaces)


def test_accepting_with_an_active_or_missing_cluster_namespace() -> None:
    everything = rights(join("s1"), ACCEPT)
    admit(cluster("s1", accepted=True), authorizer=everything, namespaces={"c1": namespace()})
    other = {"c2": namespace("c2", phase="Terminating")}
    admit(cluster("s1", accepted=True), authorizer=everything, namespaces=other)


def test_accept_in_the_cluster_group_does_not_count() -> None:
    # the review asks about register.open-cluster-management.io
    old = stored(cluster("s1"))
    wrong = {**ACCEPT, "apiGroups": [GROUP]}
    denied(cluster("s1", accepted=True), old, authorizer=rights(wrong))


def test_accept_named_for_the_cluster() -> None:
    old = stored(cluster("s1"))
    named = {**ACCEPT, "resourceNames": ["c1"]}
    admit(cluster("s1", accepted=True), old, authorizer=rights(named))
    other = stored(cluster("s1", name="c2"))
    denied(cluster("s1", accepted=True, name="c2"), other, authorizer=rights(named))


def test_an_accepted_cluster_stays_accepted_without_accept() -> None:
    old = stored(cluster("s1", accepted=True))
    changed = cluster("s1", accepted=True)
    changed["metadata"]["labels"]["team"] = "a"
    admit(changed, old)


def test_unaccepting_needs_no_accept() -> None:
    old = stored(cluster("s1", accepted=True))
    admitted = admit(cluster("s1", accepted=False), old)
    assert admitted.to_dict()["spec"]["hubAcceptsClient"] is False


def test_system_masters_may_accept_and_join() -> None:
    stored(cluster("anything", accepted=True))
