"""The RBAC authorizer: which bindings apply to whom and where, the reasons it gives, and
its index kept current from the objects it observes.

Cases from kubernetes plugin/pkg/auth/authorizer/rbac/rbac_test.go (TestAuthorizer) and
pkg/registry/rbac/validation/rule_test.go (TestDefaultRuleResolver, TestAppliesTo); the
reasons as /work/research/k8s-auth.md §1.4 words them.
"""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.authorization import Attributes, Decision
from fleetwarden.api.rbac import PolicyRule
from fleetwarden.auth.rbac import RBAC

RBAC_GROUP = "rbac.authorization.k8s.io"
ADMIN_RULE = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
READ_PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "watch"]}
READ_SERVICES = {"apiGroups": [""], "resources": ["services"], "verbs": ["get", "watch"]}


def meta(name: str, namespace: str = "", version: int = 1) -> dict[str, Any]:
    data: dict[str, Any] = {"name": name, "resourceVersion": str(version)}
    if namespace:
        data["namespace"] = namespace
    return data


def subject(text: str, namespace: str = "") -> dict[str, Any]:
    """`User:bob`, `Group:dev`, `ServiceAccount:builder` as a binding's subject."""
    kind, name = text.split(":", 1)
    found: dict[str, Any] = {"kind": kind, "name": name}
    if kind != "ServiceAccount":
        found["apiGroup"] = RBAC_GROUP
    if namespace:
        found["namespace"] = namespace
    return found


class Policy:
    """An authorizer and the objects it is fed, each write with a newer resourceVersion."""

    def __init__(self) -> None:
        self.rbac = RBAC()
        self.version = 0

    def _observe(self, plural: str, obj: dict[str, Any], deleted: bool = False) -> None:
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)
        self.rbac.observe(f"{RBAC_GROUP}/{plural}", obj, deleted)

    def cluster_role(self, name: str, *rules: dict[str, Any]) -> None:
        self._observe("clusterroles", {"metadata": meta(name), "rules": list(rules)})

    def role(self, namespace: str, name: str, *rules: dict[str, Any]) -> None:
        self._observe("roles", {"metadata": meta(name, namespace), "rules": list(rules)})

    def cluster_binding(self, name: str, role: str, *subjects: dict[str, Any]) -> None:
        ref = {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role}
        obj = {"metadata": meta(name), "roleRef": ref, "subjects": list(subjects)}
        self._observe("clusterrolebindings", obj)

    def binding(
        self, namespace: str, name: str, kind: str, role: str, *subjects: dict[str, Any]
    ) -> None:
        ref = {"apiGroup": RBAC_GROUP, "kind": kind, "name": role}
        obj = {"metadata": meta(name, namespace), "roleRef": ref, "subjects": list(subjects)}
        self._observe("rolebindings", obj)

    def delete_binding(self, namespace: str, name: str) -> None:
        self._observe("rolebindings", {"metadata": meta(name, namespace)}, deleted=True)

    def authorize(self, attributes: Attributes) -> Decision:
        return self.rbac.authorize(attributes)


def user(name: str, *groups: str) -> UserInfo:
    return UserInfo.of(name, groups)


def can(
    policy: Policy,
    who: UserInfo,
    verb: str,
    resource: str,
    namespace: str = "",
    *,
    group: str = "",
    subresource: str = "",
    name: str = "",
) -> bool:
    attributes = Attributes(who, verb, resource, group, namespace, name, subresource)
    return policy.authorize(attributes).allowed


def can_get_path(policy: Policy, who: UserInfo, path: str, verb: str = "get") -> bool:
    attributes = Attributes(who, verb, path=path, resource_request=False)
    return policy.authorize(attributes).allowed


# --- which bindings apply, and where --------------------------------------------------------


