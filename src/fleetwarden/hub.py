"""The hub's controllers: apiextensions-apiserver's for CustomResourceDefinitions, then
Karmada's in the order karmada-controller-manager starts them, then OCM's registration
controllers, placement scheduler and work hub (ManifestWorkReplicaSet) in the order their
hubs do.

Each controller is tagged with the leader-election lock of the upstream binary that runs
it, so that `fleetwarden up` replicas sharing a store run each binary's controllers on
that lock's leader only: karmada-controller-manager, karmada-scheduler, OCM's
registration-controller, placement and work-manager (library-go names their locks after
the component, `<component>-lock`, in the namespace cluster-manager deploys them to), and
kube-controller-manager for the cluster-role aggregation, CSR signing and token cleaning it
runs upstream. apiextensions-apiserver's controllers have no lock: kube-apiserver runs
them in every instance, as every replica here does.

Layer 6: it sits above the controllers and the scheduler (both layer 5), so that the
simulator and `fleetwarden up` run exactly the same set.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from fleetwarden.api.authorization import Authorizer
from fleetwarden.api.karmada.work import ReplicaRequirements, Work
from fleetwarden.api.kinds import KindInfo
from fleetwarden.auth.bootstrap import karmada_policy, kubernetes_policy
from fleetwarden.auth.pki import KeyPair
from fleetwarden.auth.serviceaccounts import ServiceAccountTokens
from fleetwarden.controllers.apiextensions import apiextensions_controllers
from fleetwarden.controllers.certificates.signer import csr_signing_controller
from fleetwarden.controllers.certificates.token_cleaner import token_cleaner_controller
from fleetwarden.controllers.karmada import agent_csr_approving
from fleetwarden.controllers.karmada.application_failover import application_failover_controllers
from fleetwarden.controllers.karmada.binding import (
    cluster_resource_binding_controller,
    resource_binding_controller,
)
from fleetwarden.controllers.karmada.binding_status import (
    cluster_resource_binding_status_controller,
    resource_binding_status_controller,
)
from fleetwarden.controllers.karmada.cluster import cluster_controller
from fleetwarden.controllers.karmada.cluster_status import ClusterStatusController
from fleetwarden.controllers.karmada.cluster_taint_policy import cluster_taint_policy_controller
from fleetwarden.controllers.karmada.detector import detector_controllers
from fleetwarden.controllers.karmada.execution import execution_controller
from fleetwarden.controllers.karmada.graceful_eviction import graceful_eviction_controllers
from fleetwarden.controllers.karmada.region_disruption import region_disruption_controller
from fleetwarden.controllers.karmada.taint_manager import taint_manager_controller
from fleetwarden.controllers.ocm import cluster_rbac as ocm_cluster_rbac
from fleetwarden.controllers.ocm.addon import (
    addon_feature_discovery_controller,
    managed_cluster_addon_health_check_controller,
)
from fleetwarden.controllers.ocm.cluster_set import managed_cluster_set_controller
from fleetwarden.controllers.ocm.cluster_set_binding import managed_cluster_set_binding_controller
from fleetwarden.controllers.ocm.cluster_set_roles import cluster_set_role_controller
from fleetwarden.controllers.ocm.csr import csr_approving_controller
from fleetwarden.controllers.ocm.default_cluster_set import (
    default_managed_cluster_set_controller,
    global_managed_cluster_set_controller,
)
from fleetwarden.controllers.ocm.lease import clock_sync_controller, lease_controller
from fleetwarden.controllers.ocm.managed_cluster import managed_cluster_controller
from fleetwarden.controllers.ocm.manifest_work_replica_set import (
    manifest_work_replica_set_controller,
)
from fleetwarden.controllers.ocm.taint import taint_controller
from fleetwarden.controllers.rbac.aggregation import cluster_role_aggregation_controller
from fleetwarden.controllers.serviceaccounts.tokens import tokens_controller
from fleetwarden.runtime.manager import Controller
from fleetwarden.scheduling.karmada import scheduler_controller
from fleetwarden.scheduling.ocm.scheduling_controller import scheduling_controller
from fleetwarden.semantics.cluster_health import MemberReport, Probe


class Members(Protocol):
    """How the hub reaches member clusters: probing Push ones, removing workloads."""

    def backs(self, name: str) -> bool:
        """Whether a member stands behind the cluster; one that does not is reported
        externally and never timed out."""
        ...

    def probe(self, name: str) -> Probe | None: ...

    def report(self, name: str) -> MemberReport | None: ...

    def delete_workload(self, name: str, work: Work) -> bool: ...

    def estimate_replicas(self, name: str, requirements: ReplicaRequirements | None) -> int | None:
        """The member's karmada-scheduler-estimator; None where it has none."""
        ...


@dataclass(frozen=True)
class Lock:
    """A leader-election lock: the Lease's name, and its namespace (None: Karmada's
    `--leader-elect-resource-namespace`)."""

    name: str
    namespace: str | None = None


