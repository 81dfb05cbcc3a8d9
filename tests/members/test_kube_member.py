"""A member agent with a real member cluster (members/kube.py): any Kubernetes API server,
here our own, over a MemoryStore, reached through the official `kubernetes` client from a
kubeconfig; the hub runs in this process as `fleetwarden up` composes it."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from fleetwarden.admission import default_chain
from fleetwarden.api.errors import NotFound
from fleetwarden.api.karmada.work import Work
from fleetwarden.api.registry import REGISTRY
from fleetwarden.cli import app
from fleetwarden.cli.serving import Serving
from fleetwarden.cli.up import Hub, agent_flags, fleetwarden_command
from fleetwarden.client.client import Client
from fleetwarden.client.kubeconfig import write_kubeconfig
from fleetwarden.controllers.apiextensions import apiextensions_controllers
from fleetwarden.members.agent import Agent
from fleetwarden.members.kube import KubeCluster, sum_quantities
from fleetwarden.runtime.clock import RealClock
from fleetwarden.runtime.custom_kinds import CustomKinds
from fleetwarden.runtime.manager import ControllerManager, RealDriver
from fleetwarden.server import Server, create_app
from fleetwarden.store import MemoryStore

from .test_agent import SETTINGS, condition, eventually, is_ready

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
WORK = REGISTRY.info("work.karmada.io/v1alpha1", "Work")
DEPLOYMENT = REGISTRY.info("apps/v1", "Deployment")
NODE = REGISTRY.info("v1", "Node")
NAMESPACE = REGISTRY.info("v1", "Namespace")
SPACE = "karmada-es-member1"


class Member:
    """The member cluster: an API server over a store the tests read and write directly,
    as the member's own controllers would; its CRD controllers serve the kinds its CRDs
    define, as a cluster's apiextensions-apiserver does."""

    def __init__(self, tmp_path: Path) -> None:
        self.registry = REGISTRY.overlay()
        self.store = MemoryStore(kinds=self.registry.info)
        self.custom_kinds = CustomKinds(self.store, self.registry)
        manager = ControllerManager(self.store, RealClock(), registry=self.registry)
        for controller in apiextensions_controllers():
            manager.add(controller)
        self.controllers = RealDriver(manager)
        chain = default_chain(self.registry)
        self.server = Server(create_app(self.store, chain, RealClock()))
        self.server.start()
        self.controllers.start()
        self.kubeconfig = tmp_path / "member.kubeconfig"
        write_kubeconfig(self.kubeconfig, self.server.url)

    def stop(self) -> None:
        self.controllers.stop()
        self.server.stop()
        self.custom_kinds.close()

    def deployment(self, name: str = "nginx") -> dict[str, Any]:
        return self.store.get(DEPLOYMENT, name, "default")

    def write_status(self, name: str, **status: int) -> None:
        """What the member's deployment controller would write."""
        deployment = self.deployment(name)
        deployment["status"] = status
        self.store.update(deployment, subresource="status")

    def add_node(self, name: str, **allocatable: str) -> None:
        self.store.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
        node = self.store.get(NODE, name)
        node["status"] = {"allocatable": allocatable}
        self.store.update(node, subresource="status")


@pytest.fixture
def member(tmp_path: Path) -> Iterator[Member]:
    running = Member(tmp_path)
    yield running
    running.stop()


@pytest.fixture
def kube(member: Member) -> Iterator[KubeCluster]:
    cluster = KubeCluster.from_kubeconfig(str(member.kubeconfig))
    yield cluster
    cluster.close()


@pytest.fixture
def hub(tmp_path: Path, admin_client: Callable[[Hub], Client]) -> Iterator[Client]:
    running = Hub(tmp_path / "hub", Serving(port=0), SETTINGS)
    running.start()
    client = admin_client(running)
    yield client
    client.close()  # before the hub stops: else its server waits for the client's requests
    running.stop()


@pytest.fixture
def join(hub: Client, kube: KubeCluster) -> Iterator[Callable[..., Agent]]:
    agents: list[Agent] = []

    def start(**options: Any) -> Agent:
        agent = Agent(hub.copy(), "member1", SETTINGS, member=kube, **options)
        agent.start()
        agents.append(agent)
        eventually(lambda: is_ready(hub, "member1"))
        eventually(lambda: hub.get(NAMESPACE, SPACE))
        return agent

    yield start
    for agent in agents:
        agent.stop()
        agent.client.close()  # its watches open, the hub's server would wait them out


