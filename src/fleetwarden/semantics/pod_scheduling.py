"""Pods on nodes, as Kubernetes decides it: pure rules, no clock, no store.

- `condition_taints`: the node lifecycle controller's TaintNodesByCondition (NoSchedule) and
  taint-based eviction (NoExecute not-ready / unreachable) taints for a node's conditions;
- `default_tolerations`: the DefaultTolerationSeconds admission plugin, and the tolerations
  the DaemonSet controller gives its pods;
- `filter_node`, `score_nodes`, `fit_error`: kube-scheduler's default profile, reduced to the
  plugins that read taints, labels and resources (NodeUnschedulable, TaintToleration,
  NodeAffinity, NodeResourcesFit), with its words for a node that does not fit;
- `max_replicas`: karmada-scheduler-estimator's count of the replicas nodes have room for.

Resources are whole numbers: cpu in millicores, anything else in units (rounded up as
resource.Quantity.Value rounds), and "pods" the number of pods.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from fleetwarden.api.core import (
    NO_EXECUTE,
    NO_SCHEDULE,
    OP_EXISTS,
    PREFER_NO_SCHEDULE,
    NodeSelector,
    Taint,
    Toleration,
)
from fleetwarden.semantics.quantity import milli_value, parse_quantity, value
from fleetwarden.semantics.selectors import SelectorError, node_selector_requirements_as_selector
from fleetwarden.semantics.tolerations import (
    ClusterTaints,
    CompiledTolerations,
    TaintTuple,
    cluster_taints,
)

# The taints of v1 well_known_taints.go.
TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_PID_PRESSURE = "node.kubernetes.io/pid-pressure"
TAINT_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"

# nodeConditionToTaintKeyStatusMap: a condition at this status taints the node NoSchedule.
CONDITION_TAINTS = {
    ("MemoryPressure", "True"): TAINT_MEMORY_PRESSURE,
    ("DiskPressure", "True"): TAINT_DISK_PRESSURE,
    ("PIDPressure", "True"): TAINT_PID_PRESSURE,
    ("NetworkUnavailable", "True"): TAINT_NETWORK_UNAVAILABLE,
}
# DefaultTolerationSeconds' --default-not-ready/unreachable-toleration-seconds.
DEFAULT_TOLERATION_SECONDS = 300
# NonZeroRequested: what scoring counts for a pod that requests no cpu or memory.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
# The default profile's score weights.
TAINT_TOLERATION_WEIGHT = 3
NODE_RESOURCES_FIT_WEIGHT = 1
MAX_NODE_SCORE = 100
_NODE_VERSIONS = itertools.count()
_STATIC_CACHE_LIMIT = 4096


# --- Nodes ---------------------------------------------------------------------------------------


def condition_taints(conditions: Mapping[str, str], unschedulable: bool) -> list[tuple[str, str]]:
    """(key, effect) of the taints the node lifecycle controller keeps on a node with these
    conditions (type to status): Ready False is not-ready, Ready Unknown unreachable (each
    NoSchedule and NoExecute); a pressure or network condition, or spec.unschedulable, is a
    NoSchedule taint."""
    taints: list[tuple[str, str]] = []
    ready = conditions.get("Ready", "True")
    if ready != "True":
        key = TAINT_NOT_READY if ready == "False" else TAINT_UNREACHABLE
        taints += [(key, NO_SCHEDULE), (key, NO_EXECUTE)]
    for (condition, status), key in CONDITION_TAINTS.items():
        if conditions.get(condition) == status:
            taints.append((key, NO_SCHEDULE))
    if unschedulable:
        taints.append((TAINT_UNSCHEDULABLE, NO_SCHEDULE))
    return taints


def resource_amounts(resources: Mapping[str, str | int | float] | None) -> dict[str, int]:
    """Quantities as whole numbers: cpu in millicores, the rest in units."""
    amounts = {}
    for name, quantity in (resources or {}).items():
        parsed = parse_quantity(quantity)
        amounts[name] = milli_value(parsed) if name == "cpu" else value(parsed)
    return amounts


# --- Admission -----------------------------------------------------------------------------------


def _exists(key: str, effect: str, seconds: int | None = None) -> Toleration:
    return Toleration(key=key, operator=OP_EXISTS, effect=effect, toleration_seconds=seconds)


def default_tolerations(
    tolerations: Sequence[Toleration], *, daemon: bool = False, host_network: bool = False
) -> list[Toleration]:
    """A pod's tolerations after admission. The DaemonSet controller gives its pods not-ready
    and unreachable NoExecute tolerations without tolerationSeconds (they stay), and
    NoSchedule ones for the pressure and unschedulable taints (network-unavailable for
    host-network pods), each replacing one of the same key, operator, value and effect.
    DefaultTolerationSeconds then adds 300 s not-ready and unreachable NoExecute tolerations
    unless the pod tolerates that taint already."""
    result = list(tolerations)
    if daemon:
        pressure = [TAINT_DISK_PRESSURE, TAINT_MEMORY_PRESSURE, TAINT_PID_PRESSURE]
        no_schedule = [*pressure, TAINT_UNSCHEDULABLE]
        no_schedule += [TAINT_NETWORK_UNAVAILABLE] if host_network else []
        for toleration in [
            _exists(TAINT_NOT_READY, NO_EXECUTE),
            _exists(TAINT_UNREACHABLE, NO_EXECUTE),
            *(_exists(key, NO_SCHEDULE) for key in no_schedule),
        ]:
            _add_or_update(result, toleration)
    for key in (TAINT_NOT_READY, TAINT_UNREACHABLE):
        if not any(_tolerates_no_execute(t, key) for t in result):
            result.append(_exists(key, NO_EXECUTE, DEFAULT_TOLERATION_SECONDS))
    return result


def _same_toleration(a: Toleration, b: Toleration) -> bool:
    """Toleration.MatchToleration: same key, operator, value and effect."""
    return (a.key, a.operator, a.value, a.effect) == (b.key, b.operator, b.value, b.effect)


def _add_or_update(tolerations: list[Toleration], toleration: Toleration) -> None:
    for i, existing in enumerate(tolerations):
        if _same_toleration(existing, toleration):
            tolerations[i] = toleration
            return
    tolerations.append(toleration)


def _tolerates_no_execute(toleration: Toleration, key: str) -> bool:
    """What DefaultTolerationSeconds counts as tolerating the taint: its key or none, and
    NoExecute or no effect."""
    return (toleration.key or "") in ("", key) and (toleration.effect or "") in ("", NO_EXECUTE)


# --- kube-scheduler ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodNeeds:
    """What scheduling reads of a pod: requests, tolerations, nodeSelector and required node
    affinity (nodeSelectorTerms, ORed)."""

    requests: Mapping[str, int]
    tolerations: tuple[Toleration, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity: NodeSelector | None = None
    _filter: CompiledTolerations = field(init=False, repr=False, compare=False)
    _prefer: CompiledTolerations = field(init=False, repr=False, compare=False)
    _static: dict[int, list[str]] = field(init=False, repr=False, compare=False)
    non_zero: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_filter", CompiledTolerations(self.tolerations))
        # getAllTolerationPreferNoSchedule: tolerations of that effect, or of none.
        prefer = [t for t in self.tolerations if t.effect in (None, "", PREFER_NO_SCHEDULE)]
        object.__setattr__(self, "_prefer", CompiledTolerations(prefer, (PREFER_NO_SCHEDULE,)))
        object.__setattr__(self, "_static", {})
        object.__setattr__(self, "non_zero", _non_zero(self.requests))

    def refusals(self, node: NodeInfo) -> list[str]:
        """What the filters that read only the node's labels, taints and unschedulable say
        of it: remembered per node version (pods of a workload share their needs)."""
        reasons = self._static.get(node.version)
        if reasons is None:
            if len(self._static) >= _STATIC_CACHE_LIMIT:
                self._static.clear()
            reasons = self._static[node.version] = _static_refusals(self, node)
        return reasons

    def untolerated(self, taints: ClusterTaints) -> TaintTuple | None:
        """The first NoSchedule or NoExecute taint the pod does not tolerate."""
        return self._filter.find_untolerated(taints)

    def intolerable_preferences(self, taints: ClusterTaints) -> int:
        """countIntolerableTaintsPreferNoSchedule."""
        return sum(
            1
            for taint in taints
            if taint.effect == PREFER_NO_SCHEDULE and not self._prefer.tolerates((taint,))
        )


@dataclass
class NodeInfo:
    """A node as the scheduler sees it: what it offers, and what its pods request."""

    name: str
    labels: Mapping[str, str]
    taints: ClusterTaints
    unschedulable: bool
    allocatable: Mapping[str, int]
    requested: dict[str, int] = field(default_factory=dict)
    # NonZeroRequested cpu and memory, what LeastAllocated scores.
    non_zero: dict[str, int] = field(default_factory=dict)
    # Tells this node's labels, taints and unschedulable (fixed for the NodeInfo's life)
    # from any other's, so that pods can remember what the filters said of them.
    version: int = field(default_factory=lambda: next(_NODE_VERSIONS))

    @classmethod
    def of(
        cls, name: str, labels: Mapping[str, str], taints: Iterable[Taint], unschedulable: bool,
        allocatable: Mapping[str, int],
    ) -> NodeInfo:  # fmt: skip
        return cls(name, labels, cluster_taints(taints), unschedulable, allocatable)

    def add(self, requests: Mapping[str, int], sign: int = 1) -> None:
        """Count a pod bound to the node (sign -1: one that left)."""
        for totals, amounts in ((self.requested, {**requests, "pods": 1}),
                                (self.non_zero, _non_zero(requests))):  # fmt: skip
            for name, amount in amounts.items():
                totals[name] = totals.get(name, 0) + sign * amount

    def remove(self, requests: Mapping[str, int]) -> None:
        self.add(requests, -1)


def _non_zero(requests: Mapping[str, int]) -> dict[str, int]:
    return {
        "cpu": requests.get("cpu") or DEFAULT_MILLI_CPU_REQUEST,
        "memory": requests.get("memory") or DEFAULT_MEMORY_REQUEST,
    }


UNSCHEDULABLE_REASON = "node(s) were unschedulable"
AFFINITY_REASON = "node(s) didn't match Pod's node affinity/selector"
TOO_MANY_PODS = "Too many pods"
_UNSCHEDULABLE_TAINT = (TaintTuple(TAINT_UNSCHEDULABLE, "", NO_SCHEDULE),)


def matches_node(pod: PodNeeds, name: str, labels: Mapping[str, str]) -> bool:
    """The NodeAffinity filter: every nodeSelector label, and some required term (whose
    matchExpressions read labels and whose matchFields read metadata.name)."""
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    if pod.affinity is None:
        return True
    return any(_term_matches(term, name, labels) for term in pod.affinity.node_selector_terms)


def _term_matches(term: object, name: str, labels: Mapping[str, str]) -> bool:
    expressions = getattr(term, "match_expressions", None) or []
    fields = getattr(term, "match_fields", None) or []
    if not expressions and not fields:
        return False  # an empty term matches no objects
    try:
        if expressions and not node_selector_requirements_as_selector(expressions).matches(labels):
            return False
        node_fields = {"metadata.name": name}
        return not fields or node_selector_requirements_as_selector(fields).matches(node_fields)
    except SelectorError:
        return False


def insufficient(requests: Mapping[str, int], node: NodeInfo) -> list[str]:
    """NodeResourcesFit's reasons: too many pods, then each resource short."""
    requested, allocatable = node.requested, node.allocatable
    if requested.get("pods", 0) + 1 > allocatable.get("pods", 0):
        return [TOO_MANY_PODS]
    return [
        f"Insufficient {name}"
        for name, amount in requests.items()
        if amount > 0 and amount > allocatable.get(name, 0) - requested.get(name, 0)
    ]


