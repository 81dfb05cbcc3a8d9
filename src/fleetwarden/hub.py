"""The hub's controllers, composed in the order karmada-controller-manager starts them.

Layer 6: it sits above the controllers and the scheduler (both layer 5), so that the
simulator and `fleetwarden up` run exactly the same set.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from fleetwarden.api.karmada.work import Work
from fleetwarden.api.kinds import KindInfo
from fleetwarden.controllers.karmada.binding import (
    cluster_resource_binding_controller,
    resource_binding_controller,
)
from fleetwarden.controllers.karmada.binding_status import (
    cluster_resource_binding_status_controller,
    resource_binding_status_controller,
)
from fleetwarden.controllers.karmada.cluster import cluster_controller
from fleetwarden.controllers.karmada.cluster_status import ClusterStatusController
from fleetwarden.controllers.karmada.cluster_taint_policy import cluster_taint_policy_controller
from fleetwarden.controllers.karmada.detector import detector_controllers
from fleetwarden.controllers.karmada.execution import execution_controller
from fleetwarden.controllers.karmada.graceful_eviction import graceful_eviction_controllers
from fleetwarden.controllers.karmada.taint_manager import taint_manager_controller
from fleetwarden.runtime.manager import Controller
from fleetwarden.scheduling.karmada import scheduler_controller
from fleetwarden.semantics.cluster_health import MemberReport, Probe


class Members(Protocol):
    """How the hub reaches member clusters: probing Push ones, removing workloads."""

    def probe(self, name: str) -> Probe | None: ...

    def report(self, name: str) -> MemberReport | None: ...

    def delete_workload(self, name: str, work: Work) -> bool: ...


def hub_controllers(members: Members, template_kinds: Iterable[KindInfo] = ()) -> list[Controller]:
    """Every hub controller; `template_kinds` adds resource kinds the detector must watch
    besides the registered ones (custom resources)."""
    return [
        ClusterStatusController(members.probe, members.report).controller(),
        cluster_controller(lambda name: members.probe(name) is not None),
        cluster_taint_policy_controller(),
        taint_manager_controller(),
        *detector_controllers(template_kinds),
        scheduler_controller(),
        resource_binding_controller(),
        cluster_resource_binding_controller(),
        execution_controller(members.delete_workload),
        resource_binding_status_controller(),
        cluster_resource_binding_status_controller(),
        *graceful_eviction_controllers(),
    ]
