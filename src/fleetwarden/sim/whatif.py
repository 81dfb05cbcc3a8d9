"""`fleetwarden what-if`: the live hub copied into a scenario, faults added, run on the
virtual clock, and what would happen read off the run.

What is copied (through the API, as the user may read it): Clusters and ManagedClusters
with their spec (taints with timeAdded) and status (conditions, claims); each Cluster, and
each ManagedCluster a fault hits, backed by a simulated member that is reachable and ready
as the cluster is now, with its allocatable (the other ManagedClusters stay as reported);
the Leases of Pull clusters (karmada-cluster) and of ManagedClusters; ClusterTaintPolicies,
(Cluster)PropagationPolicies, (Cluster)OverridePolicies; ManagedClusterSets, their
bindings, Placements, PlacementDecisions and AddOnPlacementScores; ResourceBindings and
ClusterResourceBindings as they are, with their clusters, their applied placement and
their graceful eviction tasks, so the scheduler keeps what the hub scheduled (as
karmada-scheduler leaves an already-scheduled binding alone) and eviction tasks in progress
go on; the Works the binding controller made of them, with their status (a simulated
member runs a Work reported applied and healthy on, healthy at once); the resource
templates the policies select or the bindings name; the namespaces of all of them. The
run restores them as the hub stores them (Simulation's restore: uids, resourceVersions,
generations, owners among them, status), as a hub restored from its etcd starts: the
bindings and Works name their templates by uid and resourceVersion, so the run starts from
the hub's steady state instead of admitting, making, applying and reporting every binding
and Work again (the answer is the same, sooner). The scenario (`--export`) has them as a
scenario writes objects: name, namespace, uid, labels, annotations, finalizers, spec and
status.

What is not: the ClusterClaims of a ManagedCluster a fault hits (a simulated member reports
none), Events, RBAC, members' own objects (nodes, pods), objects being deleted (copied as if
not).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from fleetwarden.api.errors import Forbidden, NotFound, StatusError
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import format_time
from fleetwarden.api.ocm.cluster import TAINT_EFFECTS as OCM_EFFECTS
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.names import EXECUTION_SPACE_PREFIX
from fleetwarden.semantics.durations import DurationError, format_duration, parse_duration
from fleetwarden.semantics.selectors import SelectorError, parse_selector
from fleetwarden.semantics.taint_edit import CORE_EFFECTS, TaintError, parse_taints
from fleetwarden.sim.scenario import API_VERSION
from fleetwarden.store import Store

Obj = dict[str, Any]

# The hub's settings, as `fleetwarden up` publishes them (flag name -> value).
SETTINGS_NAMESPACE = "karmada-system"
SETTINGS_CONFIGMAP = "fleetwarden-hub-settings"

CLUSTER = ("cluster.karmada.io/v1alpha1", "Cluster")
MANAGED_CLUSTER = ("cluster.open-cluster-management.io/v1", "ManagedCluster")
BINDINGS = (
    ("work.karmada.io/v1alpha2", "ResourceBinding"),
    ("work.karmada.io/v1alpha2", "ClusterResourceBinding"),
)
POLICIES = (
    ("policy.karmada.io/v1alpha1", "PropagationPolicy"),
    ("policy.karmada.io/v1alpha1", "ClusterPropagationPolicy"),
)
# Copied in this order: what admission of a later kind may look up comes first.
FLEET_KINDS = (
    CLUSTER,
    MANAGED_CLUSTER,
    # Their Available condition gives the ManagedCluster its feature.open-cluster-management.io
    # labels, which Placements select by.
    ("addon.open-cluster-management.io/v1alpha1", "ManagedClusterAddOn"),
    ("policy.karmada.io/v1alpha1", "ClusterTaintPolicy"),
    *POLICIES,
    ("policy.karmada.io/v1alpha1", "OverridePolicy"),
    ("policy.karmada.io/v1alpha1", "ClusterOverridePolicy"),
    ("cluster.open-cluster-management.io/v1beta2", "ManagedClusterSet"),
    ("cluster.open-cluster-management.io/v1beta2", "ManagedClusterSetBinding"),
    ("cluster.open-cluster-management.io/v1beta1", "Placement"),
    ("cluster.open-cluster-management.io/v1beta1", "PlacementDecision"),
    ("cluster.open-cluster-management.io/v1alpha1", "AddOnPlacementScore"),
    *BINDINGS,
    ("work.karmada.io/v1alpha1", "Work"),
)
LEASE = ("coordination.k8s.io/v1", "Lease")
KARMADA_LEASE_NAMESPACE = "karmada-cluster"
OCM_LEASE_NAME = "managed-cluster-lease"
UNSCHEDULABLE_TAINT = {"key": "cluster.karmada.io/unschedulable", "effect": "NoSchedule"}
# Metadata the copy keeps; the rest (uid, resourceVersion, owners, ...) is the hub's own.
KEPT_METADATA = ("name", "namespace", "uid", "labels", "annotations", "finalizers")
# Metadata the run's restore leaves out: the copy is of objects as if not being deleted.
NOT_RESTORED = ("deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink")
# The Events of fleet protection (a region's state, the hub's own connectivity).
PROTECTION_REASONS = ("RegionStateChanged", "HubDisruption", "HubDisruptionEnded")
FAULT_KINDS = ("unreachable", "not-ready", "cordon", "taint")
# How long the run goes on after the last fault begins or ends, unless --until says.
AFTERMATH = timedelta(minutes=10)


class WhatIfError(ValueError):
    """A fault or a copy that cannot be: names the flag or object and the rule."""


class Source(Protocol):
    """Where the fleet is read: the hub's API (explain's ApiSource), or a simulated hub's
    store (StoreSource)."""

    def get(self, info: KindInfo, name: str, namespace: str = "") -> Obj | None:
        """The object, or None when there is none."""
        ...

    def list(
        self, info: KindInfo, namespace: str | None = None, *, label_selector: str | None = None
    ) -> list[Obj]:
        """The objects of the kind (in the namespace, or all when None)."""
        ...


# --- faults ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """One fault: what happens to the clusters selected, from `at`, for `lasts` (None: to
    the end of the run)."""

    kind: str  # one of FAULT_KINDS
    selector: str = ""
    names: tuple[str, ...] = ()
    region: str = ""  # a Karmada Cluster's spec.region
    at: timedelta = timedelta(0)
    lasts: timedelta | None = None
    taint: Obj | None = None  # for "taint"

    def describe(self, clusters: Sequence[str]) -> str:
        what = self.kind if self.taint is None else f"taint {_taint_text(self.taint)}"
        parts = (f"region {self.region}" if self.region else "", self.selector, *self.names)
        chosen = " ".join(part for part in parts if part)
        when = f"at {format_duration(self.at)}"
        if self.lasts is not None:
            when += f" for {format_duration(self.lasts)}"
        return f"{what} {chosen} ({len(clusters)} clusters: {_few(clusters)}) {when}"


def make_fault(
    kind: str,
    *,
    selector: str = "",
    names: Sequence[str] = (),
    region: str = "",
    at: str = "0s",
    lasts: str | None = None,
    taint: str | None = None,
) -> Fault:
    """A fault from its flags' text, checked: the selector parses, durations are durations,
    the taint is `key[=value]:Effect`."""
    if kind not in FAULT_KINDS:
        raise WhatIfError(f"unknown fault {kind!r}: use one of {', '.join(FAULT_KINDS)}")
    if not selector and not names and not region:
        raise WhatIfError(
            f"{kind}: which clusters? give cluster names, -l SELECTOR or --region REGION"
        )
    if selector:
        try:
            parse_selector(selector)
        except SelectorError as exc:
            raise WhatIfError(f"{kind}: -l {selector!r}: {exc}") from None
    parsed_taint = _parse_taint(taint) if kind == "taint" else None
    return Fault(
        kind,
        selector,
        tuple(names),
        region,
        flag_duration("--at", at),
        flag_duration("--for", lasts) if lasts is not None else None,
        parsed_taint,
    )


def parse_fault(text: str) -> Fault:
    """`--fault "unreachable -l region=eu-west --at 5m --for 15m"`: the flags of one fault,
    in the words of the command's own flags (`taint KEY=VALUE:EFFECT -l ...`)."""
    words = shlex.split(text)
    if not words:
        raise WhatIfError("--fault: empty")
    kind, rest = words[0], words[1:]
    options: dict[str, str] = {}
    names: list[str] = []
    if kind == "taint":
        if not rest:
            raise WhatIfError("--fault taint: needs KEY[=VALUE]:EFFECT")
        options["taint"], rest = rest[0], rest[1:]
    flags = {"-l": "selector", "--selector": "selector", "--region": "region", "--at": "at",
             "--for": "lasts"}  # fmt: skip
    while rest:
        word = rest.pop(0)
        if word in flags:
            if not rest:
                raise WhatIfError(f"--fault {text!r}: {word} needs a value")
            options[flags[word]] = rest.pop(0)
        elif word.startswith("-"):
            raise WhatIfError(
                f"--fault {text!r}: unknown flag {word}; use -l, --region, --at, --for"
            )
        else:
            names.append(word)
    return make_fault(kind, names=names, **options)


