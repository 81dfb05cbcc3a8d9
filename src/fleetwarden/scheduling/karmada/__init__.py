"""karmada-scheduler: places ResourceBindings and ClusterResourceBindings on member clusters.

`scheduler_controller()` is the controller to add to the hub's manager; the generic
scheduler, the plugins, spread selection and replica assignment are usable on their own.
"""

from fleetwarden.scheduling.karmada.generic_scheduler import GenericScheduler
from fleetwarden.scheduling.karmada.scheduler import (
    DEFAULT_SCHEDULER,
    Scheduler,
    scheduler_controller,
)

__all__ = ["DEFAULT_SCHEDULER", "GenericScheduler", "Scheduler", "scheduler_controller"]
