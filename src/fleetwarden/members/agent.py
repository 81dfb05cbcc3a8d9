"""A member agent in a process of its own (`fleetwarden agent`), talking to the hub over HTTP.

The member is simulated in this process, or a real cluster (members/kube.py); either way
its agents are the very controller the simulator runs (members/simulated.py), here under
the real-time driver over the hub's API (members/remote.py):

- Pull mode, as karmada-agent: registers a Pull Cluster, renews its Lease in
  `karmada-cluster` every cluster-lease-duration × cluster-lease-renew-interval-fraction,
  reports Ready, the version, enabled APIs and resources every
  cluster-status-update-frequency (with the success and failure thresholds), applies the
  Works of its execution space `karmada-es-<name>` and reports their status and health,
  and drops the workload of a Work that is gone.
- Push mode, as a member joined by `karmadactl join`: registers a Push Cluster whose
  spec.apiEndpoint is the endpoint this process serves (members/endpoint.py); the hub
  probes it and writes the Cluster's status, and removes workloads through it. Works are
  applied and reported from here as in Pull mode: the member's side either way.

A simulated member serves the built-in Kubernetes APIs (Deployments, Services, ...).
"""

from __future__ import annotations

from fleetwarden.api.errors import AlreadyExists
from fleetwarden.api.karmada.cluster import SYNC_MODE_PULL, SYNC_MODE_PUSH
from fleetwarden.api.registry import BUILTIN_TEMPLATE_KINDS, CORE_KINDS
from fleetwarden.client.client import Client
from fleetwarden.members.endpoint import Member, MemberEndpoint
from fleetwarden.members.remote import RemoteStore
from fleetwarden.members.simulated import (
    CLUSTER,
    EXECUTION_SPACE_PREFIX,
    MANAGED_CLUSTER,
    WORK,
    MemberAgents,
    MemberCluster,
    MemberState,
    SimulatedCluster,
    api_enablements,
)
from fleetwarden.runtime.clock import RealClock
from fleetwarden.runtime.manager import ControllerManager, RealDriver
from fleetwarden.runtime.settings import Settings

MODES = (SYNC_MODE_PULL, SYNC_MODE_PUSH)
MEMBER_KINDS = (*CORE_KINDS, *BUILTIN_TEMPLATE_KINDS)
MEMBER_AGENTS = "member-agents"  # MemberAgents' controller


def _simulated_member() -> SimulatedCluster:
    kinds = ((info.api_version, info.plural, info.kind) for info in MEMBER_KINDS)
    return SimulatedCluster(MemberState(), api_enablements(kinds))


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
    ) -> None:
        if mode not in MODES:
            raise ValueError(f'unknown mode "{mode}": use {" or ".join(MODES)}')
        self.client, self.name, self.mode = client, name, mode
        self.member = member or _simulated_member()
        scope = {CLUSTER: None, MANAGED_CLUSTER: None, WORK: EXECUTION_SPACE_PREFIX + name}
        manager = ControllerManager(RemoteStore(client, scope), RealClock(), settings)
        manager.add(MemberAgents({name: self.member}).controller())
        self.driver = RealDriver(manager)
        served = Member(self.member.probe, self.member.report, self.member.delete_workload)
        push = mode == SYNC_MODE_PUSH
        self.endpoint = MemberEndpoint(served, port=endpoint_port) if push else None

    def start(self) -> None:
        if self.endpoint is not None:
            self.endpoint.start()
            self._join(self.endpoint.url)
        self.driver.start()
        self.driver.enqueue(MEMBER_AGENTS, self.name)

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