def _static_refusals(pod: PodNeeds, node: NodeInfo) -> list[str]:
    if node.unschedulable and pod.untolerated(_UNSCHEDULABLE_TAINT) is not None:
        return [UNSCHEDULABLE_REASON]
    taint = pod.untolerated(node.taints)
    if taint is not None:
        return [f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"]
    if not matches_node(pod, node.name, node.labels):
        return [AFFINITY_REASON]
    return []


def filter_node(pod: PodNeeds, node: NodeInfo) -> list[str]:
    """The reasons the node does not fit (empty: it fits), from the first filter plugin
    that refuses it, in the default profile's order: NodeUnschedulable, TaintToleration,
    NodeAffinity, NodeResourcesFit."""
    return pod.refusals(node) or insufficient(pod.requests, node)


def _least_allocated(pod: PodNeeds, node: NodeInfo) -> int:
    """LeastAllocated over cpu and memory, weighted alike, counting the pod."""
    total = 0
    for name, amount in pod.non_zero.items():
        capacity = node.allocatable.get(name, 0)
        requested = node.non_zero.get(name, 0) + amount
        if capacity > 0 and requested <= capacity:
            total += (capacity - requested) * MAX_NODE_SCORE // capacity
    return total // len(pod.non_zero)


def score_nodes(pod: PodNeeds, nodes: Sequence[NodeInfo]) -> list[int]:
    """Each feasible node's weighted score: TaintToleration (fewest intolerable
    PreferNoSchedule taints best, normalised reversed) and NodeResourcesFit."""
    counts = [pod.intolerable_preferences(node.taints) for node in nodes]
    most = max(counts, default=0)
    return [
        TAINT_TOLERATION_WEIGHT * (MAX_NODE_SCORE - count * MAX_NODE_SCORE // most if most else
                                   MAX_NODE_SCORE)
        + NODE_RESOURCES_FIT_WEIGHT * _least_allocated(pod, node)
        for count, node in zip(counts, nodes, strict=True)
    ]  # fmt: skip


def fit_error(total: int, reasons: Iterable[Sequence[str]]) -> str:
    """FitError.Error(): how many nodes gave each reason, sorted as strings."""
    histogram = Counter(reason for node_reasons in reasons for reason in node_reasons)
    parts = sorted(f"{count} {reason}" for reason, count in histogram.items())
    return f"0/{total} nodes are available: {', '.join(parts)}."


def select_node(pod: PodNeeds, nodes: Sequence[NodeInfo]) -> NodeInfo | str:
    """The node the pod goes to (the best score; ties to the first, where kube-scheduler
    picks one at random), or the scheduler's message when none fits."""
    feasible, reasons = [], []
    for node in nodes:
        refused = filter_node(pod, node)
        if refused:
            reasons.append(refused)
        else:
            feasible.append(node)
    if not feasible:
        return fit_error(len(nodes), reasons)
    scores = score_nodes(pod, feasible)
    return feasible[scores.index(max(scores))]


# --- karmada-scheduler-estimator -----------------------------------------------------------------


def max_replicas(pod: PodNeeds, nodes: Iterable[NodeInfo]) -> int:
    """How many more pods like this the nodes have room for: only nodes schedulable (or
    whose unschedulable taint the pod tolerates), whose NoSchedule and NoExecute taints it
    tolerates and that match its selector and affinity (IsTolerationMatched,
    IsNodeAffinityMatched), each counting how many times the requests fit in what is left
    (and the pods it allows)."""
    return sum(_room(pod.requests, node) for node in nodes if not pod.refusals(node))


def _room(requests: Mapping[str, int], node: NodeInfo) -> int:
    requested, allocatable = node.requested, node.allocatable
    most = allocatable.get("pods", 0) - requested.get("pods", 0)
    for name, amount in requests.items():
        if amount > 0:
            most = min(most, (allocatable.get(name, 0) - requested.get(name, 0)) // amount)
    return max(most, 0)
