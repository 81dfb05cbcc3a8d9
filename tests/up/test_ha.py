"""The layout of docs/ha.md, with real processes: three etcd members, three `fleetwarden up`
replicas sharing them (and one CA), HAProxy in front. Every replica serves the API; each
lock's controllers run on one; after `kill -9` of that one another takes over within the
lease duration and a retry period, losing no acknowledged write; with one etcd member of
three killed, reads and writes go on, and the member rejoins when restarted."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from etcd_cluster import EtcdCluster, free_port

from fleetwarden.api.registry import REGISTRY
from fleetwarden.client.client import Client
from fleetwarden.client.kubeconfig import load_kubeconfig

from .test_up import (
    FLEET_OBJECTS,
    MEMBERS,
    SETTINGS,
    Hub,
    eventually,
    failed_over,
    kill_leftover_agents,
    ready,
    scheduled,
    taints,
    terminating,
    two,
    work_healthy,
    works,
)

LEASE = REGISTRY.info("coordination.k8s.io/v1", "Lease")
CONFIGMAP = REGISTRY.info("v1", "ConfigMap")
CONTROLLER_MANAGER = ("karmada-system", "karmada-controller-manager")
# --leader-elect-lease-duration + --leader-elect-retry-period, the defaults.
TAKEOVER = 15 + 2
HAPROXY = """\
global
    maxconn 1024
defaults
    mode tcp
    timeout connect 2s
    timeout client 1h
    timeout server 1h
frontend hub
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
{servers}
"""


class Layout:
    def __init__(self, root: Path, *flags: str, last: tuple[str, ...] = ()) -> None:
        """`flags` for every replica, `last` for the last one alone."""
        self.root, self.flags, self.last = root, flags, last
        self.etcd = EtcdCluster(root / "etcd", size=3)
        self.replicas: list[Hub] = []
        self.haproxy: subprocess.Popen[bytes] | None = None
        self.port = free_port()

    def start(self) -> None:
        (self.root / "etcd").mkdir()
        self.etcd.start()
        servers = ",".join(self.etcd.urls)
        for i in range(3):
            data_dir = self.root / f"replica{i}"
            data_dir.mkdir()
            if i:  # one CA for all: the first replica's
                shutil.copytree(self.root / "replica0" / "pki", data_dir / "pki")
            args = (f"--etcd-servers={servers}", "--anonymous-auth", *self.flags)
            hub = Hub(data_dir, args=(*args, *(self.last if i == 2 else ())))
            self.replicas.append(hub)
            hub.start()
        self.start_haproxy()

    def start_haproxy(self) -> None:
        lines = [
            f"    server r{i} 127.0.0.1:{port(hub)} check check-ssl verify none inter 500ms "
            "fall 2 rise 1"
            for i, hub in enumerate(self.replicas)
        ]
        config = self.root / "haproxy.cfg"
        config.write_text(HAPROXY.format(port=self.port, servers="\n".join(lines)))
        log = (self.root / "haproxy.log").open("ab")
        self.haproxy = subprocess.Popen(
            ["haproxy", "-db", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT
        )

    def client(self) -> Client:
        """A client of the load balancer, as the first replica's administrator."""
        config = yaml.safe_load((self.root / "replica0" / "kubeconfig").read_text())
        config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{self.port}"
        path = self.root / "lb.kubeconfig"
        path.write_text(yaml.safe_dump(config))
        return Client.from_kubeconfig(load_kubeconfig(str(path)))

    def stop(self) -> None:
        if self.haproxy is not None:
            self.haproxy.kill()
            self.haproxy.wait()
        for hub in self.replicas:
            hub.stop()
            kill_leftover_agents(hub.data_dir / "members")
        self.etcd.stop()


def port(hub: Hub) -> int:
    assert hub.client is not None
    return int(hub.client.server.rsplit(":", 1)[1])


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[Layout]:
    layout = Layout(tmp_path)
    try:
        layout.start()
        yield layout
    finally:
        layout.stop()


def holder(client: Client, lock: tuple[str, str]) -> str:
    namespace, name = lock
    spec = client.get(LEASE, name, namespace=namespace)["spec"]
    return str(spec.get("holderIdentity") or "")


def leads(hub: Hub, lock: tuple[str, str]) -> bool:
    return f"{lock[1]}: leading" in (hub.data_dir / "hub.log").read_text()


def configmap(name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"written": "before"},
    }