def test_role_binding_to_a_cluster_role_grants_only_in_its_namespace() -> None:
    policy = Policy()
    policy.cluster_role("admin", ADMIN_RULE)
    policy.binding(
        "ns1", "admin", "ClusterRole", "admin", subject("User:admin"), subject("Group:admins")
    )
    assert can(policy, user("admin"), "get", "pods", "ns1")
    assert can(policy, user("admin"), "watch", "pods", "ns1")
    assert can(policy, user("admin", "group1"), "watch", "foobar", "ns1")
    assert can(policy, user("joe", "admins"), "watch", "foobar", "ns1")
    assert can(policy, user("joe", "group1", "admins"), "watch", "foobar", "ns1")
    assert not can(policy, user("admin"), "get", "pods", "ns2")
    assert not can(policy, user("admin"), "get", "nodes")
    assert not can(policy, user("admin", "admins"), "get", "pods", "ns2")
    assert not can(policy, user("admin", "admins"), "get", "nodes")


def test_cluster_role_binding_grants_everywhere() -> None:
    policy = Policy()
    policy.cluster_role("reader", READ_PODS)
    policy.cluster_binding("readers", "reader", subject("Group:readers"))
    reader = user("carol", "readers")
    assert can(policy, reader, "get", "pods", "ns1")
    assert can(policy, reader, "get", "pods", "ns2")
    assert can(policy, reader, "get", "pods")
    assert not can(policy, reader, "delete", "pods", "ns1")


def test_role_binding_to_a_role_uses_the_role_of_its_own_namespace() -> None:
    policy = Policy()
    policy.role("ns1", "reader", READ_PODS)
    policy.binding("ns1", "read", "Role", "reader", subject("User:bob"))
    policy.binding("ns2", "read", "Role", "reader", subject("User:bob"))
    assert can(policy, user("bob"), "get", "pods", "ns1")
    # ns2 has no Role "reader": its binding grants nothing
    assert not can(policy, user("bob"), "get", "pods", "ns2")


def test_non_resource_urls() -> None:
    policy = Policy()
    policy.cluster_role("getter", {"nonResourceURLs": ["/apis"], "verbs": ["get"]})
    policy.cluster_role("any", {"nonResourceURLs": ["/apis"], "verbs": ["*"]})
    policy.cluster_role("prefix", {"nonResourceURLs": ["/apis/*"], "verbs": ["get"]})
    policy.cluster_binding("getter", "getter", subject("User:foo"), subject("Group:bar"))
    policy.cluster_binding("any", "any", subject("User:admin"), subject("Group:admin"))
    policy.cluster_binding("prefix", "prefix", subject("User:prefixed"), subject("Group:prefixed"))

    assert can_get_path(policy, user("foo"), "/apis")
    assert can_get_path(policy, user("", "bar"), "/apis")
    assert can_get_path(policy, user("admin"), "/apis")
    assert can_get_path(policy, user("", "admin"), "/apis", "watch")
    assert can_get_path(policy, user("prefixed"), "/apis/v1")
    assert can_get_path(policy, user("", "prefixed"), "/apis/v1/foobar")
    # wrong verb
    assert not can_get_path(policy, user("foo"), "/apis", "watch")
    assert not can_get_path(policy, user("", "bar"), "/apis", "watch")
    # wrong path
    assert not can_get_path(policy, user("foo"), "/api/v1")
    assert not can_get_path(policy, user("admin"), "/api/v1")
    # not covered by the prefix
    assert not can_get_path(policy, user("prefixed"), "/api/v1")


def test_subresource_resolution() -> None:
    policy = Policy()
    policy.cluster_role("pods", {"apiGroups": ["*"], "resources": ["pods"], "verbs": ["*"]})
    policy.cluster_role(
        "status", {"apiGroups": ["*"], "resources": ["pods/status"], "verbs": ["*"]}
    )
    policy.binding("ns1", "pods", "ClusterRole", "pods", subject("User:pods"))
    policy.binding("ns1", "status", "ClusterRole", "status", subject("User:status"))
    assert can(policy, user("pods"), "get", "pods", "ns1")
    assert not can(policy, user("pods"), "get", "pods", "ns1", subresource="status")
    assert can(policy, user("status"), "get", "pods", "ns1", subresource="status")
    assert not can(policy, user("status"), "get", "pods", "ns1")


