"""Taints and tolerations: the Kubernetes matching rule, and what Karmada and OCM build on it.

- `tolerates` is corev1 Toleration.ToleratesTaint, with the Lt/Gt comparison operators
  disabled as Karmada calls it (they never match). OCM's placement plugin matches the same way.
- Karmada's scheduler filters on NoSchedule and NoExecute taints (tainttoleration plugin);
  its taint manager evicts on NoExecute ones (`no_execute_eviction`).
- OCM's placement filter knows NoSelect, NoSelectIfNew and PreferNoSelect, and counts
  tolerationSeconds from each taint's timeAdded (`ocm_cluster_tolerated`).
- `CompiledTolerations` answers the scheduler's question for many clusters at once: a
  toleration list compiled once, results cached per cluster taint set.

No clock here: times come in as `now`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from fleetwarden.api.core import NO_EXECUTE, NO_SCHEDULE, OP_EQUAL, OP_EXISTS, Taint, Toleration
from fleetwarden.api.ocm.cluster import NO_SELECT_IF_NEW, PREFER_NO_SELECT

# What Karmada's scheduler filters on; PreferNoSchedule taints never keep a cluster out.
SCHEDULING_EFFECTS = frozenset({NO_SCHEDULE, NO_EXECUTE})

# Go's zero time: what an OCM taint without timeAdded counts its tolerationSeconds from.
_GO_ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)


# --- Kubernetes ----------------------------------------------------------------------------------


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """ToleratesTaint: an empty effect or key matches any; Exists ignores the value; Equal is
    the default operator, and any other operator never matches."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator or OP_EQUAL
    if operator == OP_EQUAL:
        return (toleration.value or "") == (taint.value or "")
    return operator == OP_EXISTS


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def _untolerated(
    taints: Iterable[Taint], tolerations: Sequence[Toleration], effects: Collection[str] | None
) -> Iterator[Taint]:
    for taint in taints:
        if effects is not None and taint.effect not in effects:
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            yield taint


def untolerated_taints(
    taints: Iterable[Taint] | None,
    tolerations: Sequence[Toleration] | None,
    effects: Collection[str] | None = None,
) -> list[Taint]:
    """The taints (of the given effects; all when None) that no toleration tolerates."""
    return list(_untolerated(taints or (), tolerations or (), effects))


def find_matching_untolerated_taint(
    taints: Iterable[Taint] | None,
    tolerations: Sequence[Toleration] | None,
    effects: Collection[str] | None = None,
) -> Taint | None:
    """FindMatchingUntoleratedTaint: the first untolerated taint among those of the given
    effects (all when None), or None when every one is tolerated."""
    return next(_untolerated(taints or (), tolerations or (), effects), None)


def taint_to_string(taint: Taint) -> str:
    """Taint.ToString: `key=value:effect`, `key:effect`, `key=value:` or `key`."""
    return str(TaintTuple.of(taint))


def _expiry(time_added: datetime, toleration_seconds: int) -> datetime:
    """time_added + tolerationSeconds, pinned to the calendar's ends rather than overflowing."""
    try:
        return time_added + timedelta(seconds=toleration_seconds)
    except OverflowError:
        edge = datetime.max if toleration_seconds > 0 else datetime.min
        return edge.replace(tzinfo=UTC)


# --- Karmada: the NoExecute taint manager --------------------------------------------------------


def _first_tolerating(tolerations: Sequence[Toleration], taint: Taint) -> Toleration | None:
    return next((t for t in tolerations if tolerates(t, taint)), None)


def get_matching_tolerations(
    taints: Sequence[Taint], tolerations: Sequence[Toleration]
) -> list[Toleration] | None:
    """helper.GetMatchingTolerations: for each taint the first toleration that tolerates it,
    or None when some taint has none."""
    used = [_first_tolerating(tolerations, taint) for taint in taints]
    return None if None in used else [t for t in used if t is not None]


def min_toleration_time(
    no_execute_taints: Sequence[Taint], used_tolerations: Sequence[Toleration], now: datetime
) -> timedelta | None:
    """helper.GetMinTolerationTimeWithCurrentTime: how long until the first used toleration
    runs out, counted from the time each taint it tolerates was added.

    None means tolerated forever (no taints, or no tolerationSeconds that apply); zero means
    time is up (no tolerations at all, or the earliest expiry is past; negative
    tolerationSeconds are simply past). Taints without timeAdded do not count.
    """
    if not no_execute_taints:
        return None
    if not used_tolerations:
        return timedelta(0)
    expiries = [
        _expiry(taint.time_added, toleration.toleration_seconds)
        for toleration in used_tolerations
        if toleration.toleration_seconds is not None
        for taint in no_execute_taints
        if taint.time_added is not None and tolerates(toleration, taint)
    ]
    if not expiries:
        return None
    return max(min(expiries) - now, timedelta(0))


@dataclass(frozen=True, slots=True)
class NoExecuteVerdict:
    """The taint manager's answer for one binding on one cluster (needEviction).

    evict_now: some NoExecute taint is untolerated, or the tolerations ran out.
    evict_after: otherwise, how long until they run out; None is never.
    untolerated: the NoExecute taints no toleration matches.
    """

    evict_now: bool
    evict_after: timedelta | None = None
    untolerated: tuple[Taint, ...] = ()


def no_execute_eviction(
    taints: Iterable[Taint] | None, tolerations: Sequence[Toleration] | None, now: datetime
) -> NoExecuteVerdict:
    """Whether a binding placed with these cluster tolerations must leave a cluster with
    these taints, now or later (Karmada's NoExecuteTaintManager)."""
    no_execute = [t for t in taints or () if t.effect == NO_EXECUTE]
    tolerations = tolerations or ()
    used = get_matching_tolerations(no_execute, tolerations)
    if used is None:
        untolerated = tuple(_untolerated(no_execute, tolerations, None))
        return NoExecuteVerdict(evict_now=True, untolerated=untolerated)
    wait = min_toleration_time(no_execute, used, now)
    if wait == timedelta(0):
        return NoExecuteVerdict(evict_now=True)
    return NoExecuteVerdict(evict_now=False, evict_after=wait)


