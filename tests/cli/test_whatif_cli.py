"""`fleetwarden what-if` as a user types it, against an API server whose store is a
simulated hub (graceful-failover's fleet, scheduled): the answer in text and json, the
hub's settings read from its ConfigMap, the export, and refusals before any run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from test_simulate_progress import on_a_terminal  # tests/cli, next to this file
from typer.testing import CliRunner

from fleetwarden.admission import default_chain
from fleetwarden.api.registry import REGISTRY
from fleetwarden.cli import app
from fleetwarden.cli.up import publish_settings
from fleetwarden.runtime.clock import RealClock
from fleetwarden.runtime.settings import Settings
from fleetwarden.server import Server, create_app
from fleetwarden.sim.runner import Simulation
from fleetwarden.sim.scenario import load
from fleetwarden.store import MemoryStore

EXAMPLE = Path(__file__).parents[2] / "examples" / "scenarios" / "graceful-failover.yaml"
runner = CliRunner()


@pytest.fixture
def simulated_hub() -> Simulation:
    """graceful-failover's fleet before its fault: nginx Duplicated on member1, member2."""
    scenario = load(str(EXAMPLE))
    hub = Simulation(replace(scenario, steps=[], expect=[], until=timedelta(seconds=30)))
    hub.run()
    return hub


@pytest.fixture
def kubeconfig(simulated_hub: Simulation, tmp_path: Path) -> Iterator[str]:
    with Server(create_app(simulated_hub.store, default_chain(), RealClock())) as server:
        config = {
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "hub", "cluster": {"server": server.url}}],
            "users": [{"name": "admin", "user": {"token": "unused"}}],
            "contexts": [{"name": "hub", "context": {"cluster": "hub", "user": "admin"}}],
            "current-context": "hub",
        }  # fmt: skip
        path = tmp_path / "kubeconfig"
        path.write_text(yaml.safe_dump(config))
        yield str(path)


def what_if(kubeconfig: str, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["what-if", *args], env={"KUBECONFIG": kubeconfig})
    return result.exit_code, result.stdout, result.stderr


def test_the_answer_in_words_with_the_hubs_settings(
    simulated_hub: Simulation, kubeconfig: str
) -> None:
    publish_settings(simulated_hub.store, simulated_hub.scenario.settings)
    code, out, err = what_if(kubeconfig, "member2", "--unreachable", "--for", "5m",
                             "--workload-ready-after", "20s")  # fmt: skip
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "what-if: unreachable member2 (1 clusters: member2) at 0s for 5m0s",
        "ran 15m0s of virtual time",
        "",
        "workloads that move (1):",
        "       40s  Deployment default/nginx: member1(2), member2(2) -> member1(2), member3(2)",
        "",
        "nowhere to go (0):",
        "  none",
        "",
        "eviction tasks (1):",
        "       40s  Deployment default/nginx: from member2 (TaintUntolerated) retired at 1m0s",
        "",
        "fleet protection:",
        "  no region changed state",
    ]


def test_without_the_settings_configmap_the_defaults_are_used_and_said(kubeconfig: str) -> None:
    code, out, err = what_if(kubeconfig, "member2", "--unreachable")
    assert code == 0
    assert "no ConfigMap karmada-system/fleetwarden-hub-settings on the hub" in err
    assert "running with the default settings" in err
    # Karmada's defaults evict on no taint (enable-no-execute-taint-eviction is false): what
    # moves with the hub's own settings (above) stays where it is.
    assert "workloads that move (0):" in out.splitlines()
    assert "eviction tasks (0):" in out.splitlines()


def test_json_and_an_export_that_simulate_passes(
    simulated_hub: Simulation, kubeconfig: str, tmp_path: Path
) -> None:
    publish_settings(simulated_hub.store, simulated_hub.scenario.settings)
    exported = tmp_path / "member2-lost.yaml"
    code, out, _ = what_if(kubeconfig, "--fault", "not-ready member1 member2 --at 1m",
                           "-o", "json", "--export", str(exported))  # fmt: skip
    assert code == 0
    answer = json.loads(out)
    # nginx wants two clusters (minGroups 2): member3 alone will not do.
    assert [(m["at"], m["to"]) for m in answer["moves"]] == [("1m40s", {})]
    assert answer["nowhereToGo"] == [
        {"workload": "Deployment default/nginx", "since": "1m40s", "until": None}
    ]
    scenario = yaml.safe_load(exported.read_text())
    assert scenario["spec"]["steps"] == [
        {"at": "1m0s", "members": {"member1": {"ready": False}, "member2": {"ready": False}}}
    ]
    checked = runner.invoke(app, ["simulate", str(exported)])
    assert checked.exit_code == 0, checked.stdout
    assert ": 3 passed, 0 failed" in checked.stdout.splitlines()[0]


def test_a_terminal_sees_the_virtual_time_reached_and_json_no_bar(
    simulated_hub: Simulation, kubeconfig: str
) -> None:
    publish_settings(simulated_hub.store, simulated_hub.scenario.settings)
    env = {**os.environ, "KUBECONFIG": kubeconfig}
    output, shown = on_a_terminal("what-if", "member3", "--cordon", env=env)
    assert output.startswith("what-if: cordon member3 ")
    assert "what-if 0s / 10m0s" in shown
    assert "what-if 10m0s / 10m0s" in shown.rstrip().rpartition("\r")[2]
    output, shown = on_a_terminal("what-if", "member3", "--cordon", "-o", "json", env=env)
    assert json.loads(output)["moves"] == []
    assert shown == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["member1"], "what fault? give --unreachable, --not-ready, --cordon, --taint or --fault"),
        (["member1", "--unreachable", "--for", "a while"], "--for 'a while': "),
        (["member9", "--unreachable"], "no cluster named member9 on the hub"),
        (["member1", "--taint", "oops"], "--taint 'oops': "),
        (["member1", "--cordon", "-o", "yaml"], 'unknown output format "yaml"'),
    ],
)
def test_refused_with_the_flag_named(kubeconfig: str, args: list[str], message: str) -> None:
    code, out, err = what_if(kubeconfig, *args)
    assert code == 1
    assert message in err
    assert out == ""


def test_the_settings_configmap_is_written_again_with_each_start() -> None:
    store = MemoryStore()
    publish_settings(store, Settings())
    given = Settings.from_flags(
        {"feature-gates": "Failover=true", "graceful-eviction-timeout": "2m"}
    )
    publish_settings(store, given)
    config_map = store.get(REGISTRY.info("v1", "ConfigMap"), "fleetwarden-hub-settings",
                           "karmada-system")  # fmt: skip
    assert config_map["data"]["graceful-eviction-timeout"] == "2m0s"
    assert Settings.from_flags(config_map["data"]) == given
