"""The kubernetes.io/kube-apiserver-client signer (kube-controller-manager's csrsigning
controller): an approved request, not failed and not yet signed, gets a client certificate
from the hub's CA, for --cluster-signing-duration or the shorter expirationSeconds it asks
(never under 10 minutes). A request for usages a client certificate may not have fails,
with the reason in a Failed condition."""

from __future__ import annotations

import base64
from datetime import timedelta

from fleetwarden.api.certificates import (
    CLIENT_USAGES,
    CSR,
    FAILED,
    KUBE_APISERVER_CLIENT_SIGNER,
    CertificateSigningRequest,
)
from fleetwarden.api.meta import format_time
from fleetwarden.auth.pki import KeyPair, sign_request
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.semantics.certificates import parse_certificate_request

CONTROLLER = "csrsigning"
# kube-controller-manager's --cluster-signing-duration default.
SIGNING_DURATION = timedelta(days=365)
MIN_DURATION = timedelta(minutes=10)


def csr_signing_controller(ca: KeyPair, duration: timedelta = SIGNING_DURATION) -> Controller:
    def reconcile(key: str, ctx: Context) -> Result:
        csr = ctx.cache.informer(CSR).get(key)
        if not isinstance(csr, CertificateSigningRequest) or not _due(csr):
            return DONE
        status = csr.to_dict().get("status") or {}
        problem = _usage_problem(csr.spec.usages or [])
        if problem:
            failure = {
                "type": FAILED, "status": "True", "reason": "SignerValidationFailure",
                "message": problem, "lastUpdateTime": format_time(ctx.clock.now()),
            }  # fmt: skip
            status["conditions"] = [*status.get("conditions", []), failure]
        else:
            request = parse_certificate_request(base64.b64decode(csr.spec.request))
            pem = sign_request(ca, request, ctx.clock.now(), _duration(csr, duration))
            status["certificate"] = base64.b64encode(pem).decode()
        ctx.store.update({**csr.to_dict(), "status": status}, subresource="status")
        return DONE

    return Controller(name=CONTROLLER, watches=[Watches(CSR)], reconcile=reconcile)


def _due(csr: CertificateSigningRequest) -> bool:
    return (
        csr.spec.signer_name == KUBE_APISERVER_CLIENT_SIGNER
        and csr.approved
        and not csr.has_condition(FAILED)
        and not csr.status.certificate
    )


def _usage_problem(usages: list[str]) -> str:
    for usage in usages:
        if usage not in CLIENT_USAGES:
            return f"invalid usage for client certificate: {usage}"
    if "client auth" not in usages:
        return "missing required usage for client certificate: client auth"
    return ""


def _duration(csr: CertificateSigningRequest, default: timedelta) -> timedelta:
    seconds = csr.spec.expiration_seconds
    if seconds is None:
        return default
    return min(default, max(MIN_DURATION, timedelta(seconds=seconds)))