def test_wildcard_subresource_and_resource_names() -> None:
    policy = Policy()
    policy.cluster_role(
        "scaler",
        {"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["update"]},
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["settings"],
            "verbs": ["get"],
        },
    )
    policy.binding("dev", "scaler", "ClusterRole", "scaler", subject("User:bob"))
    bob = user("bob")
    assert can(policy, bob, "update", "deployments", "dev", group="apps", subresource="scale")
    assert can(policy, bob, "update", "statefulsets", "dev", group="apps", subresource="scale")
    assert not can(policy, bob, "update", "deployments", "dev", group="apps")
    assert can(policy, bob, "get", "configmaps", "dev", name="settings")
    assert not can(policy, bob, "get", "configmaps", "dev", name="other")
    assert not can(policy, bob, "list", "configmaps", "dev")


def test_a_user_subject_named_star_is_no_wildcard() -> None:
    policy = Policy()
    policy.cluster_role("reader", READ_PODS)
    policy.cluster_binding("everyone", "reader", subject("User:*"))
    assert not can(policy, user("foobar"), "get", "pods", "default")


def test_authenticated_and_unauthenticated_groups_match_by_group() -> None:
    policy = Policy()
    policy.cluster_role("reader", READ_PODS)
    policy.cluster_binding(
        "all",
        "reader",
        subject("Group:system:authenticated"),
        subject("Group:system:unauthenticated"),
    )
    assert can(policy, user("foobar", "system:authenticated"), "get", "pods", "default")
    assert can(policy, user("system:anonymous", "system:unauthenticated"), "get", "pods", "default")
    assert not can(policy, user("foobar"), "get", "pods", "default")


# --- service accounts -----------------------------------------------------------------------

SA_BUILDER = "system:serviceaccount:dev:builder"


def test_service_account_subject_defaults_to_the_bindings_namespace() -> None:
    policy = Policy()
    policy.role("dev", "r", READ_PODS)
    policy.binding("dev", "rb", "Role", "r", subject("ServiceAccount:builder"))
    decision = policy.authorize(Attributes(user(SA_BUILDER), "get", "pods", namespace="dev"))
    assert decision == Decision(
        True, 'RBAC: allowed by RoleBinding "rb/dev" of Role "r" to ServiceAccount "builder/dev"'
    )
    # the same account name in another namespace is another account
    assert not can(policy, user("system:serviceaccount:prod:builder"), "get", "pods", "dev")


def test_service_account_subject_names_its_own_namespace() -> None:
    policy = Policy()
    policy.cluster_role("reader", READ_PODS)
    policy.cluster_binding("sa", "reader", subject("ServiceAccount:default", "kube-system"))
    assert can(policy, user("system:serviceaccount:kube-system:default"), "get", "pods", "default")
    assert not can(policy, user("system:serviceaccount:default:default"), "get", "pods", "default")


def test_cluster_role_binding_service_account_without_namespace_matches_nobody() -> None:
    policy = Policy()
    policy.cluster_role("reader", READ_PODS)
    policy.cluster_binding("sa", "reader", subject("ServiceAccount:builder"))
    assert not can(policy, user("system:serviceaccount::builder"), "get", "pods", "dev")
    assert not can(policy, user(SA_BUILDER), "get", "pods", "dev")


def test_service_accounts_match_their_groups() -> None:
    policy = Policy()
    policy.cluster_role("reader", READ_PODS)
    policy.binding(
        "dev", "sas", "ClusterRole", "reader", subject("Group:system:serviceaccounts:dev")
    )
    account = user(SA_BUILDER, "system:serviceaccounts", "system:serviceaccounts:dev")
    decision = policy.authorize(Attributes(account, "get", "pods", namespace="dev"))
    assert decision.reason == (
        'RBAC: allowed by RoleBinding "sas/dev" of ClusterRole "reader" to Group '
        '"system:serviceaccounts:dev"'
    )


# --- decisions and their reasons ------------------------------------------------------------


def test_allow_reason_names_cluster_role_binding_and_group() -> None:
    policy = Policy()
    policy.cluster_role("view", READ_PODS)
    policy.cluster_binding("viewers", "view", subject("Group:dev"))
    decision = policy.authorize(Attributes(user("bob", "dev"), "get", "pods", namespace="x"))
    assert decision == Decision(
        True, 'RBAC: allowed by ClusterRoleBinding "viewers" of ClusterRole "view" to Group "dev"'
    )


