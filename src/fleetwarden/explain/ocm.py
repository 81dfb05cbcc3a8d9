"""Why an OCM Placement selects the clusters it selects, for every ManagedCluster.

The hub's own code decides, run over what was read: the scheduling controller's candidates
(ManagedClusterSets bound to the namespace, narrowed to spec.clusterSets), the scheduler
(`scheduling.ocm.schedule`: Predicate then TaintToleration, then the prioritizers and
numberOfClusters), each predicate's selectors (`ClusterSelector`) and each taint's
verdict (`ocm_taint_tolerated`) for the words of a cluster that does not pass. The objects
are read into informers of their own, as the controller reads its caches.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from fleetwarden.api.errors import StatusError
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import find_condition, format_time, parse_time
from fleetwarden.api.ocm.cluster import ManagedCluster, ManagedClusterSet
from fleetwarden.api.ocm.placement import (
    CONDITION_MISCONFIGURED,
    CONDITION_SATISFIED,
    Placement,
    PlacementDecision,
    ScoreCoordinate,
)
from fleetwarden.api.registry import REGISTRY
from fleetwarden.explain.model import ClusterVerdict, Explanation, Verdict
from fleetwarden.explain.source import Obj, Source, read_error
from fleetwarden.runtime.informer import Cache
from fleetwarden.scheduling.ocm.cache_handle import CacheHandle
from fleetwarden.scheduling.ocm.decisions import BY_PLACEMENT, by_placement
from fleetwarden.scheduling.ocm.kinds import (
    ADD_ON_PLACEMENT_SCORE,
    MANAGED_CLUSTER,
    MANAGED_CLUSTER_SET,
    MANAGED_CLUSTER_SET_BINDING,
    PLACEMENT,
    PLACEMENT_DECISION,
)
from fleetwarden.scheduling.ocm.plugins.predicate import NAME as PREDICATE
from fleetwarden.scheduling.ocm.plugins.predicate import ClusterSelector, cluster_claims
from fleetwarden.scheduling.ocm.plugins.taint_toleration import NAME as TAINT_TOLERATION
from fleetwarden.scheduling.ocm.scheduler import ScheduleResult, schedule
from fleetwarden.scheduling.ocm.scheduling_controller import DISABLE_ANNOTATION, Candidates
from fleetwarden.scheduling.ocm.set_members import ClusterSetError
from fleetwarden.semantics.cluster_sets import cluster_sets_of
from fleetwarden.semantics.selectors import SelectorError
from fleetwarden.semantics.tolerations import ocm_taint_tolerated, taint_to_string
from fleetwarden.store import MemoryStore

# Events of a placement shown as its history, the latest ones.
HISTORY = 20


def is_placement(info: KindInfo) -> bool:
    return (info.group, info.kind) == (PLACEMENT.group, PLACEMENT.kind)


def explain_placement(source: Source, wire: Obj) -> Explanation:
    placement = REGISTRY.decode(wire)
    assert isinstance(placement, Placement)
    meta = placement.metadata
    ex = Explanation(f"Placement {meta.namespace}/{meta.name}", source.where, source.now())
    _Placement(source, placement, ex).explain()
    return ex


class _Placement:
    def __init__(self, source: Source, placement: Placement, ex: Explanation) -> None:
        self.source, self.placement, self.ex = source, placement, ex
        self.namespace = placement.metadata.namespace
        self.now: datetime = ex.now
        self.cache = Cache(MemoryStore())
        # Per cluster, the taints tolerated for a while: (taint, until when).
        self.expiries: dict[str, list[tuple[str, datetime]]] = {}

    def read(
        self, info: Any, namespace: str | None, what: str, fallback: str | None = None
    ) -> list[Obj]:
        """The objects of a kind; when RBAC or anything else refuses, those of `fallback`
        (a namespace) or none, with a note saying so."""
        try:
            return self.source.list(info, namespace)
        except StatusError as exc:
            note = f"{what} could not be read: {read_error(exc)}"
            if fallback is None:
                self.ex.notes.append(note)
                return []
            self.ex.notes.append(f"{note}; only those of namespace {fallback} count")
            try:
                return self.source.list(info, fallback)
            except StatusError:
                return []

    def explain(self) -> None:
        ns = self.namespace
        clusters = self.source.list(MANAGED_CLUSTER)
        sets = self.read(MANAGED_CLUSTER_SET, None, "ManagedClusterSets")
        bindings = self.read(MANAGED_CLUSTER_SET_BINDING, ns, "ManagedClusterSetBindings")
        decisions = self.read(
            PLACEMENT_DECISION, None, "PlacementDecisions of other namespaces", fallback=ns
        )
        scores = self.read(ADD_ON_PLACEMENT_SCORE, None, "AddOnPlacementScores")
        cache = self.cache
        cache.informer(PLACEMENT_DECISION).add_indexers({BY_PLACEMENT: by_placement})
        for info, items in (
            (MANAGED_CLUSTER, clusters),
            (MANAGED_CLUSTER_SET, sets),
            (MANAGED_CLUSTER_SET_BINDING, bindings),
            (PLACEMENT_DECISION, decisions),
            (ADD_ON_PLACEMENT_SCORE, scores),
        ):
            cache.informer(info).replace(items, 0)
        try:
            candidates = Candidates.of(cache, self.placement)
        except ClusterSetError as err:
            # The controller schedules nothing until the set is fixed.
            self.ex.waiting.append(f"a fix of a bound ManagedClusterSet: {err}")
            return
        handle = CacheHandle(cache)
        result, status = schedule(handle, self.placement, candidates.clusters, self.now)
        own = handle.decisions(ns, self.placement.metadata.name)
        decided = {d.cluster_name: d for pd in own for d in pd.status.decisions or ()}
        self.facts(candidates, own)
        if status.is_error():
            self.ex.facts.append(
                ("Scheduler now", f"{status.plugin or 'scheduler'}: {status.message()}")
            )
        elif sorted(result.decisions) != sorted(decided):
            self.ex.facts.append(("Scheduler now", ", ".join(sorted(result.decisions)) or "<none>"))
        typed_sets = [
            s
            for s in cache.informer(MANAGED_CLUSTER_SET).list()
            if isinstance(s, ManagedClusterSet)
        ]
        candidate_names = {c.metadata.name for c in candidates.clusters}
        ranked = sorted(result.prioritizer_scores)
        ranked.sort(key=result.prioritizer_scores.__getitem__, reverse=True)
        for obj in cache.informer(MANAGED_CLUSTER).list():
            assert isinstance(obj, ManagedCluster)
            self.ex.clusters.append(
                self.cluster(obj, typed_sets, candidates, candidate_names, result, ranked, decided)
            )
        self.waits(result, status, decided)
        if not self.ex.waiting:
            self.ex.waiting.append(
                "nothing: the decisions are what the scheduler selects"
                + (", as far as what could be read says (see Notes)" if self.ex.notes else "")
            )
        self.history()

    def facts(self, candidates: Candidates, own: Sequence[PlacementDecision]) -> None:
        spec, facts = self.placement.spec, self.ex.facts
        facts.append(("Cluster sets", ", ".join(spec.cluster_sets or []) or "<any bound>"))
        facts.append(
            (
                "Bound cluster sets",
                ", ".join(b.metadata.name for b in candidates.bindings) or "<none>",
            )
        )
        facts.append(("Eligible cluster sets", ", ".join(candidates.cluster_sets) or "<none>"))
        for label, value in (("Predicates", spec.predicates), ("Tolerations", spec.tolerations)):
            if value:
                wire = [item.to_dict() for item in value]
                facts.append((label, json.dumps(wire, separators=(",", ":"))))
        if spec.number_of_clusters is not None:
            facts.append(("Number of clusters", str(spec.number_of_clusters)))
        policy = spec.prioritizer_policy
        if policy is not None:
            weights = [
                f"{_coordinate(c.score_coordinate)}={1 if c.weight is None else c.weight}"
                for c in policy.configurations or ()
            ]
            facts.append(("Prioritizers", " ".join([policy.mode or "Additive", *weights])))
        for type_ in (CONDITION_SATISFIED, CONDITION_MISCONFIGURED):
            condition = find_condition(self.placement.status.conditions, type_)
            if condition is not None:
                facts.append((type_, f"{condition.status} {condition.reason}: {condition.message}"))
        names = [f"{d.cluster_name}" for pd in own for d in pd.status.decisions or ()]
        facts.append(("Decisions", ", ".join(names) or "<none>"))
        for group in self.placement.status.decision_groups or ():
            facts.append(
                (
                    f"Decision group {group.decision_group_index}",
                    f"{group.decision_group_name or '<unnamed>'}, "
                    f"{group.cluster_count or 0} clusters in PlacementDecisions "
                    f"{', '.join(group.decisions or []) or '<none>'}",
                )
            )

    def cluster(
        self,
        cluster: ManagedCluster,
        sets: Sequence[ManagedClusterSet],
        candidates: Candidates,
        candidate_names: set[str],
        result: ScheduleResult,
        ranked: list[str],
        decided: Mapping[str, Any],
    ) -> ClusterVerdict:
        name = cluster.metadata.name
        verdict = ClusterVerdict(name, name in decided)
        member_of = cluster_sets_of(cluster, sets)
        verdict.notes.append(f"cluster sets: {', '.join(member_of) or '<none>'}")
        if cluster.metadata.deletion_timestamp is not None:
            verdict.why = "being deleted: no placement selects it"
            return verdict
        if name not in candidate_names:
            verdict.why = self.not_candidate(member_of, candidates)
            return verdict
        passed = {
            record.name.rsplit(",", 1)[-1]: set(record.cluster_names)
            for record in result.filter_results
        }
        predicate = passed.get(PREDICATE)
        verdict.verdicts.append(
            Verdict(PREDICATE, True)
            if predicate is not None and name in predicate
            else Verdict(
                PREDICATE, False, self.predicates(cluster) if predicate is not None else "not run"
            )
        )
        if predicate is not None and name in predicate:
            tolerated = passed.get(TAINT_TOLERATION)
            verdict.verdicts.append(self.taints(cluster, verdict, tolerated, name in decided))
        if name in result.prioritizer_scores:
            for prioritizer in result.prioritizer_results:
                score = prioritizer.scores.get(name, 0)
                verdict.scores[f"{prioritizer.name}(x{prioritizer.weight})"] = (
                    score * prioritizer.weight
                )
            verdict.scores["total"] = result.prioritizer_scores[name]
            rank = ranked.index(name) + 1
            wanted = self.placement.spec.number_of_clusters
            if verdict.selected:
                verdict.why = f"selected: ranked {rank} of {len(ranked)}"
            elif name in result.decisions:
                verdict.why = (
                    f"fits, ranked {rank} of {len(ranked)}: the scheduler selects it on its "
                    "next pass"
                )
            else:
                verdict.why = (
                    f"fits, but ranked {rank} of {len(ranked)} and numberOfClusters is {wanted}"
                )
        elif verdict.selected:
            verdict.why = "selected, but no longer fits: the scheduler drops it on its next pass"
        else:
            verdict.why = "does not fit"
        return verdict

    def not_candidate(self, member_of: list[str], candidates: Candidates) -> str:
        ns = self.namespace
        if not member_of:
            return "in no ManagedClusterSet: no placement can select it"
        bound = {b.metadata.name for b in candidates.bindings}
        mine = [s for s in member_of if s in bound]
        if not mine:
            return (
                f"its ManagedClusterSets ({', '.join(member_of)}) are not bound to namespace "
                f"{ns} (no ManagedClusterSetBinding there with Bound=True)"
            )
        wanted = self.placement.spec.cluster_sets or []
        return (
            f"its bound ManagedClusterSets ({', '.join(mine)}) are not among spec.clusterSets "
            f"({', '.join(wanted)})"
        )

    def predicates(self, cluster: ManagedCluster) -> str:
        """Why no predicate matches: for each, the first requirement the cluster misses."""
        labels = cluster.metadata.labels or {}
        claims = cluster_claims(cluster)
        missed = []
        for i, predicate in enumerate(self.placement.spec.predicates or ()):
            try:
                selector = ClusterSelector.of(predicate)
            except SelectorError as err:
                missed.append(f"predicates[{i}]: {err}")
                continue
            label = next((r for r in selector.labels if not r.matches(labels)), None)
            claim = next((r for r in selector.claims if not r.matches(claims)), None)
            if label is not None:
                missed.append(f"predicates[{i}]: labelSelector {label} not met")
            elif claim is not None:
                missed.append(f"predicates[{i}]: claimSelector {claim} not met")
            elif selector.cel is not None:
                missed.append(f"predicates[{i}]: a celSelector expression is not true")
        return "matches none of the predicates: " + "; ".join(missed)

    def taints(
        self,
        cluster: ManagedCluster,
        verdict: ClusterVerdict,
        tolerated: set[str] | None,
        in_decision: bool,
    ) -> Verdict:
        tolerations = self.placement.spec.tolerations or []
        untolerated = []
        for taint in cluster.spec.taints or ():
            answer = ocm_taint_tolerated(taint, tolerations, in_decision=in_decision, now=self.now)
            text = f"{{{taint_to_string(taint)}}}"
            if not answer.tolerated:
                untolerated.append(text)
            elif answer.requeue_time is not None:
                verdict.notes.append(
                    f"taint {text} tolerated until {format_time(answer.requeue_time)}"
                )
                self.expiries.setdefault(verdict.name, []).append((text, answer.requeue_time))
        name = cluster.metadata.name
        if tolerated is None:
            return Verdict(TAINT_TOLERATION, False, "not run")
        if name in tolerated:
            return Verdict(TAINT_TOLERATION, True)
        return Verdict(TAINT_TOLERATION, False, f"untolerated taint {', '.join(untolerated)}")

    def waits(self, result: ScheduleResult, status: Any, decided: Mapping[str, Any]) -> None:
        placement, waiting = self.placement, self.ex.waiting
        if (placement.metadata.annotations or {}).get(DISABLE_ANNOTATION) == "true":
            waiting.append(
                f"scheduling to be enabled again: the annotation {DISABLE_ANNOTATION} "
                "stops the scheduler from touching this placement"
            )
        misconfigured = find_condition(placement.status.conditions, CONDITION_MISCONFIGURED)
        if misconfigured is not None and misconfigured.status == "True":
            waiting.append(f"a fix of the placement: {misconfigured.message}")
        satisfied = find_condition(placement.status.conditions, CONDITION_SATISFIED)
        if satisfied is not None and satisfied.status != "True":
            waiting.append(f"clusters to select ({satisfied.reason}): {satisfied.message}")
        if sorted(result.decisions) != sorted(decided) and not status.is_error():
            waiting.append(
                "the scheduler's next pass: it would select "
                f"{', '.join(sorted(result.decisions)) or 'none'}"
            )
        for verdict in self.ex.clusters:
            for text, until in self.expiries.get(verdict.name, ()) if verdict.selected else ():
                waiting.append(
                    f"the toleration of taint {text} on {verdict.name} to run out at "
                    f"{format_time(until)}: then the scheduler drops {verdict.name}"
                )

    def history(self) -> None:
        try:
            events = self.source.events(self.placement.to_dict())
        except StatusError as exc:
            self.ex.notes.append(f"the placement's Events could not be read: {read_error(exc)}")
            return
        events.sort(key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
        for event in events[-HISTORY:]:
            when = event.get("lastTimestamp") or event.get("eventTime") or ""
            if when:
                when = format_time(parse_time(when))
            count = int(event.get("count") or 1)
            times = f" (x{count})" if count > 1 else ""
            self.ex.history.append(
                f"{when} {event.get('reason', '')}{times}: {event.get('message', '')}"
            )


def _coordinate(coordinate: ScoreCoordinate | None) -> str:
    """A prioritizer as a placement names it: a built-in's name, `resource/score` of an
    AddOn's."""
    if coordinate is None:
        return ""
    if coordinate.add_on is not None:
        return f"{coordinate.add_on.resource_name}/{coordinate.add_on.score_name}"
    return coordinate.built_in or ""