def test_replicas_behind_haproxy_serve_alike_and_a_killed_leader_is_replaced(
    layout: Layout,
) -> None:
    lb = layout.client()
    written = eventually(lambda: lb.create(configmap("acknowledged")), 10, "a write")
    # Active-active: what one replica acknowledged, each reads at once.
    for hub in layout.replicas:
        assert hub.client is not None
        got = hub.client.get(CONFIGMAP, "acknowledged", namespace="default")
        assert got["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]
    leader_identity = eventually(lambda: holder(lb, CONTROLLER_MANAGER), 20, "a leader")
    (leader,) = [hub for hub in layout.replicas if leads(hub, CONTROLLER_MANAGER)]

    leader.kill()
    killed = time.monotonic()
    successor = eventually(
        lambda: (h := holder(lb, CONTROLLER_MANAGER)) != leader_identity and h, 30, "a successor"
    )
    took = time.monotonic() - killed
    assert took <= TAKEOVER, f"took over after {took:.1f} s"
    others = [hub for hub in layout.replicas if hub is not leader]
    assert eventually(lambda: [hub for hub in others if leads(hub, CONTROLLER_MANAGER)], 5, "")
    assert successor.startswith(leader_identity.split("_")[0])  # this host's, a new uuid
    assert lb.get(CONFIGMAP, "acknowledged", namespace="default")["data"] == {"written": "before"}
    lb.close()


def test_reads_and_writes_go_on_with_one_etcd_member_of_three_killed(layout: Layout) -> None:
    lb = layout.client()
    member = layout.etcd.members[0]
    layout.etcd.kill(member)
    for i in range(5):
        eventually(lambda i=i: lb.create(configmap(f"while-down-{i}")), 20, "a write")
    assert len(lb.list(CONFIGMAP, namespace="default")["items"]) >= 5
    layout.etcd.start_member(member)
    layout.etcd.wait_ready(member)
    lb.create(configmap("after-rejoin"))
    assert lb.get(CONFIGMAP, "after-rejoin", namespace="default")
    lb.close()


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Layout]:
    """The layout with short lease and grace settings, and three members whose agents the
    last replica starts (so that they outlive the first, which leads)."""
    layout = Layout(tmp_path, *SETTINGS, last=("--members=3",))
    try:
        layout.start()
        yield layout
    finally:
        layout.stop()


# The fleet whose policy tolerates the lost cluster's NoExecute taint for 10 s.
TOLERATING_FLEET_OBJECTS = [
    {**obj, "spec": {**obj["spec"], "placement": {**obj["spec"]["placement"], "clusterTolerations": [
        {"key": "not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}
    ]}}} if obj["kind"] == "PropagationPolicy" else obj
    for obj in FLEET_OBJECTS
]  # fmt: skip


def test_a_failover_completes_when_its_leader_is_killed_in_the_middle(fleet: Layout) -> None:
    lb = fleet.client()
    eventually(lambda: all(ready(lb, m) for m in MEMBERS), 30, "three Ready clusters")
    for manifest in TOLERATING_FLEET_OBJECTS:
        lb.create(manifest)
    before = eventually(lambda: two(scheduled(lb)), 20, "scheduling to two clusters")
    eventually(lambda: all(work_healthy(lb, m) for m in before), 20, "healthy Works")
    leader = fleet.replicas[0]  # started alone first: it took every lock
    assert leads(leader, CONTROLLER_MANAGER) and leads(leader, ("", "karmada-scheduler"))

    lost = before[0]
    agents = fleet.replicas[2]
    frozen = int((agents.data_dir / "members" / f"{lost}.pid").read_text())
    os.kill(frozen, signal.SIGSTOP)
    try:
        no_execute = ("not-ready", "NoExecute")
        eventually(lambda: no_execute in taints(lb, lost), 20, f"{lost} tainted NoExecute")
        killed_identity = holder(lb, CONTROLLER_MANAGER)
        # The eviction is due when the toleration runs out: the failover is under way, and
        # the killed leader leaves its next steps to another (which, left undelayed, a fast
        # hub could finish before the kill).
        # Read before the kill: the balancer may still send a request to the killed one.
        assert not terminating(works(lb, lost))
        leader.kill()
        # The takeover (within 17 s) comes first, then the failover's steps.
        failed_over(lb, before, lost, 60)
        assert holder(lb, CONTROLLER_MANAGER) not in ("", killed_identity)
    finally:
        os.kill(frozen, signal.SIGCONT)
    lb.close()