def deployment(replicas: int = 2, **metadata: Any) -> dict[str, Any]:
    """A Deployment the member's API server admits."""
    pods = {"matchLabels": {"app": "nginx"}}
    template = {
        "metadata": {"labels": pods["matchLabels"]},
        "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", **metadata},
        "spec": {"replicas": replicas, "selector": pods, "template": template},
    }


def work(*manifests: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": WORK.api_version,
        "kind": "Work",
        "metadata": {"name": "nginx", "namespace": SPACE},
        "spec": {"workload": {"manifests": list(manifests)}},
    }


def reported(hub: Client) -> list[tuple[Any, ...]]:
    """Each manifest's kind, reflected status and health, as the Work reports them."""
    status = hub.get(WORK, "nginx", SPACE).get("status", {})
    return [
        (s["identifier"]["kind"], s.get("status"), s.get("health"))
        for s in status.get("manifestStatuses", [])
    ]


def applied(hub: Client) -> tuple[str, str, str] | None:
    conditions = hub.get(WORK, "nginx", SPACE).get("status", {}).get("conditions", [])
    found = next((c for c in conditions if c["type"] == "Applied"), None)
    return (found["status"], found["reason"], found["message"]) if found else None


def gone(read: Callable[[], Any]) -> bool:
    try:
        read()
    except NotFound:
        return True
    return False


def test_a_pull_agent_reports_its_real_members_health_version_apis_and_resources(
    hub: Client, member: Member, join: Callable[..., Agent]
) -> None:
    member.add_node("node-a", cpu="4", memory="8Gi", pods="110")
    member.add_node("node-b", cpu="3500m", memory="4Gi", pods="110")
    join()

    def summarised() -> dict[str, Any] | None:
        status = hub.get(CLUSTER, "member1")["status"]
        return status if status.get("resourceSummary", {}).get("allocatable") else None

    status = eventually(summarised)
    assert status["resourceSummary"]["allocatable"] == {
        "cpu": "7500m",
        "memory": "12Gi",
        "pods": "220",
    }
    served = httpx.get(member.server.url + "/version").json()["gitVersion"]
    assert status["kubernetesVersion"] == served
    enabled = {e["groupVersion"]: e["resources"] for e in status["apiEnablements"]}
    assert {"name": "deployments", "kind": "Deployment"} in enabled["apps/v1"]
    assert all("/" not in r["name"] for resources in enabled.values() for r in resources)
    assert list(enabled) == sorted(enabled)
    assert condition(hub, "member1", "CompleteAPIEnablements")["status"] == "True"


