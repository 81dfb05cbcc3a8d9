"""The run recorded as data for `simulate --html`: what a picture of it must show."""

from pathlib import Path

from fleetwarden.sim.recording import Recording
from fleetwarden.sim.runner import Simulation
from fleetwarden.sim.scenario import load

from .conftest import CLUSTER, run, scenario

SCENARIOS = Path(__file__).parents[2] / "examples" / "scenarios"


def record(name: str) -> Recording:
    return Simulation(load(str(SCENARIOS / name))).run().recording


def test_graceful_failover_is_recorded_as_intervals_in_seconds() -> None:
    recording = record("graceful-failover.yaml")
    assert (recording["title"], recording["end"]) == ("graceful-failover", 240.0)
    clusters = {c["name"]: c for c in recording["clusters"]}
    assert list(clusters) == ["member1", "member2", "member3"]
    member2 = clusters["member2"]
    assert [(h["at"], h["status"]) for h in member2["health"]] == [
        (0.0, "True"), (100.0, "Unknown"), (190.0, "True"),
    ]  # fmt: skip
    assert sorted((t["key"], t["effect"], t["start"], t["end"]) for t in member2["taints"]) == [
        ("cluster.karmada.io/unreachable", "NoSchedule", 100.0, 190.0),
        ("not-ready", "NoExecute", 100.0, 190.0),
    ]
    assert clusters["member1"]["taints"] == []
    [nginx] = recording["workloads"]
    assert nginx["name"] == "Deployment default/nginx"
    # At 1m40s the binding leaves member2 and lands on member3 within one instant: the
    # picture shows where it ended, not the step between.
    assert [(p["at"], p["clusters"]) for p in nginx["placements"]] == [
        (0.0, {"member1": 2, "member2": 2}),
        (100.0, {"member1": 2, "member3": 2}),
    ]
    assert nginx["evictions"] == [
        {
            "cluster": "member2", "producer": "TaintManager", "reason": "TaintUntolerated",
            "purgeMode": "Gracefully", "start": 100.0, "end": 120.0,
        }
    ]  # fmt: skip
    verdicts = recording["expectations"]
    assert len(verdicts) == 13 and all(v["passed"] for v in verdicts)
    assert [v["at"] for v in verdicts][:3] == [60.0, 99.0, 99.0]


def test_ocm_placements_and_open_intervals() -> None:
    recording = record("ocm-placement-taints.yaml")
    clusters = {c["name"]: c for c in recording["clusters"]}
    assert {c["kind"] for c in clusters.values()} == {"ManagedCluster"}
    # Taints the hub put and took back within t=0 were never in force: not drawn.
    assert [(t["key"], t["start"], t["end"]) for t in clusters["cluster3"]["taints"]] == [
        ("cluster.open-cluster-management.io/unreachable", 360.0, None)
    ]
    workloads = {w["name"]: w for w in recording["workloads"]}
    assert [
        (p["at"], sorted(p["clusters"])) for p in workloads["Placement default/plain"]["placements"]
    ] == [
        (0.0, ["cluster2", "cluster3", "cluster4", "cluster5"]),
        (140.0, ["cluster3", "cluster4", "cluster5"]),
        (360.0, ["cluster4", "cluster5"]),
        (500.0, ["cluster2", "cluster4", "cluster5"]),
    ]
    assert workloads["Placement default/latecomer"]["placements"][0] == {
        "at": 420.0, "clusters": {"cluster4": None},
    }  # fmt: skip


def test_a_failed_expectation_keeps_what_was_expected_and_found() -> None:
    report = run(
        scenario(
            members={"member1": {}},
            until="10s",
            expect=[
                {
                    "object": {**CLUSTER, "name": "member1"},
                    "query": "spec.taints",
                    "equals": [{"key": "x", "effect": "NoSchedule"}],
                }
            ],
        )
    )
    [verdict] = report.recording["expectations"]
    assert verdict == {
        "at": 10.0, "path": "spec.expect[0]", "passed": False, "check": "equals",
        "query": "spec.taints", "expected": [{"key": "x", "effect": "NoSchedule"}], "actual": None,
    }  # fmt: skip
