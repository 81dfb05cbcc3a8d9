"""Impersonation (`kubectl --as`, `--as-group`, `--as-uid`, Impersonate-Extra-*): each part
asked for is checked with the `impersonate` verb, in order, and the request then runs as the
user asked for. The legacy filter's behaviour and words (/work/research/k8s-auth.md §6)."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.authorization import Attributes, Decision
from fleetwarden.api.errors import BadRequest, Forbidden
from fleetwarden.auth.impersonation import impersonate, requested
from fleetwarden.auth.rbac import RBAC

RBAC_GROUP = "rbac.authorization.k8s.io"
AUTHN_GROUP = "authentication.k8s.io"
ALICE = UserInfo.of("alice", ["system:authenticated"])
Headers = list[tuple[str, str]]


def impersonator(*rules: dict[str, Any]) -> RBAC:
    """An authorizer under which alice holds these rules cluster-wide."""
    authorizer = RBAC()
    authorizer.observe(
        f"{RBAC_GROUP}/clusterroles",
        {"metadata": {"name": "impersonator", "resourceVersion": "1"}, "rules": list(rules)},
    )
    authorizer.observe(
        f"{RBAC_GROUP}/clusterrolebindings",
        {
            "metadata": {"name": "impersonator", "resourceVersion": "2"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "impersonator"},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "User", "name": "alice"}],
        },
    )
    return authorizer


def may_impersonate(resource: str, group: str = "") -> dict[str, Any]:
    return {"apiGroups": [group], "resources": [resource], "verbs": ["impersonate"]}


EVERYTHING = impersonator({"apiGroups": ["*"], "resources": ["*"], "verbs": ["impersonate"]})


def run_as(headers: Headers, authorizer: RBAC = EVERYTHING) -> UserInfo:
    return impersonate(ALICE, headers, authorizer.authorize)


def refusal(headers: Headers, authorizer: RBAC) -> str:
    with pytest.raises(Forbidden) as err:
        run_as(headers, authorizer)
    return err.value.message


class Recorder:
    """An authorizer that allows everything and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[Attributes] = []

    def authorize(self, attributes: Attributes) -> Decision:
        self.asked.append(attributes)
        return Decision(True)


def test_requested() -> None:
    assert not requested([("authorization", "Bearer x"), ("accept", "*/*")])
    assert requested([("impersonate-user", "bob")])
    assert requested([("impersonate-group", "dev")])
    assert requested([("impersonate-uid", "1234")])
    assert requested([("impersonate-extra-scopes", "view")])


# --- the user impersonated ----------------------------------------------------------------------


def test_a_user_gets_system_authenticated() -> None:
    assert run_as([("impersonate-user", "bob")]) == UserInfo.of("bob", ["system:authenticated"])


def test_a_service_account_gets_its_groups() -> None:
    user = run_as([("impersonate-user", "system:serviceaccount:dev:builder")])
    assert user.groups == (
        "system:serviceaccounts",
        "system:serviceaccounts:dev",
        "system:authenticated",
    )


def test_groups_asked_for_are_exactly_the_groups() -> None:
    headers = [
        ("impersonate-user", "system:serviceaccount:dev:builder"),
        ("impersonate-group", "g1"),
        ("impersonate-group", "g2"),
    ]
    assert run_as(headers).groups == ("g1", "g2", "system:authenticated")


def test_system_unauthenticated_asked_for_keeps_authenticated_out() -> None:
    headers = [("impersonate-user", "bob"), ("impersonate-group", "system:unauthenticated")]
    assert run_as(headers).groups == ("system:unauthenticated",)


def test_system_authenticated_asked_for_is_not_repeated() -> None:
    headers = [("impersonate-user", "bob"), ("impersonate-group", "system:authenticated")]
    assert run_as(headers).groups == ("system:authenticated",)


def test_anonymous_gets_system_unauthenticated() -> None:
    assert run_as([("impersonate-user", "system:anonymous")]) == UserInfo.of(
        "system:anonymous", ["system:unauthenticated"]
    )


def test_uid_and_extras() -> None:
    headers = [
        ("impersonate-user", "bob"),
        ("impersonate-uid", "1234"),
        ("impersonate-extra-scopes", "view"),
        ("impersonate-extra-scopes", "edit"),
        ("impersonate-extra-example.com%2fteam", "a"),
    ]
    user = run_as(headers)
    assert user.uid == "1234"
    assert dict(user.extra) == {"scopes": ("view", "edit"), "example.com/team": ("a",)}


# --- the checks, in order ----------------------------------------------------------------------


def test_each_part_is_checked_in_order() -> None:
    recorder = Recorder()
    headers = [
        ("impersonate-uid", "1234"),
        ("impersonate-extra-scopes", "view"),
        ("impersonate-group", "g1"),
        ("impersonate-user", "system:serviceaccount:dev:builder"),
        ("impersonate-group", "g2"),
    ]
    impersonate(ALICE, headers, recorder.authorize)
    asked = [
        (a.verb, a.api_group, a.resource, a.subresource, a.namespace, a.name)
        for a in recorder.asked
    ]
    assert asked == [
        ("impersonate", "", "serviceaccounts", "", "dev", "builder"),
        ("impersonate", "", "groups", "", "", "g1"),
        ("impersonate", "", "groups", "", "", "g2"),
        ("impersonate", AUTHN_GROUP, "userextras", "scopes", "", "view"),
        ("impersonate", AUTHN_GROUP, "uids", "", "", "1234"),
    ]
    assert all(a.user == ALICE and a.resource_request for a in recorder.asked)


