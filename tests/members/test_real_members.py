"""The hub's HTTP view of members (members/real.py) against the endpoint a Push member
serves (members/endpoint.py), both in this process."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from fleetwarden.api.karmada.cluster import APIEnablement
from fleetwarden.api.karmada.work import Work
from fleetwarden.api.registry import REGISTRY
from fleetwarden.members.endpoint import Member, MemberEndpoint
from fleetwarden.members.real import HttpMembers
from fleetwarden.runtime.informer import Cache
from fleetwarden.semantics.cluster_health import MemberReport, Probe
from fleetwarden.store import MemoryStore

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
REPORT = MemberReport(
    "v1.31.0",
    [APIEnablement.model_validate({"groupVersion": "apps/v1",
                                   "resources": [{"name": "deployments", "kind": "Deployment"}]})],
    {"cpu": "8", "memory": "32Gi"},
)  # fmt: skip


@dataclass
class FakeMember:
    healthy: bool = True
    deleted: list[str] = field(default_factory=list)

    def as_member(self) -> Member:
        return Member(
            probe=lambda: Probe(online=True, healthy=self.healthy),
            report=lambda: REPORT,
            delete_workload=self._delete,
        )

    def _delete(self, work: Work) -> bool:
        self.deleted.append(work.name)
        return True


@pytest.fixture
def member() -> FakeMember:
    return FakeMember()


@pytest.fixture
def endpoint(member: FakeMember) -> Iterator[MemberEndpoint]:
    served = MemberEndpoint(member.as_member())
    served.start()
    yield served
    served.stop()


def members_of(*clusters: dict[str, Any]) -> HttpMembers:
    store = MemoryStore()
    for cluster in clusters:
        store.create(cluster)
    cache = Cache(store)
    informer = cache.informer(CLUSTER)
    cache.sync()
    return HttpMembers(informer, timeout=1.0)


def cluster(name: str, mode: str, endpoint: str | None = None) -> dict[str, Any]:
    spec = {"syncMode": mode, **({"apiEndpoint": endpoint} if endpoint else {})}
    return {"apiVersion": CLUSTER.api_version, "kind": "Cluster",
            "metadata": {"name": name}, "spec": spec}  # fmt: skip


def test_a_push_member_that_answers_ok_is_online_and_healthy_with_its_report(
    endpoint: MemberEndpoint,
) -> None:
    members = members_of(cluster("member1", "Push", endpoint.url))
    assert members.probe("member1") == Probe(online=True, healthy=True)
    assert members.report("member1") == REPORT


def test_a_push_member_answering_not_ready_is_online_but_not_healthy(
    endpoint: MemberEndpoint, member: FakeMember
) -> None:
    member.healthy = False
    members = members_of(cluster("member1", "Push", endpoint.url))
    assert members.probe("member1") == Probe(online=True, healthy=False)


def test_a_push_member_that_does_not_answer_is_offline_and_forgets_its_report(
    member: FakeMember,
) -> None:
    served = MemberEndpoint(member.as_member())
    served.start()
    members = members_of(cluster("member1", "Push", served.url))
    members.probe("member1")
    served.stop()
    assert members.probe("member1") == Probe(online=False, healthy=False)
    assert members.report("member1") is None


def test_a_push_cluster_without_an_endpoint_is_offline() -> None:
    members = members_of(cluster("member1", "Push"))
    assert members.probe("member1") == Probe(online=False, healthy=False)


def test_pull_clusters_are_not_probed_but_are_backed_by_their_agents() -> None:
    members = members_of(cluster("member1", "Pull"))
    assert members.probe("member1") is None
    assert members.probe("unknown") is None
    assert members.backs("member1")


def test_a_deleted_works_workload_is_removed_through_a_push_members_endpoint(
    endpoint: MemberEndpoint, member: FakeMember
) -> None:
    members = members_of(cluster("member1", "Push", endpoint.url), cluster("member2", "Pull"))
    work = Work.model_validate({"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
                                "metadata": {"name": "nginx-687f7fb96f", "uid": "u1"}})  # fmt: skip
    assert members.delete_workload("member1", work)
    assert member.deleted == ["nginx-687f7fb96f"]
    # The hub cannot reach a Pull member: its agent removes the workload.
    assert not members.delete_workload("member2", work)
    assert member.deleted == ["nginx-687f7fb96f"]


def test_a_workload_cannot_be_removed_from_a_push_member_that_does_not_answer(
    member: FakeMember,
) -> None:
    served = MemberEndpoint(member.as_member())
    served.start()
    served.stop()
    members = members_of(cluster("member1", "Push", served.url))
    work = Work.model_validate({"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
                                "metadata": {"name": "nginx"}})  # fmt: skip
    assert not members.delete_workload("member1", work)
