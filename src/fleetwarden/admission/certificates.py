"""CertificateSigningRequest, as kube-apiserver admits it: the requester's identity written
into the spec on create (never taken from the body), the spec frozen afterwards, approval
only through /approval by whoever may `approve` for the signer, a certificate only through
/status by whoever may `sign` for it, and the request a valid PEM CERTIFICATE REQUEST.

Upstream: pkg/registry/certificates/certificates/strategy.go,
pkg/apis/certificates/validation/validation.go, plugin/pkg/admission/certificates/.
"""

from __future__ import annotations

import base64
import binascii
import json

from fleetwarden.admission.chain import Plugin, Request
from fleetwarden.api.authentication import SYSTEM_MASTERS
from fleetwarden.api.authorization import Attributes
from fleetwarden.api.certificates import (
    APPROVED,
    CSR,
    DENIED,
    FAILED,
    KEY_USAGES,
    KUBE_APISERVER_CLIENT_SIGNER,
    CertificateSigningRequest,
    CertificateSigningRequestCondition,
    CertificateSigningRequestStatus,
)
from fleetwarden.api.errors import ErrorList, Forbidden, Path
from fleetwarden.semantics.certificates import certificate_problem, parse_certificate_request
from fleetwarden.semantics.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_path_segment_name,
)

_SPEC = Path("spec")
_CONDITIONS = Path("status").child("conditions")
# Conditions only /approval adds, and that no update removes.
_APPROVAL = (APPROVED, DENIED)
_KEPT = (APPROVED, DENIED, FAILED)
MIN_EXPIRATION_SECONDS = 600


def _mutate(request: Request) -> None:
    csr = request.of(CertificateSigningRequest)
    old = request.old
    if not isinstance(old, CertificateSigningRequest):
        user = request.user
        csr.spec.username, csr.spec.uid = user.name, user.uid or None
        csr.spec.groups = list(user.groups) or None
        csr.spec.extra = {k: list(v) for k, v in user.extra} or None
        csr.status = CertificateSigningRequestStatus(conditions=[])
        return
    csr.spec = old.spec.model_copy(deep=True)
    if request.subresource is None:
        csr.status = old.status.model_copy(deep=True)
    elif request.subresource == "approval":  # only the conditions change there
        status = old.status.model_copy(deep=True)
        status.conditions = csr.status.conditions
        csr.status = status
    _stamp_conditions(csr, old, request)


def _stamp_conditions(
    csr: CertificateSigningRequest, old: CertificateSigningRequest, request: Request
) -> None:
    """populateConditionTimestamps: a condition's times are the server's to fill in."""
    now = request.now.replace(microsecond=0)
    before = {(c.type, c.status): c for c in old.status.conditions or []}
    for condition in csr.status.conditions or []:
        condition.last_update_time = condition.last_update_time or now
        if condition.last_transition_time is None:
            prior = before.get((condition.type, condition.status))
            condition.last_transition_time = (prior.last_transition_time if prior else None) or now


def _validate(request: Request) -> ErrorList:
    csr = request.of(CertificateSigningRequest)
    old = request.old if isinstance(request.old, CertificateSigningRequest) else None
    errors = _request_errors(csr.spec.request)
    errors += _usage_errors(csr.spec.usages or [], old)
    errors += _signer_errors(csr.spec.signer_name)
    seconds = csr.spec.expiration_seconds
    if seconds is not None and seconds < MIN_EXPIRATION_SECONDS:
        errors.append(
            _SPEC.child("expirationSeconds").invalid(
                seconds, "may not specify a duration less than 600 seconds (10 minutes)"
            )
        )
    errors += _condition_errors(csr.status.conditions or [])
    if old is not None:
        errors += _update_errors(csr, old, request.subresource)
    return errors


def _request_errors(encoded: str) -> ErrorList:
    at = _SPEC.child("request")
    try:
        pem = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return [at.invalid(encoded, "must be base64 encoded")]
    if b"-----BEGIN CERTIFICATE REQUEST-----" not in pem:
        return [at.invalid(encoded, "PEM block type must be CERTIFICATE REQUEST")]
    try:
        parse_certificate_request(pem)
    except ValueError as exc:
        return [at.invalid(encoded, str(exc))]
    return []


def _usage_errors(usages: list[str], old: CertificateSigningRequest | None) -> ErrorList:
    at = _SPEC.child("usages")
    if not usages:
        return [at.required()]
    errors: ErrorList = []
    seen: set[str] = set()
    for i, usage in enumerate(usages):
        if usage not in KEY_USAGES:
            errors.append(at.index(i).not_supported(usage, KEY_USAGES))
    for i, usage in enumerate(usages):
        if usage in seen and not (old and (old.spec.usages or []).count(usage) > 1):
            errors.append(at.index(i).duplicate(usage))
        seen.add(usage)
    return errors


