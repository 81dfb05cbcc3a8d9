"""What `explain` finds, before it is printed: as text, or as JSON/YAML for programs."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fleetwarden.api.meta import format_time


@dataclass
class Verdict:
    """One scheduler plugin's answer for one cluster: passed, or why not in the plugin's own
    words. `spared`: the plugin found a reason, but lets the cluster pass because it is
    already in the result (Karmada's TaintToleration and APIEnablement)."""

    plugin: str
    passed: bool
    reason: str = ""
    spared: bool = False

    def text(self) -> str:
        if self.spared:
            return f"{self.plugin}: {self.reason} (passes: already in the result)"
        return f"{self.plugin}: {self.reason}" if not self.passed else f"{self.plugin}: passed"


@dataclass
class ClusterVerdict:
    """A cluster of the fleet: selected or not, and why."""

    name: str
    selected: bool
    # Karmada: the replicas of the result, when it gives any.
    replicas: int | None = None
    # The short answer.
    why: str = ""
    verdicts: list[Verdict] = field(default_factory=list)
    # Score by scorer: Karmada's score plugins, OCM's prioritizers (weight × score).
    scores: dict[str, int] = field(default_factory=dict)
    # What else matters: taints the workload tolerates for a while, health, cluster sets.
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.passed or v.spared]


@dataclass
class EvictionTask:
    """A graceful eviction task: waiting now (spec.gracefulEvictionTasks), or retired (the
    Event EvictWorkloadFromClusterSucceed, and the binding as it was then when the hub
    still holds that version)."""

    cluster: str
    state: str  # waiting, retired, failed
    producer: str = ""
    reason: str = ""
    message: str = ""
    purge_mode: str = ""
    replicas: int | None = None
    created: datetime | None = None
    retired: datetime | None = None
    # Why it was retired, or what it waits for.
    why: str = ""
    count: int = 1


@dataclass
class Explanation:
    subject: str
    source: str
    now: datetime
    # (label, value) lines about the subject: its binding, policy, placement, status.
    facts: list[tuple[str, str]] = field(default_factory=list)
    clusters: list[ClusterVerdict] = field(default_factory=list)
    evictions: list[EvictionTask] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    # Events worth knowing (OCM's decisions), oldest first.
    history: list[str] = field(default_factory=list)
    # What could not be read or worked out, and why.
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        plain: dict[str, Any] = _plain(
            {
                "subject": self.subject,
                "source": self.source,
                "now": self.now,
                "facts": dict(self.facts),
                "clusters": self.clusters,
                "evictions": self.evictions,
                "waiting": self.waiting,
                "history": self.history,
                "notes": self.notes,
            }
        )
        return plain


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {name: _plain(getattr(value, name)) for name in value.__dataclass_fields__}
    return value
