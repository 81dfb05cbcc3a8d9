"""RBAC objects as kube-apiserver admits them: defaults, validation, and the escalation check
(nobody grants what they do not hold, unless they may `escalate` or `bind`).

Cases from kubernetes pkg/apis/rbac/validation/validation_test.go, pkg/registry/rbac/
escalation_check.go and the policybased storages; messages as /work/research/k8s-auth.md §5
words them. The authorizer is the real RBAC authorizer fed with Roles and bindings.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetwarden.admission import default_chain
from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.errors import Forbidden, Invalid, NotFound
from fleetwarden.api.meta import Resource
from fleetwarden.auth.rbac import RBAC

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
GROUP = "rbac.authorization.k8s.io"
API_VERSION = f"{GROUP}/v1"
BOB = UserInfo.of("bob", ["system:authenticated"])
ROOT = UserInfo.of("root", ["system:masters", "system:authenticated"])
PODS_GET = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}
PODS_ALL = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "delete"]}
FULL = [
    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
    {"nonResourceURLs": ["*"], "verbs": ["*"]},
]


# --- objects -----------------------------------------------------------------------------------


def role(
    name: str = "r", namespace: str = "dev", rules: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "Role",
        "metadata": {"name": name, "namespace": namespace},
        "rules": rules if rules is not None else [PODS_GET],
    }


def cluster_role(
    name: str = "cr", rules: list[dict[str, Any]] | None = None, **rest: Any
) -> dict[str, Any]:
    obj = {"apiVersion": API_VERSION, "kind": "ClusterRole", "metadata": {"name": name}, **rest}
    if rules is not None:
        obj["rules"] = rules
    return obj


def user_subject(name: str) -> dict[str, Any]:
    return {"kind": "User", "name": name, "apiGroup": GROUP}


def role_binding(
    role_name: str = "view",
    kind: str = "ClusterRole",
    name: str = "rb",
    namespace: str = "dev",
    subjects: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": {"apiGroup": GROUP, "kind": kind, "name": role_name},
        "subjects": subjects if subjects is not None else [user_subject("carol")],
    }


def cluster_role_binding(
    role_name: str = "view", name: str = "crb", subjects: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role_name},
        "subjects": subjects if subjects is not None else [user_subject("carol")],
    }


# --- an authorizer fed with a policy -------------------------------------------------------------


class Policy:
    def __init__(self) -> None:
        self.rbac = RBAC()
        self.version = 0

    def observe(self, obj: dict[str, Any]) -> None:
        plural = {
            "Role": "roles",
            "ClusterRole": "clusterroles",
            "RoleBinding": "rolebindings",
            "ClusterRoleBinding": "clusterrolebindings",
        }[obj["kind"]]
        self.version += 1
        stored = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.version)}}
        self.rbac.observe(f"{GROUP}/{plural}", stored)

    def grant(self, who: str, *rules: dict[str, Any], namespace: str = "") -> None:
        """Give `who` these rules in the namespace (cluster-wide without one)."""
        name = f"{who}-{self.version}"
        self.observe(cluster_role(name, list(rules)))
        if namespace:
            self.observe(
                role_binding(name, name=name, namespace=namespace, subjects=[user_subject(who)])
            )
        else:
            self.observe(cluster_role_binding(name, name=name, subjects=[user_subject(who)]))


def admit(
    obj: dict[str, Any],
    old: Resource | None = None,
    *,
    user: UserInfo = BOB,
    policy: Policy | None = None,
) -> Resource:
    authorizer = (policy or Policy()).rbac
    admitted: Resource = (
        default_chain().review(obj, old, now=NOW, user=user, authorizer=authorizer).obj
    )
    return admitted


def stored(obj: dict[str, Any]) -> Resource:
    return admit(obj, user=ROOT)


def forbidden(
    obj: dict[str, Any],
    old: Resource | None = None,
    *,
    policy: Policy | None = None,
    user: UserInfo = BOB,
) -> Forbidden:
    with pytest.raises(Forbidden) as err:
        admit(obj, old, user=user, policy=policy)
    assert err.value.code == 403
    return err.value


def refusal(obj: dict[str, Any], old: Resource | None = None) -> list[str]:
    with pytest.raises(Invalid) as err:
        admit(obj, old, user=ROOT)
    return [str(e) for e in err.value.errors]


# --- defaults -------------------------------------------------------------------------------------


def test_binding_defaults_fill_in_api_groups() -> None:
    binding = role_binding(
        subjects=[
            {"kind": "User", "name": "u"},
            {"kind": "Group", "name": "g"},
            {"kind": "ServiceAccount", "name": "sa"},
        ]
    )
    del binding["roleRef"]["apiGroup"]
    admitted = stored(binding).to_dict()
    assert admitted["roleRef"] == {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"}
    assert [s.get("apiGroup") for s in admitted["subjects"]] == [GROUP, GROUP, ""]


def test_role_names_are_path_segments_not_dns_names() -> None:
    assert (
        stored(cluster_role("system:controller:foo", [PODS_GET])).metadata.name
        == "system:controller:foo"
    )
    assert refusal(cluster_role("a/b", [PODS_GET]))[0].startswith(
        'metadata.name: Invalid value: "a/b"'
    )


# --- validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            {"apiGroups": [""], "resources": ["pods"], "verbs": []},
            "rules[0].verbs: Required value: verbs must contain at least one value",
        ),
        (
            {"resources": ["pods"], "verbs": ["get"]},
            "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
        ),
        (
            {"apiGroups": [""], "verbs": ["get"]},
            "rules[0].resources: Required value: resource rules must supply at least one resource",
        ),
        (
            {"nonResourceURLs": ["/metrics"], "apiGroups": [""], "verbs": ["get"]},
            'rules[0].nonResourceURLs: Invalid value: ["/metrics"]: rules cannot apply to both regular resources and non-resource URLs',
        ),
    ],
)
def test_cluster_role_rule_validation(rule: dict[str, Any], message: str) -> None:
    assert refusal(cluster_role(rules=[rule])) == [message]


def test_a_resource_rule_without_group_or_resource_reports_both() -> None:
    assert refusal(cluster_role(rules=[{"verbs": ["get"]}])) == [
        "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
        "rules[0].resources: Required value: resource rules must supply at least one resource",
    ]


def test_a_role_may_not_name_urls() -> None:
    obj = role(rules=[{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])
    assert refusal(obj) == [
        'rules[0].nonResourceURLs: Invalid value: ["/metrics"]: namespaced rules cannot apply to non-resource URLs'
    ]


def test_cluster_role_url_rules_are_valid() -> None:
    stored(cluster_role(rules=[{"nonResourceURLs": ["/metrics", "/healthz/*"], "verbs": ["get"]}]))


def test_aggregation_rule_needs_a_selector() -> None:
    obj = cluster_role(aggregationRule={"clusterRoleSelectors": []})
    assert refusal(obj) == [
        "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"
    ]


def test_role_ref_validation() -> None:
    binding = role_binding()
    binding["roleRef"] = {"apiGroup": "example.com", "kind": "Robot", "name": ""}
    assert refusal(binding) == [
        'roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
        'roleRef.kind: Unsupported value: "Robot": supported values: "Role", "ClusterRole"',
        "roleRef.name: Required value",
    ]


def test_cluster_role_binding_binds_only_cluster_roles() -> None:
    binding = cluster_role_binding()
    binding["roleRef"]["kind"] = "Role"
    assert refusal(binding) == [
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"'
    ]


def test_subject_validation() -> None:
    binding = cluster_role_binding(
        subjects=[
            {"kind": "User", "name": ""},
            {"kind": "ServiceAccount", "name": "builder", "apiGroup": GROUP, "namespace": "dev"},
            {"kind": "ServiceAccount", "name": "builder"},
            {"kind": "Group", "name": "g", "apiGroup": "example.com"},
            {"kind": "Robot", "name": "r2d2"},
        ]
    )
    assert refusal(binding) == [
        "subjects[0].name: Required value",
        'subjects[1].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: ""',
        "subjects[2].namespace: Required value",
        'subjects[3].apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
        'subjects[4].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
    ]


def test_a_role_binding_service_account_may_leave_out_its_namespace() -> None:
    stored(role_binding(subjects=[{"kind": "ServiceAccount", "name": "builder"}]))


def test_role_ref_cannot_change() -> None:
    old = stored(role_binding("view"))
    errors = refusal(role_binding("edit"), old)
    assert len(errors) == 1
    assert errors[0].startswith("roleRef: Invalid value: ")
    assert errors[0].endswith(": cannot change roleRef")
    # the subjects may change
    admit(role_binding("view", subjects=[user_subject("dave")]), old, user=ROOT)


# --- roles: no escalation -----------------------------------------------------------------------


def test_a_role_with_rules_its_writer_holds_is_admitted() -> None:
    policy = Policy()
    policy.grant("bob", PODS_ALL, namespace="dev")
    admit(
        role(rules=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]),
        policy=policy,
    )


def test_a_role_with_rules_its_writer_lacks_is_forbidden() -> None:
    policy = Policy()
    policy.grant("bob", PODS_GET, namespace="dev")
    rules = [
        {"apiGroups": [""], "resources": ["pods", "secrets"], "verbs": ["get", "list", "delete"]}
    ]
    err = forbidden(role(rules=rules), policy=policy)
    assert err.message == (
        'roles.rbac.authorization.k8s.io "r" is forbidden: user "bob" (groups=["system:authenticated"]) '
        "is attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["pods"], Verbs:["list" "delete"]}\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "delete"]}'
    )
    assert err.status()["details"] == {"name": "r", "group": GROUP, "kind": "roles"}


def test_missing_urls_are_worded_too() -> None:
    err = forbidden(cluster_role("metrics", [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]))
    assert err.message.endswith(
        "is attempting to grant RBAC permissions not currently held:\n"
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}'
    )
    assert err.message.startswith('clusterroles.rbac.authorization.k8s.io "metrics" is forbidden: ')


def test_missing_named_rules_are_compacted_by_name() -> None:
    rules = [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["a"],
            "verbs": ["get", "list"],
        }
    ]
    err = forbidden(role(rules=rules))
    assert err.message.endswith(
        "not currently held:\n"
        '{APIGroups:[""], Resources:["configmaps"], ResourceNames:["a"], Verbs:["get" "list"]}'
    )


def test_rights_held_in_another_namespace_do_not_count() -> None:
    policy = Policy()
    policy.grant("bob", PODS_ALL, namespace="dev")
    forbidden(role(namespace="prod"), policy=policy)


def test_cluster_wide_rights_count_in_every_namespace() -> None:
    policy = Policy()
    policy.grant("bob", PODS_ALL)
    admit(role(namespace="prod"), policy=policy)


def test_escalate_allows_granting_what_one_lacks() -> None:
    policy = Policy()
    policy.grant(
        "bob",
        {"apiGroups": [GROUP], "resources": ["roles"], "verbs": ["escalate"]},
        namespace="dev",
    )
    admit(role(rules=[{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]), policy=policy)


def test_escalate_named_for_a_role_does_not_cover_its_creation() -> None:
    # RoleEscalationAuthorized asks with the request's name, which a create has not
    policy = Policy()
    policy.grant(
        "bob",
        {
            "apiGroups": [GROUP],
            "resources": ["roles"],
            "resourceNames": ["r"],
            "verbs": ["escalate"],
        },
        namespace="dev",
    )
    forbidden(role("r"), policy=policy)


def test_system_masters_may_grant_anything() -> None:
    admit(cluster_role("god", FULL), user=ROOT)


def test_an_update_is_checked_too() -> None:
    policy = Policy()
    policy.grant("bob", PODS_GET, namespace="dev")
    old = stored(role())
    admit(role(), old, policy=policy)
    forbidden(role(rules=[PODS_ALL]), old, policy=policy)


def test_an_update_of_only_finalizers_and_owners_is_not_checked() -> None:
    old = stored(role(rules=[PODS_ALL]))
    changed = role(rules=[PODS_ALL])
    changed["metadata"]["finalizers"] = ["example.com/keep"]
    changed["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "1234"}
    ]
    admit(changed, old)


def test_resolution_errors_are_appended() -> None:
    policy = Policy()
    policy.observe(role_binding("gone", "Role", name="gone", subjects=[user_subject("bob")]))
    err = forbidden(role(), policy=policy)
    assert (
        '{APIGroups:[""], Resources:["pods"], Verbs:["get"]}; resolution errors: [' in err.message
    )
    assert err.message.endswith('"gone" not found]')


# --- aggregation needs every right ---------------------------------------------------------------

AGGREGATING = {"clusterRoleSelectors": [{"matchLabels": {"example.com/aggregate": "true"}}]}


def test_aggregation_rule_needs_cluster_admin_privileges() -> None:
    # bob holds the role's (empty) rules, but not every right
    policy = Policy()
    policy.grant("bob", {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]})
    err = forbidden(cluster_role("agg", aggregationRule=AGGREGATING), policy=policy)
    assert err.message == (
        'clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin '
        "privileges to use the aggregationRule"
    )


def test_aggregation_rule_with_full_authority() -> None:
    policy = Policy()
    policy.grant("bob", *FULL)
    admit(cluster_role("agg", aggregationRule=AGGREGATING), policy=policy)


def test_aggregation_rule_with_escalate() -> None:
    policy = Policy()
    policy.grant(
        "bob", {"apiGroups": [GROUP], "resources": ["clusterroles"], "verbs": ["escalate"]}
    )
    admit(cluster_role("agg", aggregationRule=AGGREGATING), policy=policy)


def test_dropping_an_aggregation_rule_needs_full_authority_too() -> None:
    policy = Policy()
    policy.grant("bob", PODS_GET)
    old = stored(cluster_role("agg", aggregationRule=AGGREGATING))
    err = forbidden(cluster_role("agg", [PODS_GET]), old, policy=policy)
    assert err.message.endswith("must have cluster-admin privileges to use the aggregationRule")


# --- bindings: no escalation ---------------------------------------------------------------------


def test_binding_a_role_whose_rules_one_holds() -> None:
    policy = Policy()
    policy.observe(cluster_role("view", [PODS_GET]))
    policy.grant("bob", PODS_ALL, namespace="dev")
    admit(role_binding("view"), policy=policy)


def test_binding_a_role_whose_rules_one_lacks_is_forbidden() -> None:
    policy = Policy()
    policy.observe(cluster_role("view", [PODS_ALL]))
    policy.grant("bob", PODS_GET, namespace="dev")
    err = forbidden(role_binding("view"), policy=policy)
    assert err.message == (
        'rolebindings.rbac.authorization.k8s.io "rb" is forbidden: user "bob" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently '
        'held:\n{APIGroups:[""], Resources:["pods"], Verbs:["list" "watch" "delete"]}'
    )


def test_cluster_role_binding_needs_the_rights_cluster_wide() -> None:
    policy = Policy()
    policy.observe(cluster_role("view", [PODS_GET]))
    policy.grant("bob", PODS_ALL, namespace="dev")
    err = forbidden(cluster_role_binding("view"), policy=policy)
    assert err.message.startswith(
        'clusterrolebindings.rbac.authorization.k8s.io "crb" is forbidden: '
    )


def test_bind_allows_binding_what_one_lacks() -> None:
    policy = Policy()
    policy.observe(cluster_role("admin", FULL))
    bind = {
        "apiGroups": [GROUP],
        "resources": ["clusterroles"],
        "resourceNames": ["admin"],
        "verbs": ["bind"],
    }
    policy.grant("bob", bind, namespace="dev")
    admit(role_binding("admin"), policy=policy)
    # bind names the role: another role is not covered
    policy.observe(cluster_role("other", FULL))
    forbidden(role_binding("other"), policy=policy)


def test_bind_on_roles_in_the_namespace() -> None:
    policy = Policy()
    policy.observe(
        role(
            "secret-reader", rules=[{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]
        )
    )
    policy.grant(
        "bob", {"apiGroups": [GROUP], "resources": ["roles"], "verbs": ["bind"]}, namespace="dev"
    )
    admit(role_binding("secret-reader", "Role"), policy=policy)


def test_binding_a_missing_cluster_role_is_not_found() -> None:
    with pytest.raises(NotFound) as err:
        admit(role_binding("ghost"))
    assert err.value.code == 404
    assert err.value.message == 'clusterroles.rbac.authorization.k8s.io "ghost" not found'


def test_binding_a_missing_role_is_not_found() -> None:
    with pytest.raises(NotFound) as err:
        admit(role_binding("ghost", "Role"))
    assert err.value.message == 'roles.rbac.authorization.k8s.io "ghost" not found'


def test_system_masters_may_bind_anything() -> None:
    admit(cluster_role_binding("ghost"), user=ROOT)