def _signer_errors(signer: str) -> ErrorList:
    """ValidateSignerName: `<domain>/<path>`, the domain a DNS name of two labels or more."""
    at = _SPEC.child("signerName")
    if not signer:
        return [at.required()]
    if signer == "kubernetes.io/legacy-unknown":
        return [at.invalid(signer, "the legacy signerName is not allowed via this API version")]
    if signer.count("/") != 1:
        form = "must be a fully qualified domain and path of the form 'example.com/signer-name'"
        return [at.invalid(signer, form)]
    domain, path = signer.split("/")
    errors: ErrorList = []
    if len(domain) > 253:
        errors.append(at.too_long(253))
    labels = domain.split(".")
    for label in labels:  # the first bad label is reported
        messages = is_dns1123_label(label)
        if messages:
            errors.append(at.invalid(domain, f'validating label "{label}": {messages[0]}'))
            break
    if len(labels) < 2:
        message = "should be a domain with at least two segments separated by dots"
        errors.append(at.invalid(domain, message))
    for part in path.split("."):
        for message in is_dns1123_subdomain(part):
            errors.append(at.invalid(path, f'validating label "{part}": {message}'))
    if len(signer) > 571:
        errors.append(at.too_long(571))
    return errors


def _condition_errors(conditions: list[CertificateSigningRequestCondition]) -> ErrorList:
    errors: ErrorList = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        at = _CONDITIONS.index(i)
        if not condition.type:
            errors.append(at.child("type").required())
        if not condition.status:
            errors.append(at.child("status").required())
        elif condition.type in _KEPT and condition.status != "True":
            errors.append(at.child("status").not_supported(condition.status, ["True"]))
        elif condition.status not in ("False", "True", "Unknown"):
            supported = ["False", "True", "Unknown"]
            errors.append(at.child("status").not_supported(condition.status, supported))
        if condition.type in seen:
            errors.append(at.child("type").duplicate(condition.type))
        elif {condition.type} | seen >= set(_APPROVAL):
            message = "Approved and Denied conditions are mutually exclusive"
            errors.append(at.child("type").invalid(condition.type, message))
        seen.add(condition.type)
    return errors


def _update_errors(
    csr: CertificateSigningRequest, old: CertificateSigningRequest, subresource: str | None
) -> ErrorList:
    errors: ErrorList = []
    new_types = [c.type for c in csr.status.conditions or []]
    for kind in _KEPT:
        if old.has_condition(kind) and kind not in new_types:
            detail = f"updates may not remove a condition of type {json.dumps(kind)}"
            errors.append(_CONDITIONS.forbidden(detail))
    if subresource != "approval":
        before = {c.type: c for c in old.status.conditions or []}
        for condition in csr.status.conditions or []:
            if condition.type not in _APPROVAL:
                continue
            prior = before.get(condition.type)
            if prior is None:
                detail = f"updates may not add a condition of type {json.dumps(condition.type)}"
                errors.append(_CONDITIONS.forbidden(detail))
            elif (prior.status, prior.reason, prior.message) != (
                condition.status, condition.reason, condition.message,
            ):  # fmt: skip
                detail = f"updates may not modify a condition of type {json.dumps(condition.type)}"
                errors.append(_CONDITIONS.forbidden(detail))
    certificate, before_cert = csr.status.certificate or "", old.status.certificate or ""
    if certificate != before_cert:
        errors += _certificate_change_errors(certificate, before_cert, subresource)
    return errors


def _certificate_change_errors(certificate: str, before: str, subresource: str | None) -> ErrorList:
    at = Path("status").child("certificate")
    if subresource != "status":
        return [at.forbidden("updates may not set certificate content")]
    if before:
        return [at.forbidden("updates may not modify existing certificate content")]
    if not certificate:
        return []
    try:
        problem = certificate_problem(base64.b64decode(certificate, validate=True))
    except (binascii.Error, ValueError):
        problem = "must be base64 encoded"
    return [at.invalid("<certificate data>", problem)] if problem else []


def _authorize(request: Request) -> None:
    """CertificateApproval on /approval, CertificateSigning on /status: the sender must be
    allowed to `approve` (or `sign`) for the signer, by name or as `<domain>/*`."""
    old = request.old
    csr = request.of(CertificateSigningRequest)
    if not isinstance(old, CertificateSigningRequest):
        _restrict_subject(csr)
        return
    if request.subresource == "approval":
        verb = "approve"
    elif request.subresource == "status" and (
        csr.status.certificate != old.status.certificate
        or csr.status.conditions != old.status.conditions
    ):
        verb = "sign"
    else:
        return
    signer = old.spec.signer_name
    domain = signer.split("/", 1)[0]
    for name in (signer, f"{domain}/*"):
        attributes = Attributes(
            request.user, verb, "signers", CSR.group, name=name, api_version="*"
        )
        if request.allowed(attributes):
            return
    raise Forbidden(
        CSR.plural, CSR.group, csr.name,
        f"user not permitted to {verb} requests with signerName {json.dumps(signer)}",
    )  # fmt: skip


def _restrict_subject(csr: CertificateSigningRequest) -> None:
    """CertificateSubjectRestriction: nobody asks the client signer for system:masters."""
    if csr.spec.signer_name != KUBE_APISERVER_CLIENT_SIGNER:
        return
    request = parse_certificate_request(base64.b64decode(csr.spec.request))
    if SYSTEM_MASTERS in request.organizations:
        raise Forbidden(
            CSR.plural, CSR.group, csr.name,
            f"use of {KUBE_APISERVER_CLIENT_SIGNER} signer with {SYSTEM_MASTERS} group is not "
            "allowed",
        )  # fmt: skip


PLUGINS = [
    Plugin(
        CSR.api_version,
        CSR.kind,
        _mutate,
        _validate,
        name_rule=is_path_segment_name,
        authorize=_authorize,
    )
]
