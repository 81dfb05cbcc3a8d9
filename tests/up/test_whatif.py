"""`fleetwarden what-if` against a real `fleetwarden up --members 3`: the fleet read through
the API, the hub's settings from its ConfigMap, the answer, the export that `simulate`
passes, the page; and the hub left as it was."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleetwarden.cli import app
from fleetwarden.sim.whatif import SETTINGS_CONFIGMAP, SETTINGS_NAMESPACE

from .test_up import (
    CONFIG_MAP,
    FLEET_OBJECTS,
    MEMBERS,
    RESOURCE_BINDING,
    Hub,
    eventually,
    kill_leftover_agents,
    ready,
    scheduled,
    two,
    work_healthy,
)

runner = CliRunner()


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    (tmp_path / "hub").mkdir()
    hub = Hub(tmp_path / "hub")
    try:
        yield hub
    finally:
        hub.stop()
        kill_leftover_agents(hub.data_dir / "members")


def test_what_if_a_scheduled_cluster_is_lost_on_a_live_hub(hub: Hub, tmp_path: Path) -> None:
    client = hub.start()
    eventually(lambda: all(ready(client, m) for m in MEMBERS), 20, "three Ready clusters")
    for manifest in FLEET_OBJECTS:
        client.create(manifest)
    before = eventually(lambda: two(scheduled(client)), 15, "scheduling to two clusters")
    eventually(lambda: all(work_healthy(client, m) for m in before), 15, "healthy Works")
    settings = client.get(CONFIG_MAP, SETTINGS_CONFIGMAP, SETTINGS_NAMESPACE)["data"]
    assert settings["cluster-monitor-grace-period"] == "3s"  # up's flag, published
    binding = client.get(RESOURCE_BINDING, "nginx-deployment", "default")

    lost, kept = before
    (spare,) = set(MEMBERS) - set(before)
    exported, page = tmp_path / "lost.yaml", tmp_path / "lost.html"
    kubeconfig = str(hub.data_dir / "kubeconfig")
    result = runner.invoke(app, [
        "what-if", lost, "--unreachable", "--for", "5m", "--workload-ready-after", "20s",
        "--kubeconfig", kubeconfig, "-o", "json", "--export", str(exported), "--html", str(page),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    (move,) = answer["moves"]
    assert move["workload"] == "Deployment default/nginx"
    assert sorted(move["from"]) == before
    assert sorted(move["to"]) == sorted([kept, spare])
    # The hub's grace period (3s), not Karmada's default (40s): its settings were used.
    assert move["at"] == "3s"
    (task,) = answer["evictionTasks"]
    assert (task["fromCluster"], task["since"], task["retired"]) == (lost, "3s", "23s")
    assert answer["nowhereToGo"] == []

    simulated = runner.invoke(app, ["simulate", str(exported)])
    assert simulated.exit_code == 0, simulated.output
    assert "0 failed" in simulated.stdout
    assert "<html" in page.read_text()
    # Only read: the live binding is as it was.
    after = client.get(RESOURCE_BINDING, "nginx-deployment", "default")
    assert after["metadata"]["resourceVersion"] == binding["metadata"]["resourceVersion"]
