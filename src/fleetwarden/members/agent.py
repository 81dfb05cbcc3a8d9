"""A member agent in a process of its own (`fleetwarden agent`), talking to the hub over HTTP.

The member is simulated in this process, or a real cluster (members/kube.py); either way
its agents are the very controller the simulator runs (members/simulated.py), here under
the real-time driver over the hub's API (members/remote.py):

- Pull mode, as karmada-agent: registers a Pull Cluster, renews its Lease in
  `karmada-cluster` every cluster-lease-duration × cluster-lease-renew-interval-fraction,
  reports Ready, the version, enabled APIs and resources every
  cluster-status-update-frequency (with the success and failure thresholds), applies the
  Works of its execution space `karmada-es-<name>` and reports their status and health.
  As karmada-agent's execution controller, it removes a deleted Work's workload from the
  member, then the Work's finalizer (the hub's execution controller leaves Pull clusters
  to their agents), and drops the workload of a Work gone without it.
- Push mode, as a member joined by `karmadactl join`: registers a Push Cluster whose
  spec.apiEndpoint is the endpoint this process serves (members/endpoint.py); the hub
  probes it and writes the Cluster's status, and removes workloads through it. Works are
  applied and reported from here as in Pull mode: the member's side either way.
- OCM mode, as the klusterlet's registration agent: creates its ManagedCluster when the hub
  has none (spec.hubAcceptsClient false, as an agent cannot accept itself: an admin sets it,
  or `OcmJoin.accept` plays that admin), waits for HubAcceptedManagedCluster, then renews
  `managed-cluster-lease` and reports Joined, Available, resources, version and the
  member's cluster claims; and, as the klusterlet's work agent, applies the ManifestWorks
  of its cluster's namespace to the member (members/work_agent.py): a real member
  (`--member-kubeconfig`) gets the AppliedManifestWork CRD, as the klusterlet installs it.

A simulated member given nodes runs its workloads' pods on them (members/inside/), and with
a MemberApiStore publishes its objects there and takes users' Node and Pod edits from it,
for the member's own API server (cli/member_api.py).

A simulated member serves the built-in Kubernetes APIs (Deployments, Services, ...), and
every kind the hub's CustomResourceDefinitions serve, as if each CRD applied to the hub
were installed on the member too: so the scheduler's APIEnablement filter lets custom
resources through to it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fleetwarden.api.errors import AlreadyExists, StatusError
from fleetwarden.api.karmada.cluster import SYNC_MODE_PULL, SYNC_MODE_PUSH, APIEnablement
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import BUILTIN_TEMPLATE_KINDS, CORE_KINDS, REGISTRY
from fleetwarden.client.client import Client
from fleetwarden.client.discovery import Discovery
from fleetwarden.client.errors import ClientError
from fleetwarden.members.endpoint import Member, MemberEndpoint
from fleetwarden.members.inside.api_store import MemberApiStore
from fleetwarden.members.inside.nodes import NodeSpec
from fleetwarden.members.remote import RemoteStore, View
from fleetwarden.members.simulated import (
    CLUSTER,
    EXECUTION_SPACE_PREFIX,
    MANAGED_CLUSTER,
    MANIFEST_WORK,
    WORK,
    MemberAgents,
    MemberCluster,
    MemberState,
    Registration,
    RunningMembers,
    SimulatedCluster,
    api_enablements,
    pull_cluster,
)
from fleetwarden.runtime.clock import RealClock
from fleetwarden.runtime.manager import ControllerManager, RealDriver
from fleetwarden.runtime.settings import Settings
from fleetwarden.semantics.cluster_health import MemberReport

logger = logging.getLogger(__name__)

MODE_OCM = "OCM"
# The registration agent's name in its identity (its certificate's CN ends with it).
OCM_AGENT_NAME = "registration-agent"
MODES = (SYNC_MODE_PULL, SYNC_MODE_PUSH, MODE_OCM)
MEMBER_KINDS = (*CORE_KINDS, *BUILTIN_TEMPLATE_KINDS)


def simulated_member(
    cluster_claims: Mapping[str, str] | None = None, hub: Client | None = None, nodes: int = 0
) -> SimulatedCluster:
    """A simulated member serving the built-in APIs, and with `hub` the kinds the hub's
    CRDs serve, with the ClusterClaims given; with `nodes`, that many nodes (node1..N, of
    the default allocatable) run its workloads' pods."""
    specs = tuple(NodeSpec(f"node{i}") for i in range(1, nodes + 1)) if nodes else None
    state = MemberState(cluster_claims=dict(cluster_claims or {}), nodes=specs)
    if hub is None:
        return SimulatedCluster(state, _enablements(MEMBER_KINDS))
    return HubMirroringCluster(state, _enablements(MEMBER_KINDS), custom_kinds=HubCustomKinds(hub))


def _enablements(kinds: Sequence[KindInfo]) -> list[APIEnablement]:
    return api_enablements((info.api_version, info.plural, info.kind) for info in kinds)


class HubCustomKinds:
    """The kinds a hub serves besides the registered ones (its CRDs'), read from its
    discovery each time asked (any authenticated user may read it, an agent too); while
    the hub cannot be read, those read last."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._kinds: list[KindInfo] = []

    def __call__(self) -> list[KindInfo]:
        try:
            served = Discovery(self.client.get_json).kinds()
        except (ClientError, StatusError) as exc:
            logger.info("reading the hub's discovery: %s", exc)
            return self._kinds
        self._kinds = [i for i in served if REGISTRY.get(i.api_version, i.kind) is None]
        return self._kinds


@dataclass
class HubMirroringCluster(SimulatedCluster):
    """A simulated member that serves, besides its own APIs, the hub's custom kinds."""

    custom_kinds: Callable[[], list[KindInfo]] = field(default=list)

    def report(self) -> MemberReport:
        own = self.api_enablements
        custom = _enablements(self.custom_kinds())
        return replace(super().report(), api_enablements=_merged(own, custom))


