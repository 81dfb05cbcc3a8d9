"""The text timeline of `fleetwarden simulate`: each Event once, and a cluster whose replicas
changed said to have moved, not to have been unscheduled and scheduled again."""

from __future__ import annotations

from pathlib import Path

from fleetwarden.sim.report import to_text
from fleetwarden.sim.runner import Simulation
from fleetwarden.sim.scenario import load

EXAMPLES = Path(__file__).parents[2] / "examples" / "scenarios"
BINDING = "ResourceBinding default/nginx-deployment"
TEMPLATE = "Deployment default/nginx"


def timeline_of(name: str) -> list[str]:
    report = Simulation(load(str(EXAMPLES / name))).run()
    text = to_text(report, dump=False)
    return text.split("timeline:\n", 1)[1].splitlines()


def test_a_scale_reads_as_a_move_of_the_clusters_replicas() -> None:
    """seed-002-divided scales nginx from 3 to 6 replicas at 1m: both clusters stay, with
    more replicas each."""
    lines = timeline_of("seed-002-divided.yaml")
    assert (
        f"      1m0s  {BINDING}: moved from member1(1), member2(2) to member1(2), member2(4)"
        in lines
    )
    assert not any("1m0s" in line and "unscheduled from" in line for line in lines)


def test_a_failover_keeps_unscheduled_and_scheduled_for_clusters_that_change() -> None:
    """seed-002-divided-failover: member1 is evicted at 11m40s and its replica goes to
    member2, which stays with one more."""
    lines = timeline_of("seed-002-divided-failover.yaml")
    at = [
        line
        for line in lines
        if line.startswith("    11m40s") and f"{BINDING}: " in line and "event" not in line
    ]
    assert at == [
        f"    11m40s  {BINDING}: unscheduled from member1(1)",
        f"    11m40s  {BINDING}: eviction task added for member1",
        f"    11m40s  {BINDING}: moved from member2(2) to member2(3)",
        f"    11m40s  {BINDING}: eviction task removed for member1",
    ]


def test_each_event_is_printed_once() -> None:
    """Karmada records its binding Events on the binding and on the resource template: the
    timeline shows the binding's, once; Events about the template alone stay."""
    lines = timeline_of("graceful-failover.yaml")
    template_events = [
        line.split(": event ", 1)[1] for line in lines if f"{TEMPLATE}: event" in line
    ]
    assert [e.split(" ", 1)[0] for e in template_events] == [
        "GetReplicasSucceed",
        "ApplyPolicySucceed",
    ]
    evictions = [line for line in lines if "EvictWorkloadFromClusterSucceed" in line]
    assert evictions == [
        f"      2m0s  {BINDING}: event EvictWorkloadFromClusterSucceed Evict from cluster member2 succeed."
    ]
    # A binding's Event that happens twice at one instant (two scheduling passes) is two
    # occurrences, and shown as such.
    scheduled = [
        line for line in lines if line.startswith("     1m40s") and "ScheduleBindingSucceed" in line
    ]
    assert len(scheduled) == 2
    assert all(BINDING in line for line in scheduled)


def test_json_timeline_has_the_same_entries() -> None:
    report = Simulation(load(str(EXAMPLES / "seed-002-divided.yaml"))).run()
    assert {
        "at": "1m0s",
        "object": BINDING,
        "action": "moved from",
        "detail": "member1(1), member2(2) to member1(2), member2(4)",
    } in report.timeline
    assert not any(
        entry["object"] == TEMPLATE and "Schedule" in entry["action"] for entry in report.timeline
    )
