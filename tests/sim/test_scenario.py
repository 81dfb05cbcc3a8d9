"""Loading scenarios: an invalid one names the file, the path inside it and the reason."""

from pathlib import Path

import pytest

from fleetwarden.sim.scenario import ScenarioError, load, parse

from .conftest import scenario


@pytest.mark.parametrize(
    ("spec", "path", "reason"),
    [
        ({"steps": [{"at": "2m"}, {"at": "1m"}]}, "spec.steps[1].at", "ascending"),
        ({"steps": [{"at": "1d"}]}, "spec.steps[0].at", 'unknown unit "d" in duration "1d"'),
        ({"steps": [{}]}, "spec.steps[0].at", "required"),
        (
            {"until": "1m", "steps": [{"at": "2m"}]},
            "spec.until",
            "must not be before the last step",
        ),
        (
            {"settings": {"graceful-eviction-timout": "5m"}},
            "spec.settings.graceful-eviction-timout",
            "graceful-eviction-timeout",
        ),
        ({"members": {"m1": {"reachable": "no"}}}, "spec.members.m1.reachable", "true or false"),
        ({"members": {"m1": {"speed": 1}}}, "spec.members.m1.speed", "unknown field"),
        (
            {"members": {"m1": {"nodes": [{"name": "n", "taints": [{"key": "k"}]}]}}},
            "spec.members.m1.nodes[0].taints[0].effect",
            "must be one of NoSchedule, PreferNoSchedule, NoExecute",
        ),
        (
            {"members": {"m1": {"nodes": [{"name": "n", "allocatable": {"cpu": "lots"}}]}}},
            "spec.members.m1.nodes[0].allocatable.cpu",
            "quantities must match",
        ),
        (
            {"members": {"m1": {"nodes": [{"name": "n"}, {"name": "n"}]}}},
            "spec.members.m1.nodes",
            "node 'n' declared twice",
        ),
        (
            {"members": {"m1": {"machineSets": [{"apiVersion": "v1", "kind": "MachineSet"}]}}},
            "spec.members.m1.machineSets[0]",
            "must be a machine.openshift.io/v1beta1 MachineSet",
        ),
        (
            {
                "members": {
                    "m1": {
                        "machineSets": [
                            {
                                "apiVersion": "machine.openshift.io/v1beta1",
                                "kind": "MachineSet",
                                "metadata": {"name": "a"},
                                "spec": {"replicas": -1},
                            }
                        ]
                    }
                }
            },
            "spec.members.m1.machineSets[0].spec.replicas",
            "greater than or equal to 0",
        ),
        (
            {"members": {"m1": {"nodes": [{"name": "n", "count": "3"}]}}},
            "spec.members.m1.nodes[0].count",
            "an integer",
        ),
        (
            {
                "expect": [
                    {"list": {"member": "m9", "apiVersion": "v1", "kind": "Pod"}, "exists": True}
                ]
            },
            "spec.expect[0].list.member",
            "not a member declared",
        ),
        ({"objects": [{"kind": "Cluster"}]}, "spec.objects[0].apiVersion", "required"),
        (
            {"expect": [{"object": {"apiVersion": "v1", "kind": "Namespace", "name": "a"}}]},
            "spec.expect[0]",
            "exactly one check",
        ),
        (
            {
                "expect": [
                    {
                        "object": {"apiVersion": "v1", "kind": "Namespace", "name": "a"},
                        "query": "[?",
                        "equals": 1,
                    }
                ]
            },
            "spec.expect[0].query",
            "invalid JMESPath",
        ),
        (
            {
                "expect": [
                    {"list": {"apiVersion": "v1", "kind": "Namespace"}, "events": {}, "equals": 1}
                ]
            },
            "spec.expect[0]",
            "exactly one of object, list, events",
        ),
        (
            {"steps": [{"at": "1m", "members": {"ghost": {"ready": False}}}]},
            "spec.steps[0].members.ghost",
            "not a member",
        ),
        ({"startTime": "yesterday"}, "spec.startTime", "RFC 3339"),
        ({"bogus": 1}, "spec.bogus", "unknown field"),
    ],
)
def test_invalid_scenarios_name_the_path(spec: dict, path: str, reason: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse(scenario(**spec), "bad.yaml")
    assert err.value.path == path
    assert reason in err.value.reason
    assert str(err.value).startswith(f"bad.yaml: {path}: ")


def test_wrong_kind_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="kind: must be Scenario"):
        parse({"apiVersion": "fleetwarden.io/v1alpha1", "kind": "Test", "spec": {}}, "x.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("spec: [unclosed\n")
    with pytest.raises(ScenarioError, match="not valid YAML"):
        load(str(broken))
    with pytest.raises(ScenarioError, match="No such file"):
        load(str(tmp_path / "missing.yaml"))


def test_a_yaml_alias_bomb_or_deep_nesting_is_not_valid_yaml(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [
        f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    bomb.write_text("\n".join(lines))
    with pytest.raises(ScenarioError, match="not valid YAML: yaml: document contains excessive"):
        load(str(bomb))
    bomb.write_text("spec: " + "[" * 100_000 + "]" * 100_000)
    with pytest.raises(ScenarioError, match="not valid YAML: yaml: exceeded max depth of 100"):
        load(str(bomb))


def test_defaults() -> None:
    loaded = parse(scenario(steps=[{"at": 90}]), "x.yaml")
    assert loaded.start_time.isoformat() == "2025-01-01T00:00:00+00:00"
    assert loaded.until.total_seconds() == 90
    assert loaded.settings.graceful_eviction_timeout.total_seconds() == 600
