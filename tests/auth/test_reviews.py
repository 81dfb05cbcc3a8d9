"""The access reviews `kubectl auth can-i` and `kubectl auth whoami` ask: SubjectAccessReview,
LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview and
SelfSubjectReview, answered by the RBAC authorizer (/work/research/k8s-auth.md §8; validation
as kubernetes pkg/apis/authorization/validation/validation.go)."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.api import authentication, authorization
from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.errors import BadRequest, Invalid
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY
from fleetwarden.auth.rbac import RBAC
from fleetwarden.auth.reviews import answer

RBAC_GROUP = "rbac.authorization.k8s.io"
BOB = UserInfo.of("bob", ["dev", "system:authenticated"])
READ_PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}
HEALTH = {"nonResourceURLs": ["/healthz", "/healthz/*"], "verbs": ["get"]}
INVALID_PREFIX = '.authorization.k8s.io "" is invalid: '


def authorizer() -> RBAC:
    """dev may read pods everywhere; bob may read health and pods in ns1."""
    rbac = RBAC()
    version = iter(range(1, 100))

    def observe(plural: str, obj: dict[str, Any]) -> None:
        obj["metadata"]["resourceVersion"] = str(next(version))
        rbac.observe(f"{RBAC_GROUP}/{plural}", obj)

    observe("clusterroles", {"metadata": {"name": "reader"}, "rules": [READ_PODS]})
    observe("clusterroles", {"metadata": {"name": "health"}, "rules": [HEALTH]})
    observe(
        "clusterrolebindings",
        {
            "metadata": {"name": "health"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "health"},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "User", "name": "bob"}],
        },
    )
    observe(
        "clusterrolebindings",
        {
            "metadata": {"name": "dev-readers"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "reader"},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": "dev"}],
        },
    )
    observe(
        "rolebindings",
        {
            "metadata": {"name": "bob-reads", "namespace": "ns1"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "reader"},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "User", "name": "bob"}],
        },
    )
    return rbac


def ask(
    info: KindInfo, spec: dict[str, Any], user: UserInfo = BOB, **metadata: Any
) -> dict[str, Any]:
    wire: dict[str, Any] = {"apiVersion": info.api_version, "kind": info.kind, "spec": spec}
    if metadata:
        wire["metadata"] = metadata
    return answer(info, REGISTRY.decode(wire), user, authorizer())


def invalid(info: KindInfo, spec: dict[str, Any], **metadata: Any) -> Invalid:
    with pytest.raises(Invalid) as err:
        ask(info, spec, **metadata)
    return err.value


def get_pods(namespace: str = "default") -> dict[str, Any]:
    return {"namespace": namespace, "verb": "get", "resource": "pods"}


# --- SubjectAccessReview -------------------------------------------------------------------------


def test_sar_allowed_with_the_reason() -> None:
    review = ask(
        authorization.SUBJECT_ACCESS_REVIEW,
        {"user": "carol", "groups": ["dev"], "resourceAttributes": get_pods()},
    )
    assert review["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by ClusterRoleBinding "dev-readers" of ClusterRole "reader" to Group "dev"',
    }
    assert review["spec"]["user"] == "carol"


def test_sar_denied_without_a_reason() -> None:
    spec = {"user": "carol", "resourceAttributes": {**get_pods(), "verb": "delete"}}
    assert ask(authorization.SUBJECT_ACCESS_REVIEW, spec)["status"] == {"allowed": False}


def test_sar_is_evaluated_for_the_subject_exactly_as_given() -> None:
    # the groups asked about are not the asker's, and nothing is added to them
    spec = {"user": "bob", "resourceAttributes": get_pods("ns2")}
    assert ask(authorization.SUBJECT_ACCESS_REVIEW, spec)["status"]["allowed"] is False
    spec = {"groups": ["dev"], "resourceAttributes": get_pods("ns2")}
    assert ask(authorization.SUBJECT_ACCESS_REVIEW, spec, user=UserInfo.of("nobody"))["status"][
        "allowed"
    ]


def test_sar_non_resource_attributes() -> None:
    spec = {"user": "bob", "nonResourceAttributes": {"path": "/healthz/etcd", "verb": "get"}}
    status = ask(authorization.SUBJECT_ACCESS_REVIEW, spec)["status"]
    assert status == {
        "allowed": True,
        "reason": 'RBAC: allowed by ClusterRoleBinding "health" of ClusterRole "health" to User "bob"',
    }
    spec = {"user": "bob", "nonResourceAttributes": {"path": "/metrics", "verb": "get"}}
    assert ask(authorization.SUBJECT_ACCESS_REVIEW, spec)["status"] == {"allowed": False}


def test_an_empty_sar_is_invalid() -> None:
    err = invalid(authorization.SUBJECT_ACCESS_REVIEW, {})
    assert err.code == 422
    assert err.message == (
        INVALID_PREFIX + "[spec.resourceAttributes: Invalid value: null: exactly one of "
        "nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "
        '"": at least one of user or group must be specified]'
    )


def test_a_sar_without_user_or_group_is_invalid() -> None:
    err = invalid(authorization.SUBJECT_ACCESS_REVIEW, {"resourceAttributes": get_pods()})
    assert err.message == (
        INVALID_PREFIX
        + 'spec.user: Invalid value: "": at least one of user or group must be specified'
    )


def test_invalid_review_details_omit_the_empty_kind_and_name() -> None:
    status = invalid(
        authorization.SUBJECT_ACCESS_REVIEW, {"resourceAttributes": get_pods()}
    ).status()
    assert status["details"] == {
        "group": "authorization.k8s.io",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "": at least one of user or group must be specified',
                "field": "spec.user",
            }
        ],
    }


def test_a_sar_with_both_kinds_of_attributes_is_invalid() -> None:
    spec = {
        "user": "bob",
        "resourceAttributes": get_pods(),
        "nonResourceAttributes": {"path": "/healthz", "verb": "get"},
    }
    err = invalid(authorization.SUBJECT_ACCESS_REVIEW, spec)
    assert [e.field for e in err.errors] == ["spec.nonResourceAttributes"]
    assert err.message.endswith(": cannot be specified in combination with resourceAttributes")


def test_a_sar_with_metadata_is_invalid() -> None:
    spec = {"user": "bob", "resourceAttributes": get_pods()}
    err = invalid(authorization.SUBJECT_ACCESS_REVIEW, spec, name="named")
    assert [e.field for e in err.errors] == ["metadata"]
    assert err.message.endswith(": must be empty")


# --- LocalSubjectAccessReview --------------------------------------------------------------------


def test_lsar_answers_in_its_namespace() -> None:
    spec = {"user": "bob", "resourceAttributes": get_pods("ns1")}
    review = ask(authorization.LOCAL_SUBJECT_ACCESS_REVIEW, spec, namespace="ns1")
    assert review["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "bob-reads/ns1" of ClusterRole "reader" to User "bob"',
    }


def test_lsar_namespace_must_match() -> None:
    spec = {"user": "bob", "resourceAttributes": get_pods("other")}
    err = invalid(authorization.LOCAL_SUBJECT_ACCESS_REVIEW, spec, namespace="ns1")
    assert err.message == (
        INVALID_PREFIX
        + 'spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace'
    )


def test_lsar_disallows_non_resource_attributes() -> None:
    spec = {"user": "bob", "nonResourceAttributes": {"path": "/healthz", "verb": "get"}}
    err = invalid(authorization.LOCAL_SUBJECT_ACCESS_REVIEW, spec, namespace="ns1")
    assert [e.field for e in err.errors] == ["spec.nonResourceAttributes"]
    assert err.message.endswith(": disallowed on this kind of request")


def test_lsar_errors_come_in_upstreams_order() -> None:
    # the spec's own checks first, then those of the local review
    spec = {"resourceAttributes": get_pods("other")}
    err = invalid(authorization.LOCAL_SUBJECT_ACCESS_REVIEW, spec, namespace="ns1")
    assert err.message == (
        INVALID_PREFIX + '[spec.user: Invalid value: "": at least one of user or group must be '
        'specified, spec.resourceAttributes.namespace: Invalid value: "other": must match '
        "metadata.namespace]"
    )


# --- SelfSubjectAccessReview ---------------------------------------------------------------------


def test_ssar_asks_about_the_requester() -> None:
    review = ask(authorization.SELF_SUBJECT_ACCESS_REVIEW, {"resourceAttributes": get_pods("ns1")})
    assert review["status"]["allowed"] is True
    outsider = UserInfo.of("eve", ["system:authenticated"])
    review = ask(
        authorization.SELF_SUBJECT_ACCESS_REVIEW, {"resourceAttributes": get_pods("ns1")}, outsider
    )
    assert review["status"] == {"allowed": False}


def test_ssar_without_attributes_is_invalid() -> None:
    err = invalid(authorization.SELF_SUBJECT_ACCESS_REVIEW, {})
    assert err.message == (
        INVALID_PREFIX + "spec.resourceAttributes: Invalid value: null: exactly one of "
        "nonResourceAttributes or resourceAttributes must be specified"
    )


def test_ssar_version_and_subresource_reach_the_authorizer() -> None:
    attributes = {**get_pods("ns1"), "subresource": "log", "version": "v1"}
    review = ask(authorization.SELF_SUBJECT_ACCESS_REVIEW, {"resourceAttributes": attributes})
    assert review["status"] == {"allowed": False}


# --- SelfSubjectRulesReview ----------------------------------------------------------------------


def test_ssrr_lists_cluster_then_namespace_rules() -> None:
    status = ask(authorization.SELF_SUBJECT_RULES_REVIEW, {"namespace": "ns1"})["status"]
    assert [(r["verbs"], r["apiGroups"], r["resources"]) for r in status["resourceRules"]] == [
        (["get", "list"], [""], ["pods"]),  # ClusterRoleBinding dev-readers
        (["get", "list"], [""], ["pods"]),  # RoleBinding bob-reads in ns1
    ]
    assert status["nonResourceRules"] == [
        {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/healthz/*"]}
    ]
    assert status["incomplete"] is False


def test_ssrr_rules_without_names_leave_resource_names_out() -> None:
    status = ask(authorization.SELF_SUBJECT_RULES_REVIEW, {"namespace": "ns1"})["status"]
    assert all("resourceNames" not in rule for rule in status["resourceRules"])


def test_ssrr_of_a_user_with_nothing_bound() -> None:
    review = ask(authorization.SELF_SUBJECT_RULES_REVIEW, {"namespace": "ns1"}, UserInfo.of("eve"))
    assert review["status"] == {"resourceRules": [], "nonResourceRules": [], "incomplete": False}


def test_ssrr_needs_a_namespace() -> None:
    with pytest.raises(BadRequest) as err:
        ask(authorization.SELF_SUBJECT_RULES_REVIEW, {})
    assert err.value.code == 400
    assert err.value.message == "no namespace on request"


def test_ssrr_reports_a_missing_role_as_evaluation_error() -> None:
    rbac = authorizer()
    rbac.observe(
        f"{RBAC_GROUP}/rolebindings",
        {
            "metadata": {"name": "ghost", "namespace": "ns1", "resourceVersion": "100"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "ghost"},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "User", "name": "bob"}],
        },
    )
    wire = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "ns1"},
    }
    review = answer(authorization.SELF_SUBJECT_RULES_REVIEW, REGISTRY.decode(wire), BOB, rbac)
    assert review["status"]["evaluationError"] == 'role.rbac.authorization.k8s.io "ghost" not found'
    assert len(review["status"]["resourceRules"]) == 2


# --- SelfSubjectReview ---------------------------------------------------------------------------


def test_whoami() -> None:
    user = UserInfo.of("bob", ["dev", "system:authenticated"], "42", {"scopes": ["view"]})
    wire = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    review = answer(authentication.SELF_SUBJECT_REVIEW, REGISTRY.decode(wire), user, authorizer())
    assert review["status"] == {
        "userInfo": {
            "username": "bob",
            "uid": "42",
            "groups": ["dev", "system:authenticated"],
            "extra": {"scopes": ["view"]},
        }
    }


def test_whoami_of_anonymous_leaves_out_what_is_empty() -> None:
    wire = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    anonymous = UserInfo("system:anonymous", ("system:unauthenticated",))
    review = answer(
        authentication.SELF_SUBJECT_REVIEW, REGISTRY.decode(wire), anonymous, authorizer()
    )
    assert review["status"] == {
        "userInfo": {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
    }
