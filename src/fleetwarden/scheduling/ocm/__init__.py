"""OCM's Placement scheduler (pkg/placement): the pure core the scheduling controller calls.

`schedule(handle, placement, clusters, now)` filters the candidate ManagedClusters by the
placement's predicates and tolerations, scores the rest with its prioritizers (Balance,
Steady, ResourceAllocatableCPU/Memory, AddOn scores), and selects numberOfClusters of them,
returning a ScheduleResult and a Status (Misconfigured with upstream's message when the
placement asks for something impossible). The `Handle` is how plugins read the hub's
PlacementDecisions and AddOnPlacementScores; `ListHandle` serves them from plain lists.
No I/O and no clock here: the controller passes `now`.
"""

from fleetwarden.scheduling.ocm.framework import Code, Handle, Status
from fleetwarden.scheduling.ocm.handle import ListHandle
from fleetwarden.scheduling.ocm.scheduler import ScheduleResult, schedule

__all__ = ["Code", "Handle", "ListHandle", "ScheduleResult", "Status", "schedule"]