def test_a_pull_agent_applies_updates_reports_and_deletes_a_works_deployment(
    hub: Client, member: Member, join: Callable[..., Agent]
) -> None:
    join()
    hub.create(work(deployment(replicas=2)), info=WORK)
    applied_deployment = eventually(member.deployment)
    labels = applied_deployment["metadata"]["labels"]
    annotations = applied_deployment["metadata"]["annotations"]
    assert labels["karmada.io/managed"] == "true"
    assert labels["work.karmada.io/permanent-id"]  # the hub's Work webhook gave it one
    assert (annotations["work.karmada.io/namespace"], annotations["work.karmada.io/name"]) == (
        SPACE,
        "nginx",
    )
    # Created, not rolled out yet: the default interpreter reads it as unhealthy.
    assert eventually(lambda: reported(hub)) == [("Deployment", None, "Unhealthy")]
    assert applied(hub) == ("True", "AppliedSuccessful", "Manifest has been successfully applied")

    member.write_status(
        "nginx", observedGeneration=1, replicas=2, updatedReplicas=2, readyReplicas=2,
        availableReplicas=2,
    )  # fmt: skip
    rolled_out = {"generation": 1, "observedGeneration": 1, "replicas": 2,
                  "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2}  # fmt: skip
    eventually(lambda: reported(hub) == [("Deployment", rolled_out, "Healthy")])

    # The member's side adds a label and a finalizer; the Work then asks for 3 replicas.
    on_member = member.deployment()
    on_member["metadata"]["labels"]["team"] = "web"
    on_member["metadata"]["finalizers"] = ["example.com/protect"]
    member.store.update(on_member)
    stored = hub.get(WORK, "nginx", SPACE)
    stored["spec"]["workload"]["manifests"] = [deployment(replicas=3)]
    hub.update(stored, info=WORK)
    eventually(lambda: member.deployment()["spec"]["replicas"] == 3)
    updated = member.deployment()
    assert updated["metadata"]["labels"] == labels | {"team": "web"}
    assert updated["metadata"]["finalizers"] == ["example.com/protect"]
    eventually(lambda: [h for _, _, h in reported(hub)] == ["Unhealthy"])  # 3 wanted, 2 there

    # The Work goes: so does its Deployment (the member's finalizer holds it, deleting).
    hub.delete(WORK, "nginx", SPACE)
    eventually(lambda: member.deployment()["metadata"].get("deletionTimestamp"))


def test_the_agent_deletes_the_workload_of_a_work_that_is_gone(
    hub: Client, member: Member, join: Callable[..., Agent]
) -> None:
    join()
    hub.create(work(deployment()), info=WORK)
    eventually(member.deployment)
    hub.delete(WORK, "nginx", SPACE)
    eventually(lambda: gone(member.deployment))


def test_a_deleted_works_finalizer_goes_once_the_agent_deleted_its_workload(
    hub: Client, member: Member, join: Callable[..., Agent]
) -> None:
    """karmada-agent's execution controller: the hub leaves a Pull cluster's Works to it."""
    join()
    held = work(deployment())
    held["metadata"]["finalizers"] = ["karmada.io/execution-controller"]
    hub.create(held, info=WORK)
    eventually(member.deployment)
    hub.delete(WORK, "nginx", SPACE)
    eventually(lambda: gone(lambda: hub.get(WORK, "nginx", SPACE)))
    assert gone(member.deployment)


def test_the_cluster_claims_of_a_member_but_those_kept_on_it(
    member: Member, kube: KubeCluster
) -> None:
    for name, labels in (
        ("region.example.com", {}),
        ("internal.example.com", {"open-cluster-management.io/spoke-only": ""}),
    ):
        member.store.create(
            {"apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "ClusterClaim",
             "metadata": {"name": name, "labels": labels}, "spec": {"value": "eu-1"}}
        )  # fmt: skip
    assert kube.cluster_claims() == {"region.example.com": "eu-1"}


def test_the_agent_restores_a_spec_changed_on_the_member(
    hub: Client, member: Member, join: Callable[..., Agent]
) -> None:
    join()
    hub.create(work(deployment(replicas=2)), info=WORK)
    on_member = eventually(member.deployment)
    on_member["spec"]["replicas"] = 5
    member.store.update(on_member)
    eventually(lambda: member.deployment()["spec"]["replicas"] == 2)


def test_an_object_karmada_does_not_manage_is_left_alone_unless_overwritten(
    hub: Client, member: Member, join: Callable[..., Agent]
) -> None:
    member.store.create(deployment(replicas=1))
    join()
    unknown_kind = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    hub.create(work(deployment(replicas=2), unknown_kind), info=WORK)
    assert eventually(lambda: applied(hub)) == (
        "False",
        "AppliedFailed",
        "Failed to apply all manifests (0/2): [resource(kind=Deployment, default/nginx) already"
        " exists in the member cluster and the work.karmada.io/conflict-resolution strategy"
        ' value is empty, Karmada will not manage this resource, no matches for kind "Widget"'
        ' in version "example.com/v1"]',
    )
    assert member.deployment()["spec"]["replicas"] == 1
    assert reported(hub) == []

    stored = hub.get(WORK, "nginx", SPACE)
    overwrite = {"annotations": {"work.karmada.io/conflict-resolution": "overwrite"}}
    stored["spec"]["workload"]["manifests"] = [deployment(replicas=2, **overwrite)]
    hub.update(stored, info=WORK)
    eventually(lambda: member.deployment()["spec"]["replicas"] == 2)
    assert eventually(lambda: applied(hub))[0] == "True"
    # Taken over, it is Karmada's now: the Work's deletion deletes it.
    hub.delete(WORK, "nginx", SPACE)
    eventually(lambda: gone(member.deployment))


def test_a_pull_cluster_whose_member_api_server_stops_is_not_reachable(
    hub: Client, member: Member, join: Callable[..., Agent]
) -> None:
    join()
    member.server.stop()
    ready = eventually(
        lambda: (ready := condition(hub, "member1")) and ready["status"] == "False" and ready
    )
    assert ready["reason"] == "ClusterNotReachable"


def test_a_push_members_work_is_released_once_the_hub_deleted_its_workload(
    hub: Client, member: Member, join: Callable[..., Agent]
) -> None:
    agent = join(mode="Push")
    assert hub.get(CLUSTER, "member1")["spec"]["apiEndpoint"] == agent.endpoint.url
    execution_controller = {"finalizers": ["karmada.io/execution-controller"]}
    created = work(deployment())
    created["metadata"].update(execution_controller)
    hub.create(created, info=WORK)
    eventually(member.deployment)
    hub.delete(WORK, "nginx", SPACE)
    eventually(lambda: gone(lambda: hub.get(WORK, "nginx", SPACE)))
    assert gone(member.deployment)


def test_labels_karmada_no_longer_manages_are_removed_and_the_members_own_kept(
    member: Member, kube: KubeCluster
) -> None:
    """RetainLabels (pkg/util/label_test.go's cases, through an update)."""
    first = deployment(
        labels={"tier": "web", "app": "nginx"},
        annotations={"resourcetemplate.karmada.io/managed-labels": "app,tier"},
    )
    kube.apply(as_work(first, generation=1), datetime.now(UTC))
    on_member = member.deployment()
    on_member["metadata"]["labels"] |= {"team": "sre", "app": "theirs"}
    member.store.update(on_member)

    second = deployment(
        labels={"app": "nginx"},
        annotations={"resourcetemplate.karmada.io/managed-labels": "app"},
    )
    kube.apply(as_work(second, generation=2), datetime.now(UTC))
    assert member.deployment()["metadata"]["labels"] == {
        "app": "nginx",  # the Work's value wins
        "team": "sre",  # the member's own label stays
        "karmada.io/managed": "true",
    }  # "tier", managed before and no longer wanted, is gone


def as_work(manifest: dict[str, Any], generation: int) -> Work:
    obj = work(manifest)
    obj["metadata"] |= {"uid": "work-uid", "generation": generation}
    return Work.model_validate(obj)


def test_a_member_that_does_not_answer_is_offline_and_keeps_nothing_from_apply(
    member: Member, kube: KubeCluster
) -> None:
    member.server.stop()
    assert (kube.probe().online, kube.probe().healthy) == (False, False)
    result = kube.apply(as_work(deployment(), generation=1), datetime.now(UTC))
    assert result.objects == [None]
    assert len(result.failures) == 1
    assert not kube.delete_workload(as_work(deployment(), generation=1))


@pytest.mark.parametrize(
    ("nodes", "summed"),
    [
        ([{"cpu": "4"}, {"cpu": "3900m"}], {"cpu": "7900m"}),
        ([{"memory": "16374624Ki"}, {"memory": "16Gi"}], {"memory": "33151840Ki"}),
        ([{"memory": "1G"}, {"memory": "500M"}], {"memory": "1500M"}),
        ([{"pods": "110"}, {"pods": "110", "cpu": "2"}], {"pods": "220", "cpu": "2"}),
        ([], {}),
    ],
)
def test_allocatable_resources_are_summed_over_the_nodes(
    nodes: list[dict[str, str]], summed: dict[str, str]
) -> None:
    assert sum_quantities(nodes) == summed


def test_fleetwarden_agent_joins_the_cluster_of_a_member_kubeconfig(
    hub: Client, member: Member, tmp_path: Path
) -> None:
    kubeconfig = tmp_path / "admin.kubeconfig"  # as the admin_client fixture wrote it
    command = fleetwarden_command(
        "agent", f"--hub-kubeconfig={kubeconfig}", "--cluster-name=member1",
        f"--member-kubeconfig={member.kubeconfig}", "--exit-on-stdin-close",
        *agent_flags(SETTINGS),
    )  # fmt: skip
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as agent:
        try:
            eventually(lambda: is_ready(hub, "member1"))
            eventually(lambda: hub.get(NAMESPACE, SPACE))
            hub.create(work(deployment()), info=WORK)
            eventually(member.deployment)
        finally:
            agent.communicate(timeout=10)  # its standard input closes: it stops
    assert agent.returncode == 0


def test_a_member_kubeconfig_that_does_not_load_is_refused(tmp_path: Path) -> None:
    hub_kubeconfig = tmp_path / "hub.kubeconfig"
    write_kubeconfig(hub_kubeconfig, "http://127.0.0.1:1")
    missing = tmp_path / "missing.kubeconfig"
    result = CliRunner().invoke(
        app,
        ["agent", f"--hub-kubeconfig={hub_kubeconfig}", "--cluster-name=member1",
         f"--member-kubeconfig={missing}"],
        env={"COLUMNS": "300"},
    )  # fmt: skip
    assert result.exit_code == 2
    assert f"--member-kubeconfig: {missing}: Invalid kube-config file" in result.stderr
