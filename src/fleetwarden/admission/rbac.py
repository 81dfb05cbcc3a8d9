"""RBAC's objects as kube-apiserver admits them: their defaults and validation, and the
escalation check of RBAC's storage: nobody grants what they do not hold. A Role or
ClusterRole may hold only rules its writer holds (or may `escalate`); a binding may bind
only a role whose rules its writer holds (or may `bind`); an aggregationRule needs every
right. Members of system:masters are exempt.

Upstream: pkg/apis/rbac/validation/validation.go, pkg/registry/rbac/escalation_check.go and
the policybased storages of pkg/registry/rbac.
"""

from __future__ import annotations

import json
from typing import Any

from fleetwarden.admission.chain import Plugin, Request
from fleetwarden.api import rbac
from fleetwarden.api.authentication import SYSTEM_MASTERS
from fleetwarden.api.authorization import Attributes, Authorizer
from fleetwarden.api.errors import ErrorList, Forbidden, NotFound, Path, aggregate
from fleetwarden.api.rbac import ClusterRole, PolicyRule, Role, RoleRef, Subject
from fleetwarden.semantics.rbac import compact_rules, compact_string, covers, go_quoted
from fleetwarden.semantics.validation import (
    is_dns1123_subdomain,
    is_path_segment_name,
    validate_label_selector,
)

_FULL_AUTHORITY = [
    PolicyRule(verbs=["*"], api_groups=["*"], resources=["*"]),
    PolicyRule(verbs=["*"], non_resource_urls=["*"]),
]
_SUBJECT_KINDS = (rbac.SERVICE_ACCOUNT, rbac.USER, rbac.GROUP_KIND)


# --- defaults and validation ------------------------------------------------------------


def _default_binding(request: Request) -> None:
    binding = request.obj
    if not binding.role_ref.api_group:
        binding.role_ref.api_group = rbac.GROUP
    for subject in binding.subjects or []:
        if subject.api_group is None or not subject.api_group:
            subject.api_group = "" if subject.kind == rbac.SERVICE_ACCOUNT else rbac.GROUP


def _validate_role(request: Request) -> ErrorList:
    namespaced = request.info.namespaced
    errors: ErrorList = []
    for i, rule in enumerate(request.obj.rules or []):
        errors += _rule_errors(rule, Path("rules").index(i), namespaced)
    if isinstance(request.obj, ClusterRole) and request.obj.aggregation_rule is not None:
        at = Path("aggregationRule").child("clusterRoleSelectors")
        selectors = request.obj.aggregation_rule.cluster_role_selectors or []
        if not selectors:
            detail = "at least one clusterRoleSelector required if aggregationRule is non-nil"
            errors.append(at.required(detail))
        for i, selector in enumerate(selectors):
            errors += validate_label_selector(selector, at.index(i))
    return errors


def _rule_errors(rule: PolicyRule, at: Path, namespaced: bool) -> ErrorList:
    if not rule.verbs:
        return [at.child("verbs").required("verbs must contain at least one value")]
    urls = rule.non_resource_urls or []
    if urls:
        if namespaced:
            detail = "namespaced rules cannot apply to non-resource URLs"
            return [at.child("nonResourceURLs").invalid(urls, detail)]
        if rule.api_groups or rule.resources or rule.resource_names:
            detail = "rules cannot apply to both regular resources and non-resource URLs"
            return [at.child("nonResourceURLs").invalid(urls, detail)]
        return []
    errors: ErrorList = []
    if not rule.api_groups:
        detail = "resource rules must supply at least one api group"
        errors.append(at.child("apiGroups").required(detail))
    if not rule.resources:
        detail = "resource rules must supply at least one resource"
        errors.append(at.child("resources").required(detail))
    return errors


def _validate_binding(request: Request) -> ErrorList:
    binding = request.obj
    ref: RoleRef = binding.role_ref
    at = Path("roleRef")
    errors: ErrorList = []
    if ref.api_group != rbac.GROUP:
        errors.append(at.child("apiGroup").not_supported(ref.api_group, [rbac.GROUP]))
    kinds = [rbac.ROLE, rbac.CLUSTER_ROLE] if request.info.namespaced else [rbac.CLUSTER_ROLE]
    if ref.kind not in kinds:
        errors.append(at.child("kind").not_supported(ref.kind, kinds))
    if not ref.name:
        errors.append(at.child("name").required())
    else:
        errors += [at.child("name").invalid(ref.name, m) for m in is_path_segment_name(ref.name)]
    old = request.old
    if old is not None and old.role_ref != ref:
        errors.append(at.invalid(ref.to_dict(), "cannot change roleRef"))
    for i, subject in enumerate(binding.subjects or []):
        errors += _subject_errors(subject, Path("subjects").index(i), request.info.namespaced)
    return errors