def test_allow_reason_names_role_binding_with_its_namespace() -> None:
    policy = Policy()
    policy.cluster_role("edit", READ_PODS)
    policy.binding("dev", "edit-bob", "ClusterRole", "edit", subject("User:bob"))
    decision = policy.authorize(Attributes(user("bob"), "get", "pods", namespace="dev"))
    assert decision.reason == (
        'RBAC: allowed by RoleBinding "edit-bob/dev" of ClusterRole "edit" to User "bob"'
    )


def test_allow_reason_names_the_first_subject_that_applies() -> None:
    policy = Policy()
    policy.cluster_role("view", READ_PODS)
    policy.cluster_binding(
        "v", "view", subject("User:alice"), subject("Group:dev"), subject("User:bob")
    )
    decision = policy.authorize(Attributes(user("bob", "dev"), "get", "pods"))
    assert (
        decision.reason
        == 'RBAC: allowed by ClusterRoleBinding "v" of ClusterRole "view" to Group "dev"'
    )


def test_cluster_role_bindings_are_walked_before_role_bindings() -> None:
    policy = Policy()
    policy.cluster_role("view", READ_PODS)
    policy.binding("dev", "a-local", "ClusterRole", "view", subject("User:bob"))
    policy.cluster_binding("z-cluster", "view", subject("User:bob"))
    decision = policy.authorize(Attributes(user("bob"), "get", "pods", namespace="dev"))
    assert decision.reason == (
        'RBAC: allowed by ClusterRoleBinding "z-cluster" of ClusterRole "view" to User "bob"'
    )


def test_system_masters_is_allowed_without_a_reason() -> None:
    policy = Policy()
    decision = policy.authorize(Attributes(user("root", "system:masters"), "delete", "nodes"))
    assert decision == Decision(True, "")


def test_no_matching_rule_is_no_opinion_without_a_reason() -> None:
    policy = Policy()
    policy.cluster_role("view", READ_PODS)
    policy.cluster_binding("view", "view", subject("User:bob"))
    assert policy.authorize(Attributes(user("bob"), "delete", "pods", namespace="dev")) == Decision(
        False, ""
    )


def test_a_missing_cluster_role_is_the_deny_reason() -> None:
    policy = Policy()
    policy.cluster_binding("ghost", "foo", subject("User:bob"))
    decision = policy.authorize(Attributes(user("bob"), "list", "pods", namespace="default"))
    assert decision == Decision(
        False, 'RBAC: clusterrole.rbac.authorization.k8s.io "foo" not found'
    )


def test_several_missing_roles_are_aggregated() -> None:
    policy = Policy()
    policy.cluster_binding("ghost", "foo", subject("User:bob"))
    policy.binding("dev", "ghost", "Role", "bar", subject("User:bob"))
    decision = policy.authorize(Attributes(user("bob"), "list", "pods", namespace="dev"))
    assert decision.reason == (
        'RBAC: [clusterrole.rbac.authorization.k8s.io "foo" not found, '
        'role.rbac.authorization.k8s.io "bar" not found]'
    )


def test_a_missing_role_does_not_stop_another_binding_allowing() -> None:
    policy = Policy()
    policy.cluster_role("view", READ_PODS)
    policy.cluster_binding("a-ghost", "foo", subject("User:bob"))
    policy.cluster_binding("b-view", "view", subject("User:bob"))
    decision = policy.authorize(Attributes(user("bob"), "get", "pods", namespace="dev"))
    assert decision == Decision(
        True, 'RBAC: allowed by ClusterRoleBinding "b-view" of ClusterRole "view" to User "bob"'
    )


def test_an_unsupported_role_reference_kind_is_the_deny_reason() -> None:
    policy = Policy()
    policy.binding("dev", "odd", "Robot", "r2d2", subject("User:bob"))
    decision = policy.authorize(Attributes(user("bob"), "get", "pods", namespace="dev"))
    assert decision == Decision(False, 'RBAC: unsupported role reference kind: "Robot"')


# --- the index kept current -----------------------------------------------------------------


