"""Impersonation (`kubectl --as`, `--as-group`, `--as-uid`), as kube-apiserver's filter: each
thing asked for is authorized with the `impersonate` verb, and the request then runs as the
user asked for."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from urllib.parse import unquote

from fleetwarden.api.authentication import (
    ANONYMOUS,
    AUTHENTICATED,
    SERVICE_ACCOUNT_PREFIX,
    SERVICE_ACCOUNTS_GROUP,
    UNAUTHENTICATED,
    UserInfo,
)
from fleetwarden.api.authentication import (
    GROUP as AUTHENTICATION_GROUP,
)
from fleetwarden.api.authorization import Attributes, Decision
from fleetwarden.api.errors import BadRequest
from fleetwarden.auth.refusals import forbidden

USER_HEADER = "impersonate-user"
GROUP_HEADER = "impersonate-group"
UID_HEADER = "impersonate-uid"
EXTRA_PREFIX = "impersonate-extra-"

Authorize = Callable[[Attributes], Decision]


def requested(headers: Sequence[tuple[str, str]]) -> bool:
    return any(
        name in (USER_HEADER, GROUP_HEADER, UID_HEADER) or name.startswith(EXTRA_PREFIX)
        for name, _ in headers
    )


def impersonate(
    user: UserInfo, headers: Sequence[tuple[str, str]], authorize: Authorize
) -> UserInfo:
    """The user the headers ask for (lower-case names, every value apart), once `user`
    may impersonate each part of it."""
    name = next((v for k, v in headers if k == USER_HEADER), "")
    groups = [v for k, v in headers if k == GROUP_HEADER]
    uid = next((v for k, v in headers if k == UID_HEADER), "")
    extra: dict[str, list[str]] = {}
    for key, value in headers:
        if key.startswith(EXTRA_PREFIX):
            extra.setdefault(unquote(key.removeprefix(EXTRA_PREFIX)).lower(), []).append(value)
    if not name:
        asked = " ".join(_asked(groups, uid, extra))
        raise BadRequest(f"requested [{asked}] without impersonating a user")
    for attributes in _checks(user, name, groups, uid, extra):
        decision = authorize(attributes)
        if not decision.allowed:
            raise forbidden(attributes, decision.reason)
    return UserInfo.of(name, _groups(name, groups), uid, extra)


def _checks(
    user: UserInfo, name: str, groups: list[str], uid: str, extra: Mapping[str, list[str]]
) -> list[Attributes]:
    checks = [_user_check(user, name)]
    checks += [_check(user, "groups", group) for group in groups]
    checks += [
        _check(user, "userextras", value, AUTHENTICATION_GROUP, subresource=key)
        for key, values in extra.items()
        for value in values
    ]
    if uid:
        checks.append(_check(user, "uids", uid, AUTHENTICATION_GROUP))
    return checks


def _user_check(user: UserInfo, name: str) -> Attributes:
    if name.startswith(SERVICE_ACCOUNT_PREFIX):
        namespace, _, account = name.removeprefix(SERVICE_ACCOUNT_PREFIX).partition(":")
        if namespace and account:
            return _check(user, "serviceaccounts", account, namespace=namespace)
    return _check(user, "users", name)


def _check(
    user: UserInfo,
    resource: str,
    name: str,
    group: str = "",
    *,
    namespace: str = "",
    subresource: str = "",
) -> Attributes:
    return Attributes(
        user, "impersonate", resource, group, namespace, name, subresource, api_version=""
    )


def _groups(name: str, groups: list[str]) -> list[str]:
    """The groups of the user impersonated: a service account's own when none are asked
    for; then system:unauthenticated for anonymous, system:authenticated for anyone else
    unless a group asked for already says whether it is."""
    if not groups and name.startswith(SERVICE_ACCOUNT_PREFIX):
        namespace = name.removeprefix(SERVICE_ACCOUNT_PREFIX).partition(":")[0]
        groups = [SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP}:{namespace}"]
    if name == ANONYMOUS:
        return groups if UNAUTHENTICATED in groups else [*groups, UNAUTHENTICATED]
    if not {AUTHENTICATED, UNAUTHENTICATED} & set(groups):
        groups = [*groups, AUTHENTICATED]
    return groups


def _asked(groups: list[str], uid: str, extra: Mapping[str, list[str]]) -> list[str]:
    """What was asked for, as the filter prints its ObjectReferences (Go's %v of the struct:
    Kind Namespace Name UID APIVersion ResourceVersion FieldPath)."""
    version = f"{AUTHENTICATION_GROUP}/v1"
    asked = [_reference("Group", group) for group in groups]
    asked += [
        _reference("UserExtra", value, version, key)
        for key, values in extra.items()
        for value in values
    ]
    return [*asked, _reference("UID", uid, version)] if uid else asked


def _reference(kind: str, name: str, api_version: str = "", field_path: str = "") -> str:
    return "{" + " ".join([kind, "", name, "", api_version, "", field_path]) + "}"