def flag_duration(flag: str, text: str) -> timedelta:
    try:
        return parse_duration(int(text) if text.isdigit() else text)
    except DurationError as exc:
        raise WhatIfError(f"{flag} {text!r}: {exc}") from None


def _parse_taint(text: str | None) -> Obj:
    if not text:
        raise WhatIfError("--taint: needs KEY[=VALUE]:EFFECT")
    try:
        added, removed = parse_taints([text], (*CORE_EFFECTS, *OCM_EFFECTS))
    except TaintError as exc:
        raise WhatIfError(f"--taint {text!r}: {exc}") from None
    if removed or len(added) != 1:
        raise WhatIfError(f"--taint {text!r}: give one taint to add, KEY[=VALUE]:EFFECT")
    return added[0].to_dict()


def _taint_text(taint: Mapping[str, Any]) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint['key']}{value}:{taint['effect']}"


def _few(names: Sequence[str], shown: int = 5) -> str:
    more = f", ... {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


# --- the copy --------------------------------------------------------------------------------


@dataclass
class Fleet:
    """The hub's objects as a scenario's `objects` and as the hub stores them (`stored`,
    which the run restores), and its clusters as `members`."""

    objects: list[Obj] = field(default_factory=list)
    stored: list[Obj] = field(default_factory=list)
    members: dict[str, Obj] = field(default_factory=dict)
    clusters: dict[str, Obj] = field(default_factory=dict)  # name -> the Cluster copied


