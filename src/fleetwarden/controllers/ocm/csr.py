"""The registration hub's CSR approving controller (ocm pkg/registration/register/csr): an
agent's request to renew its own client certificate (requested as the very identity it
asks for) is approved when that identity may `renew` managedclusters/clientcertificates,
which an accepted cluster's role grants. A first request is approved by an administrator
accepting the cluster (`fleetwarden accept`, as `clusteradm accept`).

A request counts as a registration agent's when its `open-cluster-management.io/cluster-name`
label, its subject's organizations (`system:open-cluster-management:<cluster>`, and the
optional `...:managed-clusters`) and its common name
(`system:open-cluster-management:<cluster>:<agent>`) agree.
"""

from __future__ import annotations

import base64

from fleetwarden.api.authorization import Attributes, Authorizer
from fleetwarden.api.certificates import (
    APPROVED,
    CSR,
    DENIED,
    KUBE_APISERVER_CLIENT_SIGNER,
    CertificateSigningRequest,
)
from fleetwarden.api.ocm.cluster import (
    AGENT_GROUP_PREFIX,
    CLUSTER_NAME_LABEL,
    MANAGED_CLUSTERS_GROUP,
    REGISTER_GROUP,
)
from fleetwarden.controllers.certificates.approval import approve
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.semantics.certificates import parse_certificate_request

CONTROLLER = "CSRApprovingController"
REASON = "AutoApprovedByHubCSRApprovingController"
MESSAGE = "Auto approving Managed cluster agent certificate after SubjectAccessReview."


def csr_approving_controller(authorizer: Authorizer) -> Controller:
    def reconcile(key: str, ctx: Context) -> Result:
        csr = ctx.cache.informer(CSR).get(key)
        if not isinstance(csr, CertificateSigningRequest) or not is_agent_request(csr):
            return DONE
        if csr.has_condition(APPROVED) or csr.has_condition(DENIED):
            return DONE
        if _renewal_allowed(csr, authorizer):
            approve(ctx, csr, REASON, MESSAGE)
        return DONE

    return Controller(name=CONTROLLER, watches=[Watches(CSR)], reconcile=reconcile)


def is_agent_request(csr: CertificateSigningRequest) -> bool:
    """validateCSR: a registration agent's request for the cluster its label names."""
    cluster = (csr.metadata.labels or {}).get(CLUSTER_NAME_LABEL)
    if not cluster or csr.spec.signer_name != KUBE_APISERVER_CLIENT_SIGNER:
        return False
    try:
        request = parse_certificate_request(base64.b64decode(csr.spec.request))
    except ValueError:
        return False
    organizations = set(request.organizations) - {MANAGED_CLUSTERS_GROUP}
    if organizations != {AGENT_GROUP_PREFIX + cluster}:
        return False
    parts = request.common_name.removeprefix(AGENT_GROUP_PREFIX).split(":")
    return (
        request.common_name.startswith(AGENT_GROUP_PREFIX)
        and len(parts) == 2
        and all(parts)
        and parts[0] == cluster
    )


def _renewal_allowed(csr: CertificateSigningRequest, authorizer: Authorizer) -> bool:
    request = parse_certificate_request(base64.b64decode(csr.spec.request))
    if csr.spec.username != request.common_name:
        return False  # not the agent renewing its own certificate
    renew = Attributes(
        csr.requester, "renew", "managedclusters", REGISTER_GROUP, subresource="clientcertificates"
    )
    return authorizer.authorize(renew).allowed