def test_decisions_follow_new_and_deleted_bindings() -> None:
    policy = Policy()
    policy.cluster_role("view", READ_PODS)
    bob = user("bob")
    assert not can(policy, bob, "get", "pods", "dev")
    policy.binding("dev", "view-bob", "ClusterRole", "view", subject("User:bob"))
    assert can(policy, bob, "get", "pods", "dev")
    policy.delete_binding("dev", "view-bob")
    assert not can(policy, bob, "get", "pods", "dev")


def test_decisions_follow_changed_rules_and_subjects() -> None:
    policy = Policy()
    policy.cluster_role("view", READ_PODS)
    policy.binding("dev", "view", "ClusterRole", "view", subject("User:bob"))
    assert can(policy, user("bob"), "get", "pods", "dev")
    assert not can(policy, user("bob"), "get", "services", "dev")

    policy.cluster_role("view", READ_SERVICES)
    assert not can(policy, user("bob"), "get", "pods", "dev")
    assert can(policy, user("bob"), "get", "services", "dev")

    policy.binding("dev", "view", "ClusterRole", "view", subject("User:carol"))
    assert not can(policy, user("bob"), "get", "services", "dev")
    assert can(policy, user("carol"), "get", "services", "dev")


def test_a_role_created_after_its_binding_takes_effect() -> None:
    policy = Policy()
    policy.binding("dev", "late", "Role", "late", subject("User:bob"))
    assert not can(policy, user("bob"), "get", "pods", "dev")
    policy.role("dev", "late", READ_PODS)
    assert can(policy, user("bob"), "get", "pods", "dev")


def test_long_made_up_names_are_decided_but_not_cached() -> None:
    policy = Policy()
    policy.cluster_role("reader", READ_PODS)
    policy.cluster_binding("reader", "reader", subject("User:bob"))
    long = Attributes(user("bob"), "get", "pods", namespace="dev", name="x" * 10_000)
    short = Attributes(user("bob"), "get", "pods", namespace="dev", name="web")
    assert policy.rbac.authorize(long).allowed and policy.rbac.authorize(short).allowed
    assert list(policy.rbac._cache) == [short]  # the made-up name holds no memory


def test_other_collections_are_ignored() -> None:
    authorizer = RBAC()
    authorizer.observe("/configmaps", {"metadata": meta("view"), "rules": [ADMIN_RULE]})
    assert authorizer.role_rules("ClusterRole", "view", "") is None


# --- RulesFor and the rules of a role ---------------------------------------------------------


@pytest.fixture
def static_roles() -> Policy:
    policy = Policy()
    policy.role("namespace1", "readthings", READ_PODS, READ_SERVICES)
    policy.cluster_role("cluster-admin", ADMIN_RULE)
    policy.cluster_role(
        "write-nodes", {"apiGroups": ["v1"], "resources": ["nodes"], "verbs": ["create"]}
    )
    policy.binding(
        "namespace1", "read", "Role", "readthings", subject("User:foobar"), subject("Group:group1")
    )
    policy.cluster_binding("admins", "cluster-admin", subject("User:admin"), subject("Group:admin"))
    return policy


@pytest.mark.parametrize(
    ("who", "namespace", "expected"),
    [
        (user("foobar"), "namespace1", [READ_PODS, READ_SERVICES]),
        (user("foobar"), "namespace2", []),
        # without a namespace only cluster rules apply
        (user("foobar", "admin"), "", [ADMIN_RULE]),
        (user(""), "", []),
    ],
)
def test_rules_for(
    static_roles: Policy, who: UserInfo, namespace: str, expected: list[dict[str, Any]]
) -> None:
    rules, errors = static_roles.rbac.rules_for(who, namespace)
    assert rules == [PolicyRule.model_validate(r) for r in expected]
    assert errors == []


def test_role_rules() -> None:
    policy = Policy()
    policy.role("dev", "reader", READ_PODS)
    policy.cluster_role("view", READ_SERVICES)
    assert policy.rbac.role_rules("Role", "reader", "dev") == [PolicyRule.model_validate(READ_PODS)]
    assert policy.rbac.role_rules("Role", "reader", "prod") is None
    assert policy.rbac.role_rules("ClusterRole", "view", "dev") == [
        PolicyRule.model_validate(READ_SERVICES)
    ]
    assert policy.rbac.role_rules("ClusterRole", "missing", "") is None