def copy_fleet(source: Source, workload_ready_after: timedelta = timedelta(0)) -> Fleet:
    """The live fleet, as a scenario sees it (the module's docstring says what is copied);
    its members report a workload healthy `workload_ready_after` it is applied."""
    fleet = Fleet()
    by_kind = {kind: _list(source, *kind) for kind in FLEET_KINDS}
    for cluster_kind in (CLUSTER, MANAGED_CLUSTER):
        for cluster in by_kind[cluster_kind]:
            name = cluster["metadata"]["name"]
            _decodes(cluster)  # read here before the run decodes it
            fleet.clusters[name] = cluster
            fleet.members[name] = member_state(cluster)
            if workload_ready_after:
                fleet.members[name]["workloadReadyAfter"] = format_duration(workload_ready_after)
    copied = [obj for kind in FLEET_KINDS for obj in by_kind[kind]]
    copied += _leases(source, by_kind[MANAGED_CLUSTER])
    templates = _templates(source, by_kind)
    copied += templates
    names = {obj["metadata"].get("namespace") or "" for obj in copied} - {""}
    spaces = {EXECUTION_SPACE_PREFIX + c["metadata"]["name"] for c in by_kind[CLUSTER]} - names
    namespaces = _namespaces(source, sorted(names), spaces)
    # A scenario's clusters get their execution spaces when they join: not exported.
    exported = [ns for ns in namespaces if ns["metadata"]["name"] in names]
    fleet.objects = [*map(_scenario_namespace, exported), *map(_clean, copied)]
    uids = {obj["metadata"].get("uid") for obj in [*namespaces, *copied]}
    fleet.stored = [_restorable(obj, uids) for obj in [*namespaces, *copied]]
    _name_templates_as_they_are(fleet.stored, templates)
    return fleet


