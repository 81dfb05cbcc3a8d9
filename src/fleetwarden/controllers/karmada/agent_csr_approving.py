"""karmada-controller-manager's agentcsrapproving controller: a CertificateSigningRequest
for a karmada-agent client certificate (CN `system:karmada:agent:<cluster>`, O exactly
`system:karmada:agents`, no SANs, client usages) is approved when its requester may
`create` the virtual subresource `certificatesigningrequests/clusteragent` (a bootstrap
token's group may), or `selfclusteragent` for a renewal by the agent itself.

What `karmadactl register` then does with its rbac-generator identity, the hub does here as
it approves: it grants the agent the rights register grants it (the ClusterRole
`system:karmada:<cluster>:agent` and the Roles of its execution space and of
karmada-cluster's secrets). Upstream gives that generator identity every right, to anyone
holding a bootstrap token; fleetwarden issues it to nobody.
"""

from __future__ import annotations

import base64
import contextlib
import logging
from typing import Any

from fleetwarden.admission.karmada.cluster import validate_cluster_name
from fleetwarden.api import rbac
from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.authorization import Attributes, Authorizer
from fleetwarden.api.certificates import (
    APPROVED,
    CSR,
    DENIED,
    KUBE_APISERVER_CLIENT_SIGNER,
    CertificateSigningRequest,
)
from fleetwarden.api.errors import AlreadyExists
from fleetwarden.api.karmada.cluster import AGENT_BOOTSTRAP_GROUP, AGENT_USER_PREFIX, AGENTS_GROUP
from fleetwarden.api.registry import REGISTRY
from fleetwarden.auth.bootstrap import (
    READ,
    cluster_role,
    cluster_role_binding,
    group,
    rule,
    user,
)
from fleetwarden.controllers.certificates.approval import approve
from fleetwarden.controllers.karmada.names import (
    NAMESPACE_KARMADA_CLUSTER,
    generate_execution_space_name,
)
from fleetwarden.controllers.rbac.apply import apply
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.semantics.certificates import CertificateRequest, parse_certificate_request

logger = logging.getLogger(__name__)

CONTROLLER = "agent-csr-approving-controller"
NAMESPACE = REGISTRY.info("v1", "Namespace")
_USAGES = ({"digital signature", "key encipherment", "client auth"},
           {"digital signature", "client auth"})  # fmt: skip
# (subresource the requester must be allowed to create, approval message), self first.
_SELF = (
    "selfclusteragent",
    "Auto approving self karmada agent certificate after SubjectAccessReview.",
)
_BOOTSTRAP = ("clusteragent", "Auto approving karmada agent certificate after SubjectAccessReview.")

Obj = dict[str, Any]


def agent_csr_approving_controller(authorizer: Authorizer) -> Controller:
    def reconcile(key: str, ctx: Context) -> Result:
        csr = ctx.cache.informer(CSR).get(key)
        if not isinstance(csr, CertificateSigningRequest) or not _pending(csr):
            return DONE
        request = _agent_request(csr)
        if request is None:
            return DONE
        kinds = [_SELF, _BOOTSTRAP] if csr.spec.username == request.common_name else [_BOOTSTRAP]
        for subresource, message in kinds:
            if _may_create(authorizer, csr.requester, subresource):
                cluster = request.common_name.removeprefix(AGENT_USER_PREFIX)
                _grant_agent_rights(ctx, cluster)
                approve(ctx, csr, "AutoApproved", message)
                return DONE
        logger.info("CSR %s is an agent's, but its requester may not have it approved", key)
        return DONE

    return Controller(name=CONTROLLER, watches=[Watches(CSR)], reconcile=reconcile)


def _pending(csr: CertificateSigningRequest) -> bool:
    return not csr.status.certificate and not (
        csr.has_condition(APPROVED) or csr.has_condition(DENIED)
    )


def _agent_request(csr: CertificateSigningRequest) -> CertificateRequest | None:
    """ValidateAgentCSR: the request, if it is a karmada-agent's."""
    if csr.spec.signer_name != KUBE_APISERVER_CLIENT_SIGNER:
        return None
    if set(csr.spec.usages or []) not in _USAGES:
        return None
    try:
        request = parse_certificate_request(base64.b64decode(csr.spec.request))
    except ValueError:
        return None
    if request.organizations != (AGENTS_GROUP,) or request.has_alternative_names:
        return None
    cluster = request.common_name.removeprefix(AGENT_USER_PREFIX)
    if not request.common_name.startswith(AGENT_USER_PREFIX) or validate_cluster_name(cluster):
        return None  # the name would become a namespace and role names: a cluster's only
    return request