def _subject_errors(subject: Subject, at: Path, namespaced: bool) -> ErrorList:
    errors: ErrorList = []
    if not subject.name:
        errors.append(at.child("name").required())
    if subject.kind == rbac.SERVICE_ACCOUNT:
        if subject.name:
            errors += [
                at.child("name").invalid(subject.name, m)
                for m in is_dns1123_subdomain(subject.name)
            ]
        if subject.api_group:
            errors.append(at.child("apiGroup").not_supported(subject.api_group, [""]))
        if not namespaced and not subject.namespace:
            errors.append(at.child("namespace").required())
    elif subject.kind in (rbac.USER, rbac.GROUP_KIND):
        if subject.api_group != rbac.GROUP:
            errors.append(at.child("apiGroup").not_supported(subject.api_group, [rbac.GROUP]))
    else:
        errors.append(at.child("kind").not_supported(subject.kind, _SUBJECT_KINDS))
    return errors


# --- escalation ---------------------------------------------------------------------------


def _authorize_role(request: Request) -> None:
    role: Role | ClusterRole = request.obj
    if _exempt(request) or _only_gc_fields_changed(request):
        return
    info = request.info
    # The request's name, as RequestInfo has it: none on a create.
    name = role.name if request.old is not None else ""
    escalate = Attributes(
        request.user, "escalate", info.plural, info.group, role.namespace, name,
        api_version="*",
    )  # fmt: skip
    if request.allowed(escalate):
        return
    authorizer = request.authorizer
    assert authorizer is not None  # else every request is allowed
    _confirm_no_escalation(request, authorizer, role.rules or [])
    old_rule = getattr(request.old, "aggregation_rule", None)
    if getattr(role, "aggregation_rule", None) or old_rule:
        owner = authorizer.rules_for(request.user, role.namespace).rules
        if covers(owner, _FULL_AUTHORITY):
            raise _forbidden(
                request, "must have cluster-admin privileges to use the aggregationRule"
            )


def _authorize_binding(request: Request) -> None:
    binding = request.obj
    if _exempt(request) or _only_gc_fields_changed(request):
        return
    ref: RoleRef = binding.role_ref
    resource = "clusterroles" if ref.kind == rbac.CLUSTER_ROLE else "roles"
    bind = Attributes(
        request.user, "bind", resource, ref.api_group, binding.namespace, ref.name,
        api_version="*",
    )  # fmt: skip
    if request.allowed(bind):
        return
    authorizer = request.authorizer
    assert authorizer is not None
    rules = authorizer.role_rules(ref.kind, ref.name, binding.namespace)
    if rules is None:
        raise NotFound(resource, rbac.GROUP, ref.name)
    _confirm_no_escalation(request, authorizer, rules)


def _exempt(request: Request) -> bool:
    """EscalationAllowed: system:masters, or no authorizer to ask (everyone is trusted)."""
    return request.authorizer is None or SYSTEM_MASTERS in request.user.groups


def _confirm_no_escalation(
    request: Request, authorizer: Authorizer, rules: list[PolicyRule]
) -> None:
    owner, errors = authorizer.rules_for(request.user, request.obj.namespace)
    missing = covers(owner, rules)
    if not missing:
        return
    lines = sorted({compact_string(rule) for rule in compact_rules(missing)})
    user = request.user
    message = (
        f"user {json.dumps(user.name)} (groups={go_quoted(user.groups)}) is attempting to "
        "grant RBAC permissions not currently held:\n" + "\n".join(lines)
    )
    if errors:
        message += f"; resolution errors: [{aggregate(errors)}]"
    raise _forbidden(request, message)


def _forbidden(request: Request, detail: str) -> Forbidden:
    return Forbidden(request.info.plural, request.info.group, request.obj.name, detail)


def _only_gc_fields_changed(request: Request) -> bool:
    """IsOnlyMutatingGCFields: an update that touches only ownerReferences and finalizers
    (the garbage collector's) is no grant."""
    if request.old is None:
        return False
    return _without_gc(request.obj.to_dict()) == _without_gc(request.old.to_dict())


def _without_gc(wire: dict[str, Any]) -> dict[str, Any]:
    meta = {
        k: v
        for k, v in (wire.get("metadata") or {}).items()
        if k not in ("ownerReferences", "finalizers", "resourceVersion", "managedFields")
    }
    return {**wire, "metadata": meta}


def _plugins(kind: str, mutate: Any, validate: Any, authorize: Any) -> Plugin:
    return Plugin(
        rbac.API_VERSION, kind, mutate, validate, name_rule=is_path_segment_name,
        authorize=authorize,
    )  # fmt: skip


PLUGINS = [
    _plugins(rbac.ROLE, None, _validate_role, _authorize_role),
    _plugins(rbac.CLUSTER_ROLE, None, _validate_role, _authorize_role),
    _plugins("RoleBinding", _default_binding, _validate_binding, _authorize_binding),
    _plugins("ClusterRoleBinding", _default_binding, _validate_binding, _authorize_binding),
]