def member_state(cluster: Mapping[str, Any]) -> Obj:
    """A simulated member that behaves as the cluster does now: not answering when its
    health condition is Unknown, answering not ready when False; its allocatable."""
    health = "Ready" if cluster["kind"] == "Cluster" else "ManagedClusterConditionAvailable"
    conditions = (cluster.get("status") or {}).get("conditions") or []
    status = next((c.get("status") for c in conditions if c.get("type") == health), None)
    state: Obj = {}
    if status == "Unknown":
        state["reachable"] = False
    elif status == "False":
        state["ready"] = False
    allocatable = _allocatable(cluster)
    if allocatable:
        state["allocatable"] = allocatable
    return state


def _allocatable(cluster: Mapping[str, Any]) -> dict[str, str]:
    status = cluster.get("status") or {}
    given = (status.get("resourceSummary") or {}).get("allocatable") or status.get("allocatable")
    return {str(k): str(v) for k, v in (given or {}).items() if k in ("cpu", "memory", "pods")}


def _leases(source: Source, managed_clusters: Iterable[Obj]) -> list[Obj]:
    lease_info = REGISTRY.info(*LEASE)
    leases = source.list(lease_info, KARMADA_LEASE_NAMESPACE)
    for cluster in managed_clusters:
        lease = source.get(lease_info, OCM_LEASE_NAME, cluster["metadata"]["name"])
        if lease is not None:
            leases.append(lease)
    return _shaped(leases, "Lease")


def _templates(source: Source, by_kind: Mapping[tuple[str, str], list[Obj]]) -> list[Obj]:
    """The resource templates of every kind a policy selects or a binding names."""
    kinds: set[tuple[str, str]] = set()
    for policy_kind in POLICIES:
        for policy in by_kind[policy_kind]:
            for selector in (policy.get("spec") or {}).get("resourceSelectors") or []:
                kinds.add((str(selector.get("apiVersion")), str(selector.get("kind"))))
    for binding_kind in BINDINGS:
        for binding in by_kind[binding_kind]:
            resource = (binding.get("spec") or {}).get("resource") or {}
            kinds.add((str(resource.get("apiVersion")), str(resource.get("kind"))))
    # Each kind once, in the version it is stored in (policies may name several).
    stored = {_storage(info) for kind in kinds if (info := REGISTRY.get(*kind)) is not None}
    templates: list[Obj] = []
    for info in sorted(stored, key=lambda info: (info.group, info.plural)):
        templates += _list(source, info.api_version, info.kind)
    return templates


def _storage(info: KindInfo) -> KindInfo:
    return info.conversion.storage if info.conversion is not None else info


def _list(source: Source, api_version: str, kind: str) -> list[Obj]:
    """Every object of the kind, in every namespace; none when the hub does not serve it
    (one of an older version, say)."""
    try:
        return _shaped(source.list(REGISTRY.info(api_version, kind)), kind)
    except NotFound:
        return []


def _shaped(objects: list[Any], kind: str) -> list[Obj]:
    """What the hub answered, checked to be objects with metadata naming them; the run
    decodes each as its kind before it starts, and refuses the rest naming the object."""
    for obj in objects:
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
            raise WhatIfError(f"the hub answered a {kind} without metadata.name: {obj!r:.80}")
    return objects


def _decodes(obj: Obj) -> None:
    """A WhatIfError naming the object unless it decodes as its kind."""
    try:
        REGISTRY.decode(obj)
    except (StatusError, ValueError) as exc:
        message = exc.message if isinstance(exc, StatusError) else str(exc)
        raise WhatIfError(f"the hub answered a {obj.get('kind')} it cannot be: {message}") from None


