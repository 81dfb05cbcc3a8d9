"""Layer 5: the hub's reconcilers, grouped by dialect."""

from __future__ import annotations

from typing import Protocol

from fleetwarden.controllers.karmada.cluster_status import ClusterStatusController
from fleetwarden.runtime.manager import Controller
from fleetwarden.semantics.cluster_health import MemberReport, Probe


class Members(Protocol):
    """How the hub reaches member clusters it probes itself (Push mode)."""

    def probe(self, name: str) -> Probe | None: ...

    def report(self, name: str) -> MemberReport | None: ...


def hub_controllers(members: Members) -> list[Controller]:
    """Every hub controller, in the order the controller manager starts them."""
    return [ClusterStatusController(members.probe, members.report).controller()]
