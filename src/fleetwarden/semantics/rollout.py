"""OCM's rollout strategies (cluster.open-cluster-management.io/v1alpha1 RolloutStrategy):
which of a Placement's decided clusters get the new workload now, as sdk-go's
RolloutHandler decides it.

- All: every decided cluster at once.
- Progressive: the mandatory decision groups first (all at once, until each cluster has
  succeeded), then the other clusters by name, `maxConcurrency` at a time (an integer or a
  percentage of them; all by default), stopping when more than `maxFailures` failed.
- ProgressivePerGroup: the mandatory groups, then group after group by index, the next
  only once the previous has succeeded (up to `maxFailures` of each group may fail).

A cluster keeps its place in the rollout while it progresses (until `progressDeadline`,
then it has timed out) and, once succeeded, for `minSuccessTime` of soak. A cluster whose
status is ToApply has not yet taken the current workload. Clusters no longer decided are
returned as removed.

Pure: time is given. Upstream: sdk-go pkg/apis/cluster/v1alpha1/rollout.go.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import Enum

from fleetwarden.api.meta import IntOrString
from fleetwarden.api.ocm.work import (
    ROLLOUT_ALL,
    ROLLOUT_PROGRESSIVE,
    ROLLOUT_PROGRESSIVE_PER_GROUP,
    MandatoryDecisionGroup,
    RolloutStrategy,
)
from fleetwarden.semantics.durations import parse_duration

_TIMEOUT = re.compile(r"^(([0-9])+[h|m|s])|None$")


class RolloutError(ValueError):
    """A strategy that cannot be followed (an unknown type, a malformed threshold)."""


class Status(Enum):
    TO_APPLY = "ToApply"
    PROGRESSING = "Progressing"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    TIME_OUT = "TimeOut"


@dataclass(frozen=True, order=True)
class GroupKey:
    """A decision group: its index, and its name (empty for an unnamed one)."""

    index: int
    name: str = ""


@dataclass(frozen=True)
class ClusterStatus:
    cluster: str
    status: Status
    since: datetime | None = None  # its last transition
    recheck_at: datetime | None = None
    group: GroupKey | None = None


@dataclass(frozen=True)
class RolloutResult:
    to_rollout: list[ClusterStatus] = field(default_factory=list)
    timed_out: list[ClusterStatus] = field(default_factory=list)
    removed: list[ClusterStatus] = field(default_factory=list)
    max_failure_breach: bool = False

    def recheck_at(self, now: datetime) -> datetime | None:
        """minRecheckAfter: the earliest future instant a cluster's place changes."""
        times = [c.recheck_at for c in self.to_rollout if c.recheck_at and c.recheck_at > now]
        return min(times, default=None)


Groups = Mapping[GroupKey, frozenset[str]]


def rollout(
    strategy: RolloutStrategy, groups: Groups, existing: Iterable[ClusterStatus], now: datetime
) -> RolloutResult:
    """GetRolloutCluster: the clusters to roll out to now, given the decided `groups` and the
    status of the clusters that have the workload already."""
    decided = {c for clusters in groups.values() for c in clusters}
    current = [s for s in existing if s.cluster in decided]
    removed = [s for s in existing if s.cluster not in decided]
    kind = strategy.type or ROLLOUT_ALL
    if kind == ROLLOUT_ALL:
        config = strategy.all
        deadline = _timeout(config.progress_deadline if config else None)
        result = _per_cluster(
            groups, len(decided), len(decided), timedelta(0), deadline, current, now
        )
    elif kind == ROLLOUT_PROGRESSIVE:
        result = _progressive(strategy, groups, current, now)
    elif kind == ROLLOUT_PROGRESSIVE_PER_GROUP:
        result = _progressive_per_group(strategy, groups, current, now)
    else:
        raise RolloutError(f"incorrect rollout strategy type {kind}")
    return replace(result, removed=removed)


def _progressive(
    strategy: RolloutStrategy, groups: Groups, current: list[ClusterStatus], now: datetime
) -> RolloutResult:
    config = strategy.progressive
    soak = _soak(config.min_success_time if config else None)
    deadline = _timeout(config.progress_deadline if config else None)
    decided = len({c for clusters in groups.values() for c in clusters})
    max_failures = rollout_size(config.max_failures if config else None, decided, 0)
    mandatory = config.mandatory_decision_groups if config else None
    first, rest = _mandatory_first(groups, mandatory, soak, deadline, current, now)
    if first is not None:
        return first
    total = len({c for clusters in rest.values() for c in clusters})
    size = rollout_size(config.max_concurrency if config else None, total, total)
    return _per_cluster(rest, size, max_failures, soak, deadline, current, now)


def _progressive_per_group(
    strategy: RolloutStrategy, groups: Groups, current: list[ClusterStatus], now: datetime
) -> RolloutResult:
    config = strategy.progressive_per_group
    soak = _soak(config.min_success_time if config else None)
    deadline = _timeout(config.progress_deadline if config else None)
    max_failures = config.max_failures if config else None
    _check_size(max_failures)
    mandatory = config.mandatory_decision_groups if config else None
    first, rest = _mandatory_first(groups, mandatory, soak, deadline, current, now)
    if first is not None:
        return first
    return _per_group(rest, max_failures, soak, deadline, current, now)


def _mandatory_first(
    groups: Groups,
    mandatory: Sequence[MandatoryDecisionGroup] | None,
    soak: timedelta,
    deadline: timedelta | None,
    current: list[ClusterStatus],
    now: datetime,
) -> tuple[RolloutResult | None, Groups]:
    """The mandatory decision groups go first, all at once, with no failure allowed: their
    result while they are still rolling out (or timed out); else None, and the other groups."""
    first = _select(groups, mandatory, chosen=True)
    if first:
        result = _per_group(first, 0, soak, deadline, current, now)
        if result.to_rollout or result.timed_out:
            return result, {}
    return None, _select(groups, mandatory, chosen=False)