def _namespaces(source: Source, names: list[str], spaces: set[str]) -> list[Obj]:
    """The namespaces of `names` as the hub has them (only the name of one it does not
    have), and those of `spaces` it has: the execution spaces of clusters no Work is in,
    which its cluster controller made when they joined. One listing; a read each where
    the user may not list them."""
    info = REGISTRY.info("v1", "Namespace")
    try:
        listed = {ns["metadata"]["name"]: ns for ns in _shaped(source.list(info), "Namespace")}
    except Forbidden:
        found = {name: source.get(info, name) for name in [*names, *sorted(spaces)]}
        listed = {name: _shaped([ns], "Namespace")[0] for name, ns in found.items() if ns}
    bare = {"apiVersion": "v1", "kind": "Namespace"}
    kept = [listed.get(name) or {**bare, "metadata": {"name": name}} for name in names]
    return kept + [listed[name] for name in sorted(spaces) if name in listed]


def _scenario_namespace(namespace: Obj) -> Obj:
    meta = namespace["metadata"]
    labels = {"labels": meta["labels"]} if meta.get("labels") else {}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": meta["name"], **labels}}


def _name_templates_as_they_are(stored: list[Obj], templates: Iterable[Obj]) -> None:
    """Each binding names its template's resourceVersion now. The hub's detector passes
    over a template's status changes (the status it aggregates back, say), so a binding
    names the version it was last built from; a detector started afresh builds every
    binding again and writes each one whose template's version moved on. The run is the
    hub going on, not starting over: its bindings are as that rebuild would leave them."""
    versions = {t["metadata"].get("uid"): t["metadata"].get("resourceVersion") for t in templates}
    for i, obj in enumerate(stored):
        spec = obj.get("spec")
        if (obj.get("apiVersion"), obj.get("kind")) not in BINDINGS or not isinstance(spec, dict):
            continue
        resource = spec.get("resource")
        # None for a template not copied, or a binding the run's decoding refuses.
        if isinstance(resource, dict) and (version := versions.get(resource.get("uid"))):
            resource = {**resource, "resourceVersion": version}
            stored[i] = {**obj, "spec": {**spec, "resource": resource}}