def _merged(*enablements: list[APIEnablement]) -> list[APIEnablement]:
    """The APIs of several lists in one, in api_enablements' order."""
    return api_enablements(
        (enablement.group_version, resource.name, resource.kind)
        for listed in enablements
        for enablement in listed
        for resource in enablement.resources or ()
    )


@dataclass(frozen=True)
class OcmJoin:
    """What the registration agent puts in the ManagedCluster it creates: the klusterlet's
    --spoke-external-server-urls as spec.managedClusterClientConfigs; here also
    spec.leaseDurationSeconds (else the hub's default, 60), and spec.hubAcceptsClient when
    `accept` plays the admin who accepts the cluster (or the hub's auto-approval)."""

    accept: bool = False
    lease_duration_seconds: int | None = None
    external_server_urls: Sequence[str] = ()

    def create_managed_cluster(self, name: str) -> Callable[[Client], None]:
        """What the registration agent does with its bootstrap identity while it waits to
        be accepted: create its ManagedCluster (unaccepted), unless the hub has it."""

        def create(client: Client) -> None:
            with contextlib.suppress(AlreadyExists):
                client.create(self.managed_cluster(name), info=MANAGED_CLUSTER)

        return create

    def managed_cluster(self, name: str) -> dict[str, Any]:
        spec: dict[str, Any] = {"hubAcceptsClient": self.accept}
        if self.lease_duration_seconds is not None:
            spec["leaseDurationSeconds"] = self.lease_duration_seconds
        if self.external_server_urls:
            spec["managedClusterClientConfigs"] = [{"url": u} for u in self.external_server_urls]
        return {
            "apiVersion": MANAGED_CLUSTER.api_version,
            "kind": MANAGED_CLUSTER.kind,
            "metadata": {"name": name},
            "spec": spec,
        }


def _scope(mode: str, name: str) -> dict[KindInfo, View]:
    """What an agent reads of the hub: its own cluster, and the Works of its execution space
    (Karmada) or the ManifestWorks of its cluster's namespace (OCM); nothing its identity
    may not read (members/bootstrap.py, controllers/ocm/cluster_rbac.py)."""
    if mode == MODE_OCM:
        return {MANAGED_CLUSTER: View(name=name), MANIFEST_WORK: View(namespace=name)}
    return {CLUSTER: View(name=name), WORK: View(namespace=EXECUTION_SPACE_PREFIX + name)}


class Agent:
    """One member and its agents; start() joins the fleet, stop() leaves the hub alone.
    The member is simulated unless one is given."""

    def __init__(
        self,
        client: Client,
        name: str,
        settings: Settings,
        *,
        mode: str = SYNC_MODE_PULL,
        endpoint_port: int = 0,
        member: MemberCluster | None = None,
        ocm: OcmJoin | None = None,
        api: MemberApiStore | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f'unknown mode "{mode}": use {", ".join(MODES)}')
        self.client, self.name, self.mode = client, name, mode
        self.member = member or simulated_member(hub=client)
        manager = ControllerManager(RemoteStore(client, _scope(mode, name)), RealClock(), settings)
        register = (ocm or OcmJoin()).managed_cluster if mode == MODE_OCM else pull_cluster
        manager.add(self._agents(register, api).controller())
        self.driver = RealDriver(manager)
        if api is not None:  # a user's edit through the member's API: the member runs at once
            api.wake = lambda: self.driver.enqueue(MemberAgents.controller_name, name)
        served = Member(self.member.probe, self.member.report, self.member.delete_workload)
        push = mode == SYNC_MODE_PUSH
        self.endpoint = MemberEndpoint(served, port=endpoint_port) if push else None

    def _agents(self, register: Registration, api: MemberApiStore | None) -> MemberAgents:
        """A simulated member's control plane runs before its agents (and its API, if
        served, follows it); a real one runs by itself. The hub's URL names the
        AppliedManifestWorks of the OCM work agent."""
        hub_url = self.client.server
        if not isinstance(self.member, SimulatedCluster):
            return MemberAgents({self.name: self.member}, register, hub_url)
        apis = {self.name: api} if api is not None else None
        return RunningMembers({self.name: self.member}, register, apis, hub_url)

    def start(self) -> None:
        if self.endpoint is not None:
            self.endpoint.start()
            self._join(self.endpoint.url)
        self.driver.start()

    def stop(self) -> None:
        self.driver.stop()
        if self.endpoint is not None:
            self.endpoint.stop()

    def _join(self, api_endpoint: str) -> None:
        """What `karmadactl join` writes for a Push member: the Cluster and where to reach it."""
        spec = {"syncMode": SYNC_MODE_PUSH, "apiEndpoint": api_endpoint}
        try:
            self.client.create(
                {"apiVersion": CLUSTER.api_version, "kind": CLUSTER.kind,
                 "metadata": {"name": self.name}, "spec": spec},
                info=CLUSTER,
            )  # fmt: skip
        except AlreadyExists:
            self.client.patch(CLUSTER, self.name, "", {"spec": spec})
