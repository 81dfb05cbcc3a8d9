"""Layer 4: what runs controllers. Clocks, work queues, informer caches, the event
recorder, settings and feature gates, and the controller manager with its real-time and
virtual-time drivers."""

from fleetwarden.runtime.clock import DEFAULT_EPOCH, Clock, RealClock, VirtualClock
from fleetwarden.runtime.events import NORMAL, WARNING, EventRecorder
from fleetwarden.runtime.informer import (
    Cache,
    EventHandler,
    IndexFunc,
    Informer,
    by_target_cluster,
    object_key,
    split_key,
)
from fleetwarden.runtime.manager import (
    DONE,
    REQUEUE,
    Context,
    Controller,
    ControllerManager,
    LivelockError,
    RealDriver,
    Result,
    VirtualDriver,
    Watches,
    own_key,
    requeue_after,
)
from fleetwarden.runtime.settings import FeatureGates, PurgeMode, Settings, SettingsError
from fleetwarden.runtime.workqueue import (
    ItemExponentialFailureRateLimiter,
    RateLimiter,
    WorkQueue,
    default_controller_rate_limiter,
)

__all__ = [
    "DEFAULT_EPOCH",
    "DONE",
    "NORMAL",
    "REQUEUE",
    "WARNING",
    "Cache",
    "Clock",
    "Context",
    "Controller",
    "ControllerManager",
    "EventHandler",
    "EventRecorder",
    "FeatureGates",
    "IndexFunc",
    "Informer",
    "ItemExponentialFailureRateLimiter",
    "LivelockError",
    "PurgeMode",
    "RateLimiter",
    "RealClock",
    "RealDriver",
    "Result",
    "Settings",
    "SettingsError",
    "VirtualClock",
    "VirtualDriver",
    "Watches",
    "WorkQueue",
    "by_target_cluster",
    "default_controller_rate_limiter",
    "object_key",
    "own_key",
    "requeue_after",
    "split_key",
]