def _restorable(obj: Obj, copied: set[Any]) -> Obj:
    """The object as the hub stores it, for the run to restore: as if not being deleted, and
    owned only by what was copied (an owner left out would have it collected)."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in NOT_RESTORED}
    given = meta.pop("ownerReferences", None) or []
    if isinstance(given, list):  # else the run's decoding refuses it
        given = [ref for ref in given if isinstance(ref, dict) and ref.get("uid") in copied]
    if given:
        meta["ownerReferences"] = given
    return {**obj, "metadata": meta}


def _clean(obj: Mapping[str, Any]) -> Obj:
    meta = obj.get("metadata") or {}
    copy = {k: v for k, v in obj.items() if k != "metadata"}
    copy["metadata"] = {k: meta[k] for k in KEPT_METADATA if meta.get(k)}
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], **copy}


# --- the scenario ----------------------------------------------------------------------------


def build_scenario(
    fleet: Fleet,
    faults: Sequence[Fault],
    settings: Mapping[str, str],
    start: datetime,
    until: timedelta | None = None,
) -> Obj:
    """The scenario document (spec/scenario.md): the fleet at t=0, each fault a step."""
    steps: dict[timedelta, Obj] = {}
    faulted: set[str] = set()
    for fault in faults:
        clusters = selected_clusters(fleet, fault)
        faulted.update(clusters)
        _fault_step(steps, fault.at, fleet, fault, clusters, begins=True)
        if fault.lasts is not None:
            _fault_step(steps, fault.at + fault.lasts, fleet, fault, clusters, begins=False)
    last = max([*steps, timedelta(0)])
    run_until = until if until is not None else last + AFTERMATH
    if run_until < last:
        raise WhatIfError(f"--until {format_duration(run_until)}: before the last fault's end")
    return {
        "apiVersion": API_VERSION,
        "kind": "Scenario",
        "metadata": {"name": "what-if"},
        "spec": {
            "description": "; ".join(f.describe(selected_clusters(fleet, f)) for f in faults),
            "startTime": format_time(start),
            "settings": dict(settings),
            "members": _members(fleet, faulted),
            "objects": fleet.objects,
            "steps": [{"at": format_duration(at), **steps[at]} for at in sorted(steps)],
            "until": format_duration(run_until),
        },
    }


def _members(fleet: Fleet, faulted: set[str]) -> Obj:
    """The simulated members: every Karmada cluster (its member applies the Works and says
    when workloads are healthy), and the ManagedClusters a fault hits. The other
    ManagedClusters stay reported as they are, with their agents' ClusterClaims, which a
    simulated member would not report."""
    return {
        name: state
        for name, state in fleet.members.items()
        if name in faulted or fleet.clusters[name]["kind"] == "Cluster"
    }


def selected_clusters(fleet: Fleet, fault: Fault) -> list[str]:
    """The clusters the fault hits; a name that is no cluster of the hub is an error."""
    unknown = [n for n in fault.names if n not in fleet.clusters]
    if unknown:
        raise WhatIfError(f"{fault.kind}: no cluster named {', '.join(unknown)} on the hub")
    chosen = set(fault.names)
    if fault.region:
        chosen |= {
            name
            for name, cluster in fleet.clusters.items()
            if (cluster.get("spec") or {}).get("region") == fault.region
        }
    if fault.selector:
        selector = parse_selector(fault.selector)
        chosen |= {
            name
            for name, cluster in fleet.clusters.items()
            if selector.matches(cluster["metadata"].get("labels") or {})
        }
    if fault.kind == "cordon":
        ocm = [n for n in chosen if fleet.clusters[n]["kind"] != "Cluster"]
        if ocm:
            raise WhatIfError(
                f"cordon: {', '.join(sorted(ocm))} are ManagedClusters; OCM has no cordon, "
                "taint them NoSelect instead (--taint KEY:NoSelect)"
            )
    if not chosen:
        which = f"region {fault.region!r}" if fault.region else repr(fault.selector)
        raise WhatIfError(f"{fault.kind}: no cluster matches {which}")
    return sorted(chosen)


def _fault_step(
    steps: dict[timedelta, Obj],
    at: timedelta,
    fleet: Fleet,
    fault: Fault,
    clusters: Sequence[str],
    *,
    begins: bool,
) -> None:
    step = steps.setdefault(at, {})
    if fault.kind in ("unreachable", "not-ready"):
        switch = "reachable" if fault.kind == "unreachable" else "ready"
        members = step.setdefault("members", {})
        for name in clusters:
            members.setdefault(name, {})[switch] = not begins
        return
    taint = UNSCHEDULABLE_TAINT if fault.taint is None else fault.taint
    for name in clusters:
        step.setdefault("apply", []).append(_tainted(fleet.clusters[name], taint, begins))


def _tainted(cluster: Mapping[str, Any], taint: Mapping[str, Any], add: bool) -> Obj:
    """The cluster's spec as copied, with the taint added (or without it, once the fault
    ends); an apply replaces spec whole, and the hub's own taints come back as it sees fit."""
    spec = dict(cluster.get("spec") or {})
    same = (taint["key"], taint["effect"])
    taints = [t for t in spec.get("taints") or [] if (t.get("key"), t.get("effect")) != same]
    spec["taints"] = [*taints, dict(taint)] if add else taints
    meta = {"name": cluster["metadata"]["name"]}
    return {"apiVersion": cluster["apiVersion"], "kind": cluster["kind"], "metadata": meta,
            "spec": spec}  # fmt: skip


# --- the answer ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    at: float
    workload: str
    before: dict[str, int | None]
    after: dict[str, int | None]


