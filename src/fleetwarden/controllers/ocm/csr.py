"""The registration hub's CSR approving controller (ocm pkg/registration/register/csr): an
agent's request to renew its own client certificate (requested as the very identity it
asks for) is approved when that identity may `renew` managedclusters/clientcertificates,
which an accepted cluster's role grants. A first request is approved by an administrator
accepting the cluster (`fleetwarden accept`, as `clusteradm accept`).

A request counts as a registration agent's as semantics.certificates.ocm_agent_request
says: its cluster-name label, its subject's organizations and its common name agree.
"""

from __future__ import annotations

from fleetwarden.api.authorization import Attributes, Authorizer
from fleetwarden.api.certificates import APPROVED, CSR, DENIED, CertificateSigningRequest
from fleetwarden.api.ocm.cluster import REGISTER_GROUP
from fleetwarden.controllers.certificates.approval import approve
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.semantics.certificates import CertificateRequest, ocm_agent_request

CONTROLLER = "CSRApprovingController"
REASON = "AutoApprovedByHubCSRApprovingController"
MESSAGE = "Auto approving Managed cluster agent certificate after SubjectAccessReview."


def csr_approving_controller(authorizer: Authorizer) -> Controller:
    def reconcile(key: str, ctx: Context) -> Result:
        csr = ctx.cache.informer(CSR).get(key)
        if not isinstance(csr, CertificateSigningRequest):
            return DONE
        if csr.has_condition(APPROVED) or csr.has_condition(DENIED):
            return DONE
        request = ocm_agent_request(csr)
        if request is not None and _renewal_allowed(csr, request, authorizer):
            approve(ctx, csr, REASON, MESSAGE)
        return DONE

    return Controller(name=CONTROLLER, watches=[Watches(CSR)], reconcile=reconcile)


def _renewal_allowed(
    csr: CertificateSigningRequest, request: CertificateRequest, authorizer: Authorizer
) -> bool:
    if csr.spec.username != request.common_name:
        return False  # not the agent renewing its own certificate
    renew = Attributes(
        csr.requester, "renew", "managedclusters", REGISTER_GROUP, subresource="clientcertificates"
    )
    return authorizer.authorize(renew).allowed
