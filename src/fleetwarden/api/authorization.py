"""What a request asks to do, and who may: authorizer.Attributes, a decision, the Authorizer
protocol the server, the simulator and admission share, and authorization.k8s.io/v1's
access reviews (SubjectAccessReview and friends), which are asked, never stored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

from pydantic import Field

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.kinds import KindInfo, review_kind
from fleetwarden.api.meta import Model, Resource
from fleetwarden.api.rbac import PolicyRule

GROUP = "authorization.k8s.io"
VERSION = "v1"


@dataclass(frozen=True)
class Attributes:
    """authorizer.AttributesRecord: a resource request (verb on group/resource[/subresource],
    maybe one name, maybe in a namespace) or a non-resource one (verb on a path)."""

    user: UserInfo
    verb: str
    resource: str = ""
    api_group: str = ""
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    api_version: str = ""
    path: str = ""
    resource_request: bool = True


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


class BoundRules(NamedTuple):
    """RulesFor's answer: every rule bound to a user, and why some could not be read (a
    binding's role is missing)."""

    rules: list[PolicyRule]
    errors: list[str]


class Authorizer(Protocol):
    """What may decide a request, and list what a user may do (for rules reviews and
    RBAC's escalation check)."""

    def authorize(self, attributes: Attributes) -> Decision: ...

    def rules_for(self, user: UserInfo, namespace: str) -> BoundRules: ...

    def role_rules(self, kind: str, name: str, namespace: str) -> list[PolicyRule] | None:
        """The rules of a Role (in the namespace) or ClusterRole; None if there is none."""
        ...


class ResourceAttributes(Model):
    namespace: str | None = None
    verb: str | None = None
    group: str | None = None
    version: str | None = None
    resource: str | None = None
    subresource: str | None = None
    name: str | None = None


class NonResourceAttributes(Model):
    path: str | None = None
    verb: str | None = None


class SubjectAccessReviewSpec(Model):
    resource_attributes: ResourceAttributes | None = None
    non_resource_attributes: NonResourceAttributes | None = None
    user: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None
    uid: str | None = None


class SubjectAccessReviewStatus(Model):
    allowed: bool = False
    denied: bool | None = None
    reason: str | None = None
    evaluation_error: str | None = None


class SubjectAccessReview(Resource):
    spec: SubjectAccessReviewSpec = Field(default_factory=SubjectAccessReviewSpec)
    status: SubjectAccessReviewStatus | None = None


class SelfSubjectAccessReviewSpec(Model):
    resource_attributes: ResourceAttributes | None = None
    non_resource_attributes: NonResourceAttributes | None = None


class SelfSubjectAccessReview(Resource):
    spec: SelfSubjectAccessReviewSpec = Field(default_factory=SelfSubjectAccessReviewSpec)
    status: SubjectAccessReviewStatus | None = None


class SelfSubjectRulesReviewSpec(Model):
    namespace: str | None = None


class ResourceRule(Model):
    verbs: list[str] = Field(default_factory=list)
    api_groups: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None


class NonResourceRule(Model):
    verbs: list[str] = Field(default_factory=list)
    non_resource_urls: list[str] | None = Field(default=None, alias="nonResourceURLs")


class SubjectRulesReviewStatus(Model):
    # Null in what a client sends (Go's nil slices); filled in what the server answers.
    resource_rules: list[ResourceRule] | None = None
    non_resource_rules: list[NonResourceRule] | None = None
    incomplete: bool = False
    evaluation_error: str | None = None


class SelfSubjectRulesReview(Resource):
    spec: SelfSubjectRulesReviewSpec = Field(default_factory=SelfSubjectRulesReviewSpec)
    status: SubjectRulesReviewStatus | None = None


def _review(kind: str, plural: str, namespaced: bool, model: type[Resource]) -> KindInfo:
    return review_kind(GROUP, VERSION, kind, plural, model, namespaced)


SUBJECT_ACCESS_REVIEW = _review(
    "SubjectAccessReview", "subjectaccessreviews", False, SubjectAccessReview
)
LOCAL_SUBJECT_ACCESS_REVIEW = _review(
    "LocalSubjectAccessReview", "localsubjectaccessreviews", True, SubjectAccessReview
)
SELF_SUBJECT_ACCESS_REVIEW = _review(
    "SelfSubjectAccessReview", "selfsubjectaccessreviews", False, SelfSubjectAccessReview
)
SELF_SUBJECT_RULES_REVIEW = _review(
    "SelfSubjectRulesReview", "selfsubjectrulesreviews", False, SelfSubjectRulesReview
)
KINDS = [
    SUBJECT_ACCESS_REVIEW,
    LOCAL_SUBJECT_ACCESS_REVIEW,
    SELF_SUBJECT_ACCESS_REVIEW,
    SELF_SUBJECT_RULES_REVIEW,
]