@dataclass(frozen=True)
class Stranded:
    """A workload that had nowhere to go: on no cluster from `start` to `end` (None: still
    at the end of the run)."""

    workload: str
    start: float
    end: float | None

    def to_dict(self) -> Obj:
        end = None if self.end is None else _at(self.end)
        return {"workload": self.workload, "since": _at(self.start), "until": end}


@dataclass(frozen=True)
class Waiting:
    """A graceful eviction task: from when to when (None: still waiting at the end)."""

    workload: str
    cluster: str
    reason: str
    start: float
    end: float | None

    def to_dict(self) -> Obj:
        retired = None if self.end is None else _at(self.end)
        return {"workload": self.workload, "fromCluster": self.cluster, "reason": self.reason,
                "since": _at(self.start), "retired": retired}  # fmt: skip


@dataclass(frozen=True)
class Answer:
    faults: list[str]
    until: float
    moves: list[Move]
    stranded: list[Stranded]
    evictions: list[Waiting]
    protection: list[dict[str, str]]  # fleet protection's Events, as the timeline has them

    def to_dict(self) -> Obj:
        return {
            "faults": self.faults,
            "until": format_duration(timedelta(seconds=self.until)),
            "moves": [
                {"at": _at(m.at), "workload": m.workload, "from": m.before, "to": m.after}
                for m in self.moves
            ],
            "nowhereToGo": [s.to_dict() for s in self.stranded],
            "evictionTasks": [w.to_dict() for w in self.evictions],
            "fleetProtection": self.protection,
        }


def answer(
    scenario: Mapping[str, Any], recording: Mapping[str, Any], timeline: list[dict[str, str]]
) -> Answer:
    """What the run says would happen, from its recording and its timeline's Events."""
    moves = [
        Move(after["at"], lane["name"], before["clusters"], after["clusters"])
        for lane in recording["workloads"]
        for before, after in zip(lane["placements"], lane["placements"][1:], strict=False)
        if after["at"] > 0
    ]
    evictions = [
        Waiting(lane["name"], e["cluster"], e["reason"], e["start"], e["end"])
        for lane in recording["workloads"]
        for e in lane["evictions"]
    ]
    protection = [e for e in timeline if e["action"].removeprefix("event ") in PROTECTION_REASONS]
    return Answer(
        [str(scenario["spec"]["description"])],
        float(recording["end"]),
        sorted(moves, key=lambda m: (m.at, m.workload)),
        sorted(_stranded(recording), key=lambda s: (s.start, s.workload)),
        sorted(evictions, key=lambda w: (w.start, w.workload, w.cluster)),
        protection,
    )


def _stranded(recording: Mapping[str, Any]) -> list[Stranded]:
    """Each time a workload placed somewhere was left on no cluster, and until when."""
    stranded = []
    for lane in recording["workloads"]:
        placements = lane["placements"]
        for i, placement in enumerate(placements):
            if i and not placement["clusters"] and placements[i - 1]["clusters"]:
                end = placements[i + 1]["at"] if i + 1 < len(placements) else None
                stranded.append(Stranded(lane["name"], placement["at"], end))
    return stranded


def _unscheduled(obj: Mapping[str, Any]) -> tuple[str, str] | None:
    """A binding not scheduled (NoClusterFit, Unschedulable), a Placement not satisfied:
    its condition and reason."""
    kind = obj.get("kind")
    condition = {
        "ResourceBinding": "Scheduled",
        "ClusterResourceBinding": "Scheduled",
        "Placement": "PlacementSatisfied",
    }.get(str(kind))
    if condition is None:
        return None
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == condition and c.get("status") == "False":
            return condition, str(c.get("reason", ""))
    return None