def _may_create(authorizer: Authorizer, requester: UserInfo, subresource: str) -> bool:
    attributes = Attributes(
        requester, "create", CSR.plural, CSR.group, subresource=subresource, api_version="*"
    )
    return authorizer.authorize(attributes).allowed


def _grant_agent_rights(ctx: Context, cluster: str) -> None:
    space = generate_execution_space_name(cluster)
    if ctx.cache.informer(NAMESPACE).get(space) is None:
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": space}}
        with contextlib.suppress(AlreadyExists):  # the cluster controller made it meanwhile
            ctx.store.create(namespace)
    for obj in agent_rbac(cluster):
        apply(ctx, obj)


def static_policy() -> list[Obj]:
    """What Karmada's bootstrap-token configuration grants: bootstrap tokens of its group
    may ask for certificates and have agent ones approved; agents may renew their own."""
    autoapprover = "system:karmada:certificatesigningrequest:autoapprover"
    selfautoapprover = "system:karmada:certificatesigningrequest:selfautoapprover"
    return [
        cluster_role_binding(
            "system:karmada:agent-bootstrap",
            [group(AGENT_BOOTSTRAP_GROUP)],
            "system:node-bootstrapper",
        ),
        cluster_role(
            autoapprover,
            [rule([CSR.group], ["certificatesigningrequests/clusteragent"], ["create"])],
        ),
        cluster_role_binding(
            "system:karmada:agent-autoapprove-bootstrap",
            [group(AGENT_BOOTSTRAP_GROUP)],
            autoapprover,
        ),
        cluster_role(
            selfautoapprover,
            [rule([CSR.group], ["certificatesigningrequests/selfclusteragent"], ["create"])],
        ),
        cluster_role_binding(
            "system:karmada:agent-autoapprove-certificate-rotation",
            [group(AGENTS_GROUP)],
            selfautoapprover,
        ),
    ]


def agent_rbac(cluster: str) -> list[Obj]:
    """karmadactl register's GenerateRBACResources for the cluster's agent."""
    name = f"system:karmada:{cluster}:agent"
    subject = [user(AGENT_USER_PREFIX + cluster)]
    role = cluster_role(
        name,
        [
            rule(["cluster.karmada.io"], ["clusters"], ["get", "delete"], [cluster]),
            rule(["cluster.karmada.io"], ["clusters"], ["create", "list", "watch"]),
            rule(["cluster.karmada.io"], ["clusters/status"], ["update"], [cluster]),
            rule(
                ["config.karmada.io"],
                ["resourceinterpreterwebhookconfigurations", "resourceinterpretercustomizations"],
                READ,
            ),
            rule([""], ["namespaces"], ["get"]),
            rule(["coordination.k8s.io"], ["leases"], ["get", "create", "update"]),
            rule(["certificates.k8s.io"], ["certificatesigningrequests"], ["get", "create"]),
            rule([""], ["services"], ["list", "watch"]),
            rule([""], ["events"], ["patch", "create", "update"]),
        ],
    )
    secrets = _role(
        f"{name}-secret", NAMESPACE_KARMADA_CLUSTER,
        [
            rule([""], ["secrets"], ["get", "patch"], [cluster, f"{cluster}-impersonator"]),
            rule([""], ["secrets"], ["create"]),
        ],
    )  # fmt: skip
    works = _role(
        f"{name}-work", generate_execution_space_name(cluster),
        [
            rule(["work.karmada.io"], ["works"], [*READ, "create", "update", "delete"]),
            rule(["work.karmada.io"], ["works/status"], ["patch", "update"]),
        ],
    )  # fmt: skip
    return [
        _plain(role),
        _plain(cluster_role_binding(name, subject)),
        secrets,
        _role_binding(secrets, subject),
        works,
        _role_binding(works, subject),
    ]


def _role(name: str, namespace: str, rules: list[Obj]) -> Obj:
    return {
        "apiVersion": rbac.API_VERSION,
        "kind": rbac.ROLE,
        "metadata": {"name": name, "namespace": namespace},
        "rules": rules,
    }


def _role_binding(role: Obj, subjects: list[Obj]) -> Obj:
    meta = role["metadata"]
    return {
        "apiVersion": rbac.API_VERSION,
        "kind": rbac.ROLE_BINDING_KIND.kind,
        "metadata": dict(meta),
        "roleRef": {"apiGroup": rbac.GROUP, "kind": rbac.ROLE, "name": meta["name"]},
        "subjects": subjects,
    }


def _plain(obj: Obj) -> Obj:
    """Without the bootstrap policy's marks: these are the agent's, not the hub's."""
    return {**obj, "metadata": {"name": obj["metadata"]["name"]}}
