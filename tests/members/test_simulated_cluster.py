"""A simulated member tells its probe and report from its switches as they are now."""

from dataclasses import replace

from fleetwarden.members.simulated import MemberState, SimulatedCluster
from fleetwarden.semantics.cluster_health import Probe


def test_probe_and_report_follow_every_change_of_state() -> None:
    member = SimulatedCluster(MemberState(), api_enablements=[])
    assert member.probe() == Probe(online=True, healthy=True)
    report = member.report()
    assert report.allocatable == {"cpu": "100", "memory": "400Gi", "pods": "1000"}
    assert member.report() is report  # the same state tells the same, made once

    member.state = replace(member.state, ready=False, allocatable={"cpu": "8"})
    assert member.probe() == Probe(online=True, healthy=False)
    assert member.report().allocatable == {"cpu": "8"}

    member.state = replace(member.state, reachable=False)
    assert member.probe() == Probe(online=False, healthy=False)