def answer_text(result: Answer) -> str:
    lines = [f"what-if: {fault}" for fault in result.faults]
    lines.append(f"ran {format_duration(timedelta(seconds=result.until))} of virtual time")
    lines += ["", f"workloads that move ({len(result.moves)}):"]
    lines += [
        f"  {_at(m.at):>8}  {m.workload}: {_clusters(m.before)} -> {_clusters(m.after)}"
        for m in result.moves
    ] or ["  none"]
    lines += ["", f"nowhere to go ({len(result.stranded)}):"]
    lines += [
        f"  {_at(s.start):>8}  {s.workload}: "
        + ("still at the end" if s.end is None else f"until {_at(s.end)}")
        for s in result.stranded
    ] or ["  none"]
    lines += ["", f"eviction tasks ({len(result.evictions)}):"]
    lines += [f"  {_at(w.start):>8}  {w.workload}: {_waited(w)}" for w in result.evictions] or [
        "  none"
    ]
    lines += ["", "fleet protection:"]
    lines += [f"  {e['at']:>8}  {e['object']}: {e['detail']}" for e in result.protection] or [
        "  no region changed state"
    ]
    return "\n".join(lines)


def _waited(task: Waiting) -> str:
    held = f"from {task.cluster} ({task.reason})"
    if task.end is None:
        return f"{held} still waiting at the end"
    return f"{held} retired at {_at(task.end)}"


def _clusters(clusters: Mapping[str, int | None]) -> str:
    if not clusters:
        return "(nowhere)"
    return ", ".join(
        name if replicas is None else f"{name}({replicas})" for name, replicas in clusters.items()
    )


def _at(seconds: float) -> str:
    return format_duration(timedelta(seconds=seconds))


# --- export ----------------------------------------------------------------------------------


def export(scenario: Mapping[str, Any], objects: list[Obj], result: Answer) -> Obj:
    """The scenario with what the run observed as its expectations at the end: where each
    workload that moved or has nowhere to go ends, and which eviction tasks remain."""
    touched = {m.workload for m in result.moves} | {w.workload for w in result.evictions}
    expect = [
        e
        for obj in objects
        if obj.get("kind") in ("ResourceBinding", "ClusterResourceBinding")
        and _workload_name(obj) in touched
        for e in _binding_expectations(obj)
    ]
    expect += [
        _condition_expectation(obj, *unscheduled)
        for obj in objects
        if (unscheduled := _unscheduled(obj)) is not None
    ]
    spec = {**scenario["spec"], "expect": expect}
    return {**scenario, "spec": spec}


def _workload_name(binding: Mapping[str, Any]) -> str:
    """The recording's name of a binding's workload: `Deployment default/nginx`."""
    resource = (binding.get("spec") or {}).get("resource") or {}
    path = "/".join(p for p in (resource.get("namespace"), resource.get("name")) if p)
    return f"{resource.get('kind', binding.get('kind', ''))} {path}"


def _ref(obj: Mapping[str, Any]) -> Obj:
    meta = obj["metadata"]
    ref = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"]}
    return {**ref, "namespace": meta["namespace"]} if meta.get("namespace") else ref


def _binding_expectations(binding: Mapping[str, Any]) -> list[Obj]:
    spec = binding.get("spec") or {}
    clusters = [[c["name"], c.get("replicas")] for c in spec.get("clusters") or []]
    tasks = sorted(str(t.get("fromCluster")) for t in spec.get("gracefulEvictionTasks") or [])
    return [
        {"object": _ref(binding), "query": "spec.clusters[].[name, replicas]",
         "equals": clusters or None},
        {"object": _ref(binding), "query": "sort(spec.gracefulEvictionTasks[].fromCluster || `[]`)",
         "equals": tasks},
    ]  # fmt: skip


def _condition_expectation(obj: Mapping[str, Any], condition: str, reason: str) -> Obj:
    return {
        "object": _ref(obj),
        "query": f"status.conditions[?type=='{condition}'].[status, reason] | [0]",
        "equals": ["False", reason],
    }


# --- a simulated hub as the source -----------------------------------------------------------


class StoreSource:
    """A simulated hub's store read as the hub's API is (tests, benches)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, info: KindInfo, name: str, namespace: str = "") -> Obj | None:
        try:
            return dict(self.store.get(info, name, namespace))
        except NotFound:
            return None

    def list(
        self, info: KindInfo, namespace: str | None = None, *, label_selector: str | None = None
    ) -> list[Obj]:
        return list(self.store.list(info, namespace, label_selector=label_selector).items)