def _select(groups: Groups, keys: Sequence[MandatoryDecisionGroup] | None, chosen: bool) -> Groups:
    """The groups the mandatory decision groups name (a name matches every group of that
    name; without a name, the index matches) or (chosen False) all the others. Without
    mandatory groups, none are chosen."""

    def named(key: GroupKey) -> bool:
        return any(
            (m.group_name == key.name) if m.group_name else (m.group_index or 0) == key.index
            for m in keys or []
        )

    return {k: v for k, v in groups.items() if named(k) == chosen}


def _per_cluster(
    groups: Groups,
    size: int,
    max_failures: int,
    soak: timedelta,
    deadline: timedelta | None,
    current: list[ClusterStatus],
    now: datetime,
) -> RolloutResult:
    """progressivePerCluster: those under way first (by name), then new clusters by name,
    until `size` are rolling out."""
    rolling: list[ClusterStatus] = []
    timed_out: list[ClusterStatus] = []
    failures, breach = 0, False
    known = set()
    for status in sorted(current, key=lambda s: s.cluster):
        known.add(status.cluster)
        if not breach or status.status != Status.TO_APPLY:
            _place(status, soak, deadline, now, rolling, timed_out)
        if status.status in (Status.TIME_OUT, Status.FAILED):
            failures += 1
            breach = failures > max_failures
        if len(rolling) >= size:
            return RolloutResult(rolling, timed_out, max_failure_breach=breach)
    if breach:
        return RolloutResult(rolling, timed_out, max_failure_breach=True)
    group_of = {c: key for key, clusters in groups.items() for c in clusters}
    for cluster in sorted(group_of):
        if cluster in known:
            continue
        rolling.append(ClusterStatus(cluster, Status.TO_APPLY, group=group_of[cluster]))
        if len(rolling) >= size:
            break
    return RolloutResult(rolling, timed_out)


def _per_group(
    groups: Groups,
    max_failures: IntOrString | None,
    soak: timedelta,
    deadline: timedelta | None,
    current: list[ClusterStatus],
    now: datetime,
) -> RolloutResult:
    """progressivePerGroup: those under way, then the first group (by index) that still has
    clusters to roll out to, whole."""
    rolling: list[ClusterStatus] = []
    timed_out: list[ClusterStatus] = []
    placed: dict[str, Status] = {}
    for status in current:
        if status.status != Status.TO_APPLY:
            placed[status.cluster] = _place(status, soak, deadline, now, rolling, timed_out)
    total_failures, breach = 0, False
    for key in sorted(groups):
        clusters = groups[key]
        allowed, failures = rollout_size(max_failures, len(clusters), 0), 0
        for cluster in sorted(clusters):
            if cluster in placed:
                if placed[cluster] in (Status.TIME_OUT, Status.FAILED):
                    failures += 1
                    breach = failures > allowed
                continue
            rolling.append(ClusterStatus(cluster, Status.TO_APPLY, group=key))
        total_failures += failures
        if len(rolling) - total_failures > 0 or breach:
            break
    return RolloutResult(rolling, timed_out, max_failure_breach=breach)


def _place(
    status: ClusterStatus,
    soak: timedelta,
    deadline: timedelta | None,
    now: datetime,
    rolling: list[ClusterStatus],
    timed_out: list[ClusterStatus],
) -> Status:
    """determineRolloutStatus: whether a cluster under way still counts as rolling out (to
    apply; succeeded but still soaking; progressing or failed within the deadline) or has
    timed out; its status, TimeOut where it has."""
    if status.status == Status.TO_APPLY:
        rolling.append(status)
    elif status.status == Status.SUCCEEDED:
        soaked = (status.since or now) + soak
        if now < soaked:
            rolling.append(replace(status, recheck_at=soaked))
    elif status.status != Status.TIME_OUT:
        expiry = None if deadline is None else (status.since or now) + deadline
        if expiry is None or now < expiry:
            rolling.append(replace(status, recheck_at=expiry))
        else:
            timed_out.append(replace(status, status=Status.TIME_OUT, recheck_at=expiry))
            return Status.TIME_OUT
    return status.status


def rollout_size(threshold: IntOrString | None, total: int, default: int) -> int:
    """calculateRolloutSize: an integer, or a percentage of total rounded up; the default
    where that is not positive or above total."""
    _check_size(threshold)
    if isinstance(threshold, str):
        size = math.ceil(float(threshold[:-1]) / 100 * total)
    else:
        size = threshold or 0
    return default if size <= 0 or size > total else size


def _check_size(threshold: IntOrString | None) -> None:
    if not isinstance(threshold, str):
        return
    try:
        float(threshold.removesuffix("%")) if threshold.endswith("%") else None
    except ValueError as err:
        raise RolloutError(str(err)) from err
    if not threshold.endswith("%"):
        raise RolloutError(
            f"'{threshold}' is an invalid maximum threshold value: string is not a percentage"
        )


def _timeout(text: str | None) -> timedelta | None:
    """parseTimeout: None for no deadline ("None", or not given)."""
    if not text or text == "None":
        return None
    if not _TIMEOUT.match(text):
        raise RolloutError("invalid timeout format")
    return parse_duration(text)


def _soak(text: str | None) -> timedelta:
    return parse_duration(text) if text else timedelta(0)
