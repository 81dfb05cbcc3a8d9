"""The access reviews: authorization.k8s.io's SubjectAccessReview, LocalSubjectAccessReview,
SelfSubjectAccessReview and SelfSubjectRulesReview, and authentication.k8s.io's
SelfSubjectReview and TokenReview. Each is created and answered at once, never stored:
`kubectl auth can-i` (and `--list`) and `kubectl auth whoami` ask them, and a component
that takes the hub's tokens asks a TokenReview."""

from __future__ import annotations

from typing import Any

from fleetwarden.api import authentication, authorization
from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.authorization import (
    Attributes,
    Authorizer,
    NonResourceAttributes,
    NonResourceRule,
    ResourceAttributes,
    ResourceRule,
    SubjectAccessReview,
    SubjectRulesReviewStatus,
)
from fleetwarden.api.errors import BadRequest, ErrorList, Invalid, Path, aggregate
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Resource
from fleetwarden.api.rbac import PolicyRule
from fleetwarden.auth.authn import Authenticator

Obj = dict[str, Any]


def answer(
    info: KindInfo,
    obj: Resource,
    user: UserInfo,
    authorizer: Authorizer,
    authenticator: Authenticator | None = None,
) -> Obj:
    """The review, with its status filled in; Invalid when it asks nothing answerable."""
    if info == authentication.SELF_SUBJECT_REVIEW:
        return _whoami(obj, user)
    if info == authentication.TOKEN_REVIEW:
        return _token_review(obj, authenticator or Authenticator())
    if info == authorization.SELF_SUBJECT_RULES_REVIEW:
        return _rules(obj, user, authorizer)
    spec = obj.spec  # type: ignore[attr-defined]
    errors = _validate_access_review(info, obj)
    if errors:
        # The internal object has no kind yet: `.authorization.k8s.io "" is invalid: ...`.
        raise Invalid("", info.group, "", errors)
    subject = user
    if isinstance(obj, SubjectAccessReview):
        subject = UserInfo.of(spec.user or "", spec.groups or [], spec.uid or "", spec.extra or {})
    decision = authorizer.authorize(_attributes(subject, spec))
    status: dict[str, Any] = {"allowed": decision.allowed}
    if decision.reason:
        status["reason"] = decision.reason
    return {**obj.to_dict(), "status": status}


def _attributes(user: UserInfo, spec: Any) -> Attributes:
    resource: ResourceAttributes | None = spec.resource_attributes
    if resource is not None:
        return Attributes(
            user,
            resource.verb or "",
            resource.resource or "",
            resource.group or "",
            resource.namespace or "",
            resource.name or "",
            resource.subresource or "",
            api_version=resource.version or "*",
        )
    path: NonResourceAttributes = spec.non_resource_attributes
    return Attributes(user, path.verb or "", path=path.path or "", resource_request=False)


def _validate_access_review(info: KindInfo, obj: Resource) -> ErrorList:
    """ValidateSubjectAccessReviewSpec and its kinds' own checks, in upstream's order."""
    spec: Any = obj.spec  # type: ignore[attr-defined]
    at = Path("spec")
    resource, path = spec.resource_attributes, spec.non_resource_attributes
    errors: ErrorList = []
    if resource is None and path is None:
        detail = "exactly one of nonResourceAttributes or resourceAttributes must be specified"
        errors.append(at.child("resourceAttributes").invalid(None, detail))
    elif resource is not None and path is not None:
        detail = "cannot be specified in combination with resourceAttributes"
        errors.append(at.child("nonResourceAttributes").invalid(path.to_dict(), detail))
    if isinstance(obj, SubjectAccessReview) and not spec.user and not spec.groups:
        detail = "at least one of user or group must be specified"
        errors.append(at.child("user").invalid("", detail))
    errors += _metadata_errors(info, obj)
    if info == authorization.LOCAL_SUBJECT_ACCESS_REVIEW:
        if path is not None:
            detail = "disallowed on this kind of request"
            errors.append(at.child("nonResourceAttributes").invalid(path.to_dict(), detail))
        if resource is not None and (resource.namespace or "") != obj.namespace:
            errors.append(
                at.child("resourceAttributes", "namespace").invalid(
                    resource.namespace or "", "must match metadata.namespace"
                )
            )
    return errors


def _metadata_errors(info: KindInfo, obj: Resource) -> ErrorList:
    """A review has no metadata of its own (a local one its namespace only)."""
    # Go's zero values count as absent (kubectl sends `creationTimestamp: null`, and in
    # protobuf `generation: 0`).
    meta = {k: v for k, v in obj.metadata.to_dict().items() if v}
    meta.pop("managedFields", None)
    if info == authorization.LOCAL_SUBJECT_ACCESS_REVIEW:
        meta.pop("namespace", None)
        detail = "must be empty except for namespace"
    else:
        detail = "must be empty"
    return [Path("metadata").invalid(meta, detail)] if meta else []


def _rules(obj: Resource, user: UserInfo, authorizer: Authorizer) -> Obj:
    namespace = obj.spec.namespace or ""  # type: ignore[attr-defined]
    if not namespace:
        raise BadRequest("no namespace on request")
    rules, errors = authorizer.rules_for(user, namespace)
    status = SubjectRulesReviewStatus(
        resource_rules=[_resource_rule(r) for r in rules if r.resources or r.api_groups],
        non_resource_rules=[
            NonResourceRule(verbs=list(r.verbs), non_resource_urls=list(r.non_resource_urls))
            for r in rules
            if r.non_resource_urls
        ],
        incomplete=False,
    )
    if errors:
        status.evaluation_error = aggregate(errors)
    return {**obj.to_dict(), "status": status.to_dict()}


def _resource_rule(rule: PolicyRule) -> ResourceRule:
    names = {"resource_names": list(rule.resource_names)} if rule.resource_names else {}
    return ResourceRule(
        verbs=list(rule.verbs),
        api_groups=list(rule.api_groups or []),
        resources=list(rule.resources or []),
        **names,
    )


def _token_review(obj: Resource, authenticator: Authenticator) -> Obj:
    """TokenReview's REST: the token's verdict, in Go's JSON (a failed one has an empty user
    and no `authenticated`)."""
    spec: Any = obj.spec  # type: ignore[attr-defined]
    if not spec.token:
        raise BadRequest("token is required for TokenReview in authentication")
    verdict = authenticator.review(spec.token, spec.audiences or ())
    status: dict[str, Any] = {"user": verdict.user.to_wire() if verdict.user else {}}
    if verdict.user is not None:
        status = {"authenticated": True, **status}
    if verdict.audiences and verdict.user is not None:
        status["audiences"] = list(verdict.audiences)
    if verdict.error:
        status["error"] = verdict.error
    return {**obj.to_dict(), "status": status}


def _whoami(obj: Resource, user: UserInfo) -> Obj:
    return {**obj.to_dict(), "status": {"userInfo": user.to_wire()}}