def test_a_malformed_service_account_name_is_a_plain_user() -> None:
    recorder = Recorder()
    impersonate(ALICE, [("impersonate-user", "system:serviceaccount:dev")], recorder.authorize)
    assert [(a.resource, a.name) for a in recorder.asked] == [
        ("users", "system:serviceaccount:dev")
    ]


def test_impersonating_a_user_needs_impersonate_on_users() -> None:
    authorizer = impersonator(may_impersonate("groups"))
    assert refusal([("impersonate-user", "bob")], authorizer) == (
        'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API '
        'group "" at the cluster scope'
    )
    user = run_as([("impersonate-user", "bob")], impersonator(may_impersonate("users")))
    assert user.name == "bob"


def test_impersonating_a_group_needs_impersonate_on_groups() -> None:
    authorizer = impersonator(may_impersonate("users"))
    headers = [("impersonate-user", "bob"), ("impersonate-group", "admins")]
    assert refusal(headers, authorizer) == (
        'groups "admins" is forbidden: User "alice" cannot impersonate resource "groups" in API '
        'group "" at the cluster scope'
    )


def test_impersonating_a_service_account_is_checked_in_its_namespace() -> None:
    authorizer = impersonator(may_impersonate("users"))
    headers = [("impersonate-user", "system:serviceaccount:dev:builder")]
    assert refusal(headers, authorizer) == (
        'serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource '
        '"serviceaccounts" in API group "" in the namespace "dev"'
    )


def test_impersonating_an_extra_needs_impersonate_on_its_subresource() -> None:
    authorizer = impersonator(may_impersonate("users"))
    headers = [("impersonate-user", "bob"), ("impersonate-extra-scopes", "val")]
    assert refusal(headers, authorizer) == (
        'userextras.authentication.k8s.io "val" is forbidden: User "alice" cannot impersonate '
        'resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope'
    )
    allowed = impersonator(
        may_impersonate("users"), may_impersonate("userextras/scopes", AUTHN_GROUP)
    )
    assert dict(run_as(headers, allowed).extra) == {"scopes": ("val",)}


def test_impersonating_a_uid_needs_impersonate_on_uids() -> None:
    authorizer = impersonator(may_impersonate("users"))
    headers = [("impersonate-user", "bob"), ("impersonate-uid", "1234")]
    assert refusal(headers, authorizer) == (
        'uids.authentication.k8s.io "1234" is forbidden: User "alice" cannot impersonate '
        'resource "uids" in API group "authentication.k8s.io" at the cluster scope'
    )


def test_resource_names_limit_who_may_be_impersonated() -> None:
    rule = {
        "apiGroups": [""],
        "resources": ["users"],
        "resourceNames": ["bob"],
        "verbs": ["impersonate"],
    }
    authorizer = impersonator(rule)
    assert run_as([("impersonate-user", "bob")], authorizer).name == "bob"
    with pytest.raises(Forbidden):
        run_as([("impersonate-user", "carol")], authorizer)


def test_the_first_refused_check_is_the_refusal() -> None:
    # neither the user nor the group may be impersonated: the user is named
    authorizer = impersonator()
    headers = [("impersonate-group", "admins"), ("impersonate-user", "bob")]
    assert refusal(headers, authorizer).startswith('users "bob" is forbidden')


def test_the_authorizers_reason_is_appended() -> None:
    authorizer = impersonator()
    authorizer.observe(
        f"{RBAC_GROUP}/clusterrolebindings",
        {
            "metadata": {"name": "ghost", "resourceVersion": "3"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "ghost"},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "User", "name": "alice"}],
        },
    )
    assert refusal([("impersonate-user", "bob")], authorizer) == (
        'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API '
        'group "" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "ghost" '
        "not found"
    )


# --- asking without a user ----------------------------------------------------------------------


def test_a_group_without_a_user_is_a_bad_request() -> None:
    with pytest.raises(BadRequest) as err:
        run_as([("impersonate-group", "system:masters")])
    assert err.value.code == 400
    assert (
        err.value.message == "requested [{Group  system:masters    }] without impersonating a user"
    )


def test_everything_asked_for_without_a_user_is_listed() -> None:
    headers = [
        ("impersonate-uid", "1234"),
        ("impersonate-group", "g"),
        ("impersonate-extra-scopes", "val"),
    ]
    with pytest.raises(BadRequest) as err:
        run_as(headers)
    assert err.value.message == (
        "requested [{Group  g    } {UserExtra  val  authentication.k8s.io/v1  scopes} "
        "{UID  1234  authentication.k8s.io/v1  }] without impersonating a user"
    )


def test_nothing_is_authorized_before_the_bad_request() -> None:
    recorder = Recorder()
    with pytest.raises(BadRequest):
        impersonate(ALICE, [("impersonate-group", "g")], recorder.authorize)
    assert recorder.asked == []