# --- OCM: the placement TaintToleration plugin ---------------------------------------------------


class OcmToleration(NamedTuple):
    """Whether a placement tolerates a taint or cluster, and until when (the plugin's
    PluginRequeueResult: the placement is rescheduled at requeue_time)."""

    tolerated: bool
    requeue_time: datetime | None = None


def ocm_toleration_misconfiguration(tolerations: Iterable[Toleration] | None) -> str | None:
    """The plugin's check of a placement's tolerations, before any matching."""
    for toleration in tolerations or ():
        if not toleration.key and toleration.operator != OP_EXISTS:
            return "If the key is empty, operator must be Exists."
        if toleration.operator == OP_EXISTS and toleration.value:
            return "If the operator is Exists, the value should be empty."
    return None


def ocm_taint_tolerated(
    taint: Taint, tolerations: Sequence[Toleration], *, in_decision: bool, now: datetime
) -> OcmToleration:
    """isTaintTolerated: PreferNoSelect never filters; NoSelectIfNew spares clusters already
    in the placement's decisions; otherwise the first matching toleration that has not run
    out (tolerationSeconds counted from timeAdded) tolerates the taint until it does."""
    if taint.effect == PREFER_NO_SELECT or (taint.effect == NO_SELECT_IF_NEW and in_decision):
        return OcmToleration(True)
    for toleration in tolerations:
        if not tolerates(toleration, taint):
            continue
        if toleration.toleration_seconds is None:
            return OcmToleration(True)
        expiry = _expiry(taint.time_added or _GO_ZERO_TIME, toleration.toleration_seconds)
        if now < expiry:
            return OcmToleration(True, expiry)
    return OcmToleration(False)


def ocm_cluster_tolerated(
    taints: Iterable[Taint] | None,
    tolerations: Sequence[Toleration] | None,
    *,
    in_decision: bool,
    now: datetime,
) -> OcmToleration:
    """isClusterTolerated: every taint tolerated; requeue at the earliest expiry."""
    expiries = []
    for taint in taints or ():
        verdict = ocm_taint_tolerated(taint, tolerations or (), in_decision=in_decision, now=now)
        if not verdict.tolerated:
            return OcmToleration(False)
        if verdict.requeue_time is not None:
            expiries.append(verdict.requeue_time)
    return OcmToleration(True, min(expiries, default=None))


# --- Compiled, for many clusters -----------------------------------------------------------------


class TaintTuple(NamedTuple):
    """A taint as a hashable (key, value, effect): what matching looks at, timeAdded aside."""

    key: str
    value: str
    effect: str

    @classmethod
    def of(cls, taint: Taint) -> TaintTuple:
        return cls(taint.key, taint.value or "", taint.effect)

    def __str__(self) -> str:
        head = f"{self.key}={self.value}" if self.value else self.key
        return f"{head}:{self.effect}" if self.effect or self.value else head


ClusterTaints = tuple[TaintTuple, ...]


def cluster_taints(taints: Iterable[Taint] | None) -> ClusterTaints:
    """A cluster's taints as a cache key; compute it once per cluster version."""
    return tuple(TaintTuple.of(t) for t in taints or ())


# A toleration as (key, value, effect), None for "any": Exists has no value to compare.
_Rule = tuple[str | None, str | None, str | None]


def _rule(toleration: Toleration) -> _Rule | None:
    """The toleration in matching form; None for operators that never match."""
    operator = toleration.operator or OP_EQUAL
    if operator not in (OP_EQUAL, OP_EXISTS):
        return None
    value = (toleration.value or "") if operator == OP_EQUAL else None
    return (toleration.key or None, value, toleration.effect or None)


class CompiledTolerations:
    """A toleration list compiled once, for checking cluster after cluster.

    Answers are cached per cluster taint set: a fleet has few distinct ones (most clusters
    have none, failing ones share the same few). The cache is dropped when it grows past
    `cache_limit`, so an unusual fleet costs time, never memory.
    """

    __slots__ = ("_cache", "_cache_limit", "_effects", "_rules")

    def __init__(
        self,
        tolerations: Iterable[Toleration] | None,
        effects: Collection[str] | None = SCHEDULING_EFFECTS,
        *,
        cache_limit: int = 4096,
    ) -> None:
        self._rules = tuple(r for r in map(_rule, tolerations or ()) if r is not None)
        self._effects = None if effects is None else frozenset(effects)
        self._cache: dict[ClusterTaints, TaintTuple | None] = {}
        self._cache_limit = cache_limit

    def find_untolerated(self, taints: ClusterTaints) -> TaintTuple | None:
        """The first untolerated taint of the compiled effects (find_matching_untolerated_taint)."""
        try:
            return self._cache[taints]
        except KeyError:
            if len(self._cache) >= self._cache_limit:
                self._cache.clear()
            found = self._cache[taints] = self._first_untolerated(taints)
            return found

    def tolerates(self, taints: ClusterTaints) -> bool:
        return self.find_untolerated(taints) is None

    def _first_untolerated(self, taints: ClusterTaints) -> TaintTuple | None:
        effects = self._effects
        for taint in taints:
            if effects is not None and taint.effect not in effects:
                continue
            if not any(
                (key is None or key == taint.key)
                and (value is None or value == taint.value)
                and (effect is None or effect == taint.effect)
                for key, value, effect in self._rules
            ):
                return taint
        return None
