"""Member agents (members/agent.py) joined over HTTP to a hub running in this process, as
`fleetwarden up` composes it, with settings short enough for real time."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest

from fleetwarden.admission import default_chain
from fleetwarden.api.errors import Expired, NotFound
from fleetwarden.api.registry import REGISTRY
from fleetwarden.cli.serving import Serving
from fleetwarden.cli.up import Hub
from fleetwarden.client.client import Client
from fleetwarden.members.agent import Agent, OcmJoin, simulated_member
from fleetwarden.members.remote import RemoteStore, View
from fleetwarden.runtime.clock import RealClock
from fleetwarden.runtime.settings import Settings
from fleetwarden.server import Server, create_app
from fleetwarden.store import MemoryStore

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
MANAGED_CLUSTER = REGISTRY.info("cluster.open-cluster-management.io/v1", "ManagedCluster")
LEASE = REGISTRY.info("coordination.k8s.io/v1", "Lease")
WORK = REGISTRY.info("work.karmada.io/v1alpha1", "Work")
CONFIG_MAP = REGISTRY.info("v1", "ConfigMap")
NAMESPACE = REGISTRY.info("v1", "Namespace")

SETTINGS = Settings(
    cluster_lease_duration=timedelta(seconds=1),
    cluster_status_update_frequency=timedelta(milliseconds=200),
    cluster_success_threshold=timedelta(0),
    cluster_failure_threshold=timedelta(0),
    cluster_monitor_grace_period=timedelta(seconds=2),
)
T = TypeVar("T")


def eventually(check: Callable[[], T | None], timeout: float = 10) -> T:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if result := check():
                return result
        except NotFound:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"still not so after {timeout} s: {check}")
        time.sleep(0.05)


@pytest.fixture
def client(tmp_path: Path, admin_client: Callable[[Hub], Client]) -> Iterator[Client]:
    hub = Hub(tmp_path, Serving(port=0), SETTINGS)
    hub.start()
    client = admin_client(hub)
    yield client
    client.close()  # before the hub stops: else its server waits for the client's requests
    hub.stop()


@pytest.fixture
def start_agent(client: Client) -> Iterator[Callable[..., Agent]]:
    agents: list[Agent] = []

    def start(name: str, **options: Any) -> Agent:
        agent = Agent(client.copy(), name, SETTINGS, **options)
        agent.start()
        agents.append(agent)
        return agent

    yield start
    for agent in agents:
        agent.stop()
        agent.client.close()  # its watches open, the hub's server would wait them out


def condition(client: Client, name: str, type_: str = "Ready") -> dict[str, Any] | None:
    conditions = client.get(CLUSTER, name).get("status", {}).get("conditions", [])
    return next((c for c in conditions if c["type"] == type_), None)


def is_ready(client: Client, name: str) -> bool:
    ready = condition(client, name)
    return ready is not None and ready["status"] == "True"


def test_a_pull_agent_registers_its_cluster_renews_its_lease_and_reports_ready(
    client: Client, start_agent: Callable[..., Agent]
) -> None:
    start_agent("member1")
    eventually(lambda: is_ready(client, "member1"))
    cluster = client.get(CLUSTER, "member1")
    assert cluster["spec"]["syncMode"] == "Pull"
    assert cluster["status"]["kubernetesVersion"]
    assert cluster["status"]["resourceSummary"]["allocatable"]["cpu"]
    lease = client.get(LEASE, "member1", "karmada-cluster")
    assert (lease["spec"]["holderIdentity"], lease["spec"]["leaseDurationSeconds"]) == (
        "member1",
        1,
    )
    first = lease["spec"]["renewTime"]
    eventually(lambda: client.get(LEASE, "member1", "karmada-cluster")["spec"]["renewTime"] > first)


NGINX = {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "nginx", "namespace": "default"}, "spec": {"replicas": 2}}  # fmt: skip


def test_a_pull_agent_applies_its_works_and_reports_them_healthy(
    client: Client, start_agent: Callable[..., Agent]
) -> None:
    start_agent("member1")
    eventually(lambda: is_ready(client, "member1"))
    eventually(lambda: client.get(NAMESPACE, "karmada-es-member1"))
    client.create(
        {"apiVersion": WORK.api_version, "kind": "Work",
         "metadata": {"name": "nginx", "namespace": "karmada-es-member1"},
         "spec": {"workload": {"manifests": [NGINX]}}},
        info=WORK,
    )  # fmt: skip

    def reported() -> list[Any]:
        status = client.get(WORK, "nginx", "karmada-es-member1").get("status", {})
        return [s.get("health") for s in status.get("manifestStatuses", [])]

    assert eventually(reported) == ["Healthy"]
    applied = client.get(WORK, "nginx", "karmada-es-member1")["status"]["conditions"]
    assert [(c["type"], c["status"]) for c in applied] == [("Applied", "True")]


def test_a_work_deleted_while_its_pull_agent_is_down_goes_once_the_agent_is_back(
    client: Client, start_agent: Callable[..., Agent]
) -> None:
    """The hub leaves a Pull cluster's Works to its agent: the Work stays terminating, its
    workload on the member, until an agent for that member runs again."""
    member = simulated_member()
    agent = start_agent("member1", member=member)
    eventually(lambda: is_ready(client, "member1"))
    eventually(lambda: client.get(NAMESPACE, "karmada-es-member1"))
    client.create(
        {"apiVersion": WORK.api_version, "kind": "Work",
         "metadata": {"name": "nginx", "namespace": "karmada-es-member1",
                      "finalizers": ["karmada.io/execution-controller"]},
         "spec": {"workload": {"manifests": [NGINX]}}},
        info=WORK,
    )  # fmt: skip
    eventually(lambda: member.applied)
    agent.stop()
    client.delete(WORK, "nginx", "karmada-es-member1")
    # Long enough for the hub to notice the agent is gone.
    eventually(lambda: (ready := condition(client, "member1")) and ready["status"] == "Unknown")
    work = client.get(WORK, "nginx", "karmada-es-member1")
    assert work["metadata"]["deletionTimestamp"]
    assert work["metadata"]["finalizers"] == ["karmada.io/execution-controller"]
    assert member.applied
    start_agent("member1", member=member)

    def gone() -> bool:
        try:
            client.get(WORK, "nginx", "karmada-es-member1")
        except NotFound:
            return True
        return False

    eventually(gone)
    assert member.applied == {}


def test_an_ocm_agent_creates_its_managed_cluster_and_waits_to_be_accepted(
    client: Client, start_agent: Callable[..., Agent]
) -> None:
    claims = {"region.open-cluster-management.io": "us-west-1", "id.k8s.io": "c1-id"}
    join = OcmJoin(lease_duration_seconds=1, external_server_urls=("https://c1.example:6443",))
    start_agent("cluster1", mode="OCM", ocm=join, member=simulated_member(claims))
    created = eventually(lambda: client.get(MANAGED_CLUSTER, "cluster1"))
    assert created["spec"]["hubAcceptsClient"] is False
    assert created["spec"]["leaseDurationSeconds"] == 1
    assert created["spec"]["managedClusterClientConfigs"] == [{"url": "https://c1.example:6443"}]
    time.sleep(0.5)  # what an agent that does not wait would have written by now
    assert "status" not in client.get(MANAGED_CLUSTER, "cluster1")
    with pytest.raises(NotFound):
        client.get(CLUSTER, "cluster1")  # it registers in OCM's dialect only

    client.patch(MANAGED_CLUSTER, "cluster1", "", {"spec": {"hubAcceptsClient": True}})
    eventually(lambda: available(client, "cluster1"))
    status = client.get(MANAGED_CLUSTER, "cluster1")["status"]
    conditions = {c["type"]: c["status"] for c in status["conditions"]}
    assert conditions.items() >= {
        ("HubAcceptedManagedCluster", "True"),
        ("ManagedClusterJoined", "True"),
        ("ManagedClusterConditionAvailable", "True"),
    }
    assert status["clusterClaims"] == [
        {"name": "id.k8s.io", "value": "c1-id"},
        {"name": "region.open-cluster-management.io", "value": "us-west-1"},
    ]
    assert status["allocatable"]["cpu"] == status["capacity"]["cpu"]
    assert status["version"]["kubernetes"]
    lease = client.get(LEASE, "managed-cluster-lease", "cluster1")
    first = lease["spec"]["renewTime"]
    eventually(
        lambda: client.get(LEASE, "managed-cluster-lease", "cluster1")["spec"]["renewTime"] > first
    )


def available(client: Client, name: str) -> bool:
    conditions = client.get(MANAGED_CLUSTER, name).get("status", {}).get("conditions", [])
    return any(
        (c["type"], c["status"]) == ("ManagedClusterConditionAvailable", "True") for c in conditions
    )


def test_a_pull_cluster_whose_agent_stops_turns_unknown_and_unreachable(
    client: Client, start_agent: Callable[..., Agent]
) -> None:
    agent = start_agent("member1")
    eventually(lambda: is_ready(client, "member1"))
    agent.stop()
    unknown = eventually(
        lambda: (ready := condition(client, "member1")) and ready["status"] == "Unknown" and ready
    )
    assert unknown["reason"] == "ClusterStatusUnknown"
    # The cluster controller taints the cluster in a write of its own, after the status.
    taints = eventually(lambda: client.get(CLUSTER, "member1")["spec"].get("taints"))
    assert [(t["key"], t["effect"]) for t in taints] == [
        ("cluster.karmada.io/unreachable", "NoSchedule")
    ]


def test_a_push_agent_is_probed_by_the_hub_and_unreachable_once_it_stops(
    client: Client, start_agent: Callable[..., Agent]
) -> None:
    agent = start_agent("member1", mode="Push")
    assert agent.endpoint is not None
    eventually(lambda: is_ready(client, "member1"))
    spec = client.get(CLUSTER, "member1")["spec"]
    assert (spec["syncMode"], spec["apiEndpoint"]) == ("Push", agent.endpoint.url)
    with pytest.raises(NotFound):
        client.get(LEASE, "member1", "karmada-cluster")  # the hub probes; no lease
    agent.stop()
    ready = eventually(
        lambda: (ready := condition(client, "member1")) and ready["status"] == "False" and ready
    )
    assert ready["reason"] == "ClusterNotReachable"


def test_a_remote_store_merges_the_watches_of_its_scope(client: Client) -> None:
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "seen"}})
    # Closed before the hub stops: else its server waits for the watches.
    with client.copy() as agent_client:
        store = RemoteStore(agent_client, {CONFIG_MAP: View("seen"), CLUSTER: View()})
        watch = store.watch(resource_version=str(store.resource_version))
        try:
            client.create({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "elsewhere", "namespace": "default"}})  # fmt: skip
            client.create({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "cm", "namespace": "seen"}})  # fmt: skip
            client.create(
                {"apiVersion": CLUSTER.api_version, "kind": "Cluster",
                 "metadata": {"name": "member9"}, "spec": {"syncMode": "Pull"}},
                info=CLUSTER,
            )  # fmt: skip
            # The hub's controllers may write member9 again before cm's event comes.
            wanted = {("/configmaps", "cm"), ("cluster.karmada.io/clusters", "member9")}
            seen: set[tuple[str, str]] = set()
            for event in watch:
                seen.add((event.collection, event.object["metadata"]["name"]))
                if wanted <= seen:
                    break
        finally:
            watch.close()
        assert seen == wanted  # nothing out of scope (ConfigMap "elsewhere") came before
        assert [o["metadata"]["name"] for o in store.list(CONFIG_MAP).items] == ["cm"]


def test_a_remote_watch_too_far_behind_is_expired() -> None:
    store = MemoryStore(event_log_size=2)
    with Server(create_app(store, default_chain(), RealClock())) as server:
        for i in range(3):
            store.create({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": f"cm-{i}", "namespace": "default"}})  # fmt: skip
        remote = RemoteStore(Client(server.url), {CONFIG_MAP: View()})
        watch = remote.watch(resource_version="1")
        with pytest.raises(Expired):
            next(iter(watch))
        remote.close()