# cmd/controller-manager and cmd/scheduler's options.go: ResourceName, in karmada-system.
KARMADA_CONTROLLER_MANAGER = Lock("karmada-controller-manager")
KARMADA_SCHEDULER = Lock("karmada-scheduler")
# OCM's hub binaries run by controllercmd, whose lock is `<component>-lock`.
OCM_HUB_NAMESPACE = "open-cluster-management-hub"
OCM_REGISTRATION = Lock("registration-controller-lock", OCM_HUB_NAMESPACE)
OCM_PLACEMENT = Lock("placement-lock", OCM_HUB_NAMESPACE)
OCM_WORK = Lock("work-manager-lock", OCM_HUB_NAMESPACE)
KUBE_CONTROLLER_MANAGER = Lock("kube-controller-manager", "kube-system")

# A controller and the lock whose leader runs it (None: every replica).
Locked = tuple[Lock | None, Controller]


def _under(lock: Lock | None, controllers: Iterable[Controller]) -> list[Locked]:
    return [(lock, controller) for controller in controllers]


def hub_controllers(
    members: Members, template_kinds: Iterable[KindInfo] = (), *, ocm: bool = True
) -> list[Controller]:
    """Every hub controller; `template_kinds` adds resource kinds the detector must watch
    besides the registered ones (custom resources); `ocm` adds OCM's hub."""
    return [
        controller for _, controller in locked_hub_controllers(members, template_kinds, ocm=ocm)
    ]


def locked_hub_controllers(
    members: Members, template_kinds: Iterable[KindInfo] = (), *, ocm: bool = True
) -> list[Locked]:
    """hub_controllers(), each with its lock."""
    return [
        *_under(None, apiextensions_controllers()),
        (KUBE_CONTROLLER_MANAGER, cluster_role_aggregation_controller()),
        *karmada_controllers(members, template_kinds),
        *(ocm_controllers(members) if ocm else []),
    ]


def by_lock(controllers: Sequence[Locked]) -> dict[Lock | None, list[Controller]]:
    """The controllers of each lock, in their order."""
    groups: dict[Lock | None, list[Controller]] = {}
    for lock, controller in controllers:
        groups.setdefault(lock, []).append(controller)
    return groups


def bootstrap_policy() -> list[dict[str, Any]]:
    """The RBAC policy a hub starts with: Kubernetes' bootstrap roles and bindings,
    Karmada's aggregated roles, and the roles both dialects' agents join with."""
    return [
        *kubernetes_policy(),
        *karmada_policy(),
        *agent_csr_approving.static_policy(),
        *ocm_cluster_rbac.static_policy(),
    ]


def certificate_controllers(ca: KeyPair, authorizer: Authorizer) -> list[Locked]:
    """What answers the agents' CertificateSigningRequests under `fleetwarden up`: Karmada's
    and OCM's approvers, then kube-controller-manager's signer with the hub's CA, and its
    cleaner of the expired bootstrap tokens agents join with."""
    return [
        (
            KARMADA_CONTROLLER_MANAGER,
            agent_csr_approving.agent_csr_approving_controller(authorizer),
        ),
        (OCM_REGISTRATION, csr_approving_controller(authorizer)),
        (KUBE_CONTROLLER_MANAGER, csr_signing_controller(ca)),
        (KUBE_CONTROLLER_MANAGER, token_cleaner_controller()),
    ]


def service_account_controllers(
    tokens: ServiceAccountTokens, root_ca: bytes | None
) -> list[Locked]:
    """kube-controller-manager's writer of legacy tokens into token Secrets, with the CA
    they carry (none where the hub serves plain HTTP)."""
    return [(KUBE_CONTROLLER_MANAGER, tokens_controller(tokens, root_ca))]


def karmada_controllers(members: Members, template_kinds: Iterable[KindInfo]) -> list[Locked]:
    return [
        *_under(KARMADA_CONTROLLER_MANAGER, [
            ClusterStatusController(members.probe, members.report).controller(),
            cluster_controller(members.backs),
            region_disruption_controller(),
            cluster_taint_policy_controller(),
            taint_manager_controller(),
            *detector_controllers(template_kinds),
        ]),
        (KARMADA_SCHEDULER, scheduler_controller(estimator=members.estimate_replicas)),
        *_under(KARMADA_CONTROLLER_MANAGER, [
            resource_binding_controller(),
            cluster_resource_binding_controller(),
            execution_controller(members.delete_workload),
            resource_binding_status_controller(),
            cluster_resource_binding_status_controller(),
            *graceful_eviction_controllers(),
            *application_failover_controllers(),
        ]),
    ]  # fmt: skip


def ocm_controllers(members: Members) -> list[Locked]:
    """The registration hub's controllers, the placement controller, then the work hub's
    ManifestWorkReplicaSet controller."""
    return [
        *_under(OCM_REGISTRATION, [
            managed_cluster_controller(),
            taint_controller(),
            lease_controller(members.backs),
            clock_sync_controller(),
            managed_cluster_set_controller(),
            managed_cluster_set_binding_controller(),
            default_managed_cluster_set_controller(),
            global_managed_cluster_set_controller(),
            cluster_set_role_controller(),
            managed_cluster_addon_health_check_controller(),
            addon_feature_discovery_controller(),
        ]),
        (OCM_PLACEMENT, scheduling_controller()),
        (OCM_WORK, manifest_work_replica_set_controller()),
    ]  # fmt: skip
