"""Who makes a request: user.Info, and authentication.k8s.io/v1's SelfSubjectReview."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import Field

from fleetwarden.api.kinds import review_kind
from fleetwarden.api.meta import Model, Resource

GROUP = "authentication.k8s.io"
VERSION = "v1"

# The groups and users Kubernetes reserves (k8s.io/apiserver/pkg/authentication/user).
SYSTEM_MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"


@dataclass(frozen=True)
class UserInfo:
    """An authenticated identity. Frozen and hashable: decisions are cached by it."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    @classmethod
    def of(
        cls,
        name: str,
        groups: Sequence[str] = (),
        uid: str = "",
        extra: Mapping[str, Sequence[str]] | None = None,
    ) -> UserInfo:
        pairs = tuple(sorted((k, tuple(v)) for k, v in (extra or {}).items()))
        return cls(name, tuple(groups), uid, pairs)

    def authenticated(self) -> UserInfo:
        """With system:authenticated, as every authenticator but anonymous adds it."""
        if AUTHENTICATED in self.groups or self.name == ANONYMOUS:
            return self
        return UserInfo(self.name, (*self.groups, AUTHENTICATED), self.uid, self.extra)

    def to_wire(self) -> dict[str, object]:
        """authentication/v1 UserInfo, as audit events and reviews carry it."""
        wire: dict[str, object] = {"username": self.name}
        if self.uid:
            wire["uid"] = self.uid
        if self.groups:
            wire["groups"] = list(self.groups)
        if self.extra:
            wire["extra"] = {k: list(v) for k, v in self.extra}
        return wire


# The cluster administrator: the scenario runner's default sender, kubeconfig's admin.
ADMIN = UserInfo("admin", (SYSTEM_MASTERS, AUTHENTICATED))


def service_account_user(namespace: str, name: str) -> str:
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


class UserInfoModel(Model):
    username: str | None = None
    uid: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None


class SelfSubjectReviewStatus(Model):
    user_info: UserInfoModel | None = None


class SelfSubjectReview(Resource):
    status: SelfSubjectReviewStatus = Field(default_factory=SelfSubjectReviewStatus)


SELF_SUBJECT_REVIEW = review_kind(
    GROUP, VERSION, "SelfSubjectReview", "selfsubjectreviews", SelfSubjectReview, False
)


class TokenReviewSpec(Model):
    token: str | None = None
    audiences: list[str] | None = None


class TokenReview(Resource):
    """Asks who a bearer token is (a webhook, Vault, kube-rbac-proxy ask the hub)."""

    spec: TokenReviewSpec = Field(default_factory=TokenReviewSpec)


TOKEN_REVIEW = review_kind(GROUP, VERSION, "TokenReview", "tokenreviews", TokenReview, False)
KINDS = [SELF_SUBJECT_REVIEW, TOKEN_REVIEW]
