"""`fleetwarden up --members 3` end to end: real processes, a temporary data dir, a free
port, and only the hub's API to look through.

A member's agent freezes (SIGSTOP): its cluster turns unreachable, a ClusterTaintPolicy
makes that NoExecute, the taint manager evicts, the scheduler moves the Deployment to the
third member, and the old Work goes once the new one is healthy. Then the hub itself is
killed in the middle of a stream of writes, started again, and every write it
acknowledged is there. Lease and grace settings are short so that this takes seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from fleetwarden.api.errors import NotFound
from fleetwarden.api.registry import REGISTRY
from fleetwarden.cli.up import fleetwarden_command
from fleetwarden.client.client import Client
from fleetwarden.client.errors import ClientError
from fleetwarden.client.kubeconfig import load_kubeconfig

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
CLUSTER_TAINT_POLICY = REGISTRY.info("policy.karmada.io/v1alpha1", "ClusterTaintPolicy")
PROPAGATION_POLICY = REGISTRY.info("policy.karmada.io/v1alpha1", "PropagationPolicy")
DEPLOYMENT = REGISTRY.info("apps/v1", "Deployment")
RESOURCE_BINDING = REGISTRY.info("work.karmada.io/v1alpha2", "ResourceBinding")
WORK = REGISTRY.info("work.karmada.io/v1alpha1", "Work")
CONFIG_MAP = REGISTRY.info("v1", "ConfigMap")
MEMBERS = ("member1", "member2", "member3")

SETTINGS = [
    "--cluster-lease-duration=2s",
    "--cluster-status-update-frequency=1s",
    "--cluster-monitor-grace-period=3s",
    "--feature-gates=Failover=true",
    "--enable-no-execute-taint-eviction=true",
    "--allow-no-execute-taint-policy=true",
]

T = TypeVar("T")


def eventually(check: Callable[[], T | None], timeout: float, what: str) -> T:
    """The first truthy result of `check`, polled until `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            result = last = check()
        except (ClientError, NotFound, httpx.HTTPError) as exc:
            result, last = None, exc
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}; last saw {last!r}")


class Hub:
    """`fleetwarden up ARGS...` as a process of its own."""

    def __init__(self, data_dir: Path, args: Sequence[str] = ("--members=3", *SETTINGS)) -> None:
        self.data_dir, self.args = data_dir, list(args)
        self.process: subprocess.Popen[bytes] | None = None
        self.client: Client | None = None

    def start(self) -> Client:
        kubeconfig = self.data_dir / "kubeconfig"
        kubeconfig.unlink(missing_ok=True)
        # As a user runs it: the data dir named relative to where `up` runs.
        data_dir = f"--data-dir={self.data_dir.name}"
        command = fleetwarden_command("up", "--port=0", data_dir, *self.args)
        log = (self.data_dir / "hub.log").open("ab")
        self.process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, cwd=self.data_dir.parent
        )
        eventually(kubeconfig.exists, 30, "the hub's kubeconfig")
        self.client = Client.from_kubeconfig(load_kubeconfig(str(kubeconfig)))
        client = self.client
        eventually(lambda: client.get_raw("/readyz").text == "ok", 30, "a ready hub")
        return self.client

    def agent_pid(self, member: str) -> int:
        return int((self.data_dir / "members" / f"{member}.pid").read_text())

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()
        if self.client is not None:
            self.client.close()

    def stop(self) -> int | None:
        """SIGTERM, and the exit status."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(30)
        if self.client is not None:
            self.client.close()
        return self.process.returncode if self.process else None


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    hub = Hub(tmp_path)
    try:
        yield hub
    finally:
        hub.stop()
        kill_leftover_agents(tmp_path / "members")


def kill_leftover_agents(members: Path) -> None:
    for pid_file in members.glob("*.pid"):
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def alive(pid: int) -> bool:
    """Running: neither gone nor a zombie its new parent has not reaped yet."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    with contextlib.suppress(OSError):
        return stat.read_text().rpartition(")")[2].split()[0] != "Z"
    return True


def ready(client: Client, name: str) -> bool:
    conditions = client.get(CLUSTER, name).get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def two(names: list[str]) -> list[str] | None:
    return names if len(names) == 2 else None


def binding(client: Client) -> dict[str, Any]:
    return client.get(RESOURCE_BINDING, "nginx-deployment", "default")


def scheduled(client: Client) -> list[str]:
    return sorted(c["name"] for c in binding(client)["spec"].get("clusters", []))


def taints(client: Client, name: str) -> set[tuple[str, str]]:
    return {(t["key"], t["effect"]) for t in client.get(CLUSTER, name)["spec"].get("taints", [])}


def terminating(objects: list[dict[str, Any]]) -> bool:
    return bool(objects) and all(o["metadata"].get("deletionTimestamp") for o in objects)


def works(client: Client, member: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.list(WORK, f"karmada-es-{member}")["items"]
    return items


def work_healthy(client: Client, member: str) -> bool:
    return any(
        status.get("health") == "Healthy"
        for work in works(client, member)
        for status in work.get("status", {}).get("manifestStatuses", [])
    )


def failed_over(client: Client, before: list[str], lost: str, timeout: float) -> list[str]:
    """Wait for the failover from `lost` to the spare member to complete (each step within
    `timeout` seconds): rescheduled, the new Work healthy, the eviction task retired, the
    old Work deleted. Returns the clusters scheduled after."""
    (spare,) = set(MEMBERS) - set(before)
    after = sorted({*before, spare} - {lost})
    eventually(lambda: scheduled(client) == after, timeout, f"rescheduling to {spare}")
    eventually(lambda: work_healthy(client, spare), timeout, f"a healthy Work on {spare}")
    eventually(
        lambda: not binding(client)["spec"].get("gracefulEvictionTasks"),
        timeout,
        "the task retired",
    )
    # Deleted, and kept by its finalizer until the member is back, as upstream does.
    eventually(lambda: terminating(works(client, lost)), timeout, f"the old Work on {lost} deleted")
    return after


def test_a_fleet_fails_over_and_the_hub_survives_kill_9(hub: Hub) -> None:
    client = hub.start()
    eventually(lambda: all(ready(client, m) for m in MEMBERS), 20, "three Ready clusters")

    for manifest in FLEET_OBJECTS:
        client.create(manifest)
    before = eventually(lambda: two(scheduled(client)), 15, "scheduling to two clusters")
    eventually(lambda: all(work_healthy(client, m) for m in before), 15, "healthy Works")

    lost = before[0]
    # Frozen, not killed: `up` would start a killed agent again (see the test below).
    frozen = hub.agent_pid(lost)
    os.kill(frozen, signal.SIGSTOP)
    wanted = {("cluster.karmada.io/unreachable", "NoSchedule"), ("not-ready", "NoExecute")}
    eventually(lambda: taints(client, lost) >= wanted, 15, f"the taints of unreachable {lost}")
    after = failed_over(client, before, lost, 15)
    os.kill(frozen, signal.SIGCONT)
    eventually(lambda: ready(client, lost), 20, f"{lost} back")

    survivors = [hub.agent_pid(m) for m in MEMBERS]
    acknowledged = _write_until_killed(client, hub)
    eventually(lambda: not any(map(alive, survivors)), 10, "the agents ending with their hub")
    client = hub.start()
    for name in acknowledged:
        assert client.get(CONFIG_MAP, name, "default")["data"] == {"n": name}
    assert scheduled(client) == after
    eventually(lambda: all(ready(client, m) for m in MEMBERS), 20, "three Ready clusters again")

    agents = [hub.agent_pid(m) for m in MEMBERS]
    assert hub.stop() == 0
    assert not any(map(alive, agents))  # each stopped, and was reaped, with the hub


def _write_until_killed(client: Client, hub: Hub) -> list[str]:
    """ConfigMaps created one after another until the hub is killed mid-stream; the names
    of those whose creation was acknowledged."""
    acknowledged: list[str] = []
    stop = threading.Event()

    def write() -> None:
        for i in range(100_000):
            name = f"cm-{i}"
            try:
                client.create(
                    {"apiVersion": "v1", "kind": "ConfigMap", "data": {"n": name},
                     "metadata": {"name": name, "namespace": "default"}}
                )  # fmt: skip
            except ClientError:
                return
            acknowledged.append(name)
            if stop.is_set():
                return

    writer = threading.Thread(target=write)
    writer.start()
    eventually(lambda: len(acknowledged) >= 200, 20, "200 acknowledged writes")
    hub.kill()
    stop.set()
    writer.join(10)
    return acknowledged


FLEET_OBJECTS: list[dict[str, Any]] = [
    {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "ClusterTaintPolicy",
        "metadata": {"name": "evict-when-not-ready"},
        "spec": {
            "targetClusters": {"clusterNames": list(MEMBERS)},
            "addOnConditions": [
                {"conditionType": "Ready", "operator": "NotIn", "statusValues": ["True"]}
            ],
            "removeOnConditions": [
                {"conditionType": "Ready", "operator": "In", "statusValues": ["True"]}
            ],
            "taints": [{"key": "not-ready", "effect": "NoExecute"}],
        },
    },
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"image": "nginx", "name": "nginx"}]},
            },
        },
    },
    {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "nginx-propagation", "namespace": "default"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
            "placement": {
                "clusterAffinity": {"clusterNames": list(MEMBERS)},
                "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 2, "minGroups": 2}],
                "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
            },
        },
    },
]


def test_an_agent_that_dies_is_logged_reaped_and_started_again(hub: Hub) -> None:
    hub.args = ["--members=1", *SETTINGS]
    client = hub.start()
    eventually(lambda: ready(client, "member1"), 20, "member1 Ready")
    first = hub.agent_pid("member1")
    os.kill(first, signal.SIGKILL)
    again = eventually(
        lambda: (pid := hub.agent_pid("member1")) != first and pid, 15, "member1 started again"
    )
    assert not alive(first)  # reaped, not a zombie
    assert alive(again)
    # the pid file is written as the agent starts, a moment before the line is logged
    restarted = f"agent member1 started again (pid {again})"
    log = eventually(
        lambda: restarted in (text := (hub.data_dir / "hub.log").read_text()) and text,
        5,
        "the restart logged",
    )
    assert f"agent member1 (pid {first}) exited with SIGKILL; starting it again in 1 s" in log
    eventually(lambda: ready(client, "member1"), 20, "member1 Ready again")


def test_the_agents_name_their_hub_whole_and_their_end_is_logged(hub: Hub) -> None:
    hub.args = ["--members=1", *SETTINGS]
    client = hub.start()
    eventually(lambda: ready(client, "member1"), 20, "member1 Ready")
    pid = hub.agent_pid("member1")
    arguments = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
    kubeconfigs = [a.partition("=")[2] for a in arguments if a.startswith("--hub-kubeconfig=")]
    assert kubeconfigs == [str(hub.data_dir / "members" / "member1.kubeconfig")]
    assert hub.stop() == 0
    log = (hub.data_dir / "hub.log").read_text()
    assert (
        f"agent member1 started (pid {pid}), logging to {hub.data_dir}/members/member1.log" in log
    )
    assert f"agent member1 (pid {pid}) stopped with status 0" in log
    assert log.rstrip().endswith("shutdown complete")
    # Not a line per HTTP request: the lease renewals would drown the rest.
    assert "HTTP Request" not in (hub.data_dir / "members" / "member1.log").read_text()
