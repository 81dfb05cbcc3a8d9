"""Running a scenario: the hub's real admission, controllers and members on a virtual clock.

At t=0 the objects are applied; at each step's instant its actions run (apply, delete,
members, reject), every controller runs until nothing more is due at that instant, and
its expectations are checked; timers fire at their exact virtual instants in between.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from fleetwarden.admission import default_chain
from fleetwarden.admission.chain import lookup_in
from fleetwarden.api.authentication import ADMIN, UserInfo
from fleetwarden.api.authorization import Attributes
from fleetwarden.api.errors import (
    DecodeError,
    Forbidden,
    Invalid,
    NotFound,
    StatusError,
    WebhookDenied,
)
from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.kinds import KindInfo, served
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY, Registry, serving_crds
from fleetwarden.auth.refusals import forbidden
from fleetwarden.controllers.rbac.bootstrap import ensure_bootstrap_policy
from fleetwarden.hub import bootstrap_policy, hub_controllers
from fleetwarden.members.inside.api_store import MEMBER_REGISTRY
from fleetwarden.members.simulated import SimulatedFleet
from fleetwarden.runtime.access import rbac_authorizer
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.informer import Snapshot
from fleetwarden.runtime.manager import ControllerManager, VirtualDriver, collector_paused
from fleetwarden.sim.expect import Outcome, check
from fleetwarden.sim.recording import Recorder, Recording
from fleetwarden.sim.scenario import (
    Expectation,
    ObjectRef,
    Reject,
    Scenario,
    ScenarioError,
    Step,
    apply_member_changes,
)
from fleetwarden.sim.timeline import Timeline, offset
from fleetwarden.store import MemoryStore
from fleetwarden.store.interface import collection_of

EVENT = REGISTRY.info("v1", "Event")
# OCM's hub runs in a scenario that mentions any of its kinds, so Karmada scenarios do not
# grow its default and global ManagedClusterSets.
OCM_GROUP_SUFFIX = "open-cluster-management.io"


@dataclass(frozen=True)
class Report:
    scenario: str
    outcomes: list[Outcome]
    timeline: list[dict[str, str]]
    recording: Recording  # the same run as data for `simulate --html`
    # Every object's final state, read off the run's store (see `objects`).
    dump: Callable[[], list[dict[str, Any]]] = dataclasses.field(repr=False, compare=False)

    @cached_property
    def objects(self) -> list[dict[str, Any]]:
        """Every object's final state, read when first asked for: most runs never are
        (`simulate` without --dump, `what-if` without --export)."""
        return self.dump()

    @property
    def passed(self) -> int:
        return sum(o.passed for o in self.outcomes)

    @property
    def failed(self) -> int:
        return len(self.outcomes) - self.passed


def _uids(seed: str) -> Callable[[], str]:
    """Deterministic uids: the same scenario names the same objects the same way."""
    count = itertools.count(1)
    return lambda: str(uuid.uuid5(uuid.NAMESPACE_URL, f"fleetwarden.io/{seed}/{next(count)}"))


class Simulation:
    """`restore`: what-if's copy of a hub as the hub stores it, taken at t=0 in place of the
    scenario's objects (the same objects, as a scenario writes them, for an export): the run
    starts from the hub's steady state, with the uids, resourceVersions, generations, owners
    and status the controllers left, as a hub restored from its etcd would, rather than
    admitting and rewriting all of it. The controllers resume what the running ones knew
    of it (Controller.resume): what-if asks what the running hub would do, not a
    restarted one."""

    def __init__(self, scenario: Scenario, *, restore: Sequence[dict[str, Any]] = ()) -> None:
        self.scenario, self.restore = scenario, restore
        self.clock = VirtualClock(scenario.start_time)
        self.registry = scenario_registry(scenario)
        self.store = MemoryStore(
            now=self.clock.now, new_uid=_uids(scenario.name), rng=random.Random(scenario.name),
            kinds=self.registry.info,
        )  # fmt: skip
        self.chain = default_chain(self.registry)
        self.admission = scenario.settings.admission_config()
        enabled = _enabled_kinds(scenario, self.registry)
        self.fleet = SimulatedFleet(scenario.members, enabled)
        manager = ControllerManager(
            self.store, self.clock, scenario.settings, registry=self.registry
        )
        # Members first: at t=0 the fleet registers before the hub acts on the objects.
        manager.add(self.fleet.controller())
        ocm = any(info.group.endswith(OCM_GROUP_SUFFIX) for info in enabled)
        for controller in hub_controllers(self.fleet, enabled, ocm=ocm):
            manager.add(controller)
        self.driver = VirtualDriver(manager)
        self.timeline = Timeline(scenario.start_time, self.clock.now)
        self.recorder = Recorder(scenario.start_time, self.clock.now)
        if any(step.sender for step in scenario.steps):
            # Senders other than the administrator meet the hub's RBAC, its defaults included.
            ensure_bootstrap_policy(self.store, bootstrap_policy())
        self.authorizer = rbac_authorizer(self.store)
        self.outcomes: list[Outcome] = []

    def run(self, progress: Callable[[timedelta], None] | None = None) -> Report:
        """The scenario, run to its end; `progress`, when given, hears at each write how
        far into the scenario the virtual clock is."""
        with collector_paused():
            return self._run(progress)

    def _run(self, progress: Callable[[timedelta], None] | None) -> Report:
        self.store.subscribe(self.timeline.observe)
        self.store.subscribe(self.recorder.observe)
        if progress is not None:
            start = self.scenario.start_time
            self.store.subscribe(lambda _event: progress(self.clock.now() - start))
        snapshot = None
        if self.restore:
            snapshot = self._restore()
        else:
            for where, doc in self.scenario.objects:
                self._apply(where, doc)
        self.driver.start(resume=bool(self.restore), snapshot=snapshot)
        try:
            for step in self.scenario.steps:
                self.driver.run_until(self.scenario.start_time + step.at)
                self._step(step)
            self.driver.run_until(self.scenario.start_time + self.scenario.until)
            self._check(self.scenario.expect)
        finally:
            self.driver.stop()
        return Report(
            self.scenario.name,
            self.outcomes,
            [e.to_dict() for e in self.timeline.entries],
            self.recorder.recording(self.scenario.name, self.outcomes),
            self._dump,
        )

    def _restore(self) -> Snapshot | None:
        """The hub's objects, each decoded as its kind before any is written: what a hub
        answered is trusted no more than a scenario, and the controllers read every object
        typed. A refusal names the object and leaves the run unstarted. Returns what the
        informers start from, when the store held nothing else."""
        empty = self.store.resource_version == 0
        try:
            restored = self.store.restore(self.restore, REGISTRY.decode)
        except (StatusError, ValueError) as exc:
            message = exc.message if isinstance(exc, StatusError) else str(exc)
            raise ScenarioError(self.scenario.file, "objects", message) from None
        objects: dict[str, list[tuple[dict[str, Any], Resource]]] = {}
        for stored, decoded in restored:
            assert decoded is not None
            if isinstance(decoded, Cluster):
                self.fleet.reports_as(decoded)
            info = self.registry.info(stored["apiVersion"], stored["kind"])
            objects.setdefault(collection_of(info), []).append((stored, decoded))
        if not empty or not restored:
            return None
        # The store as the restore's writes left it (oldest first: the last is the newest),
        # not after the collection of dependents whose owners did not come: a store that
        # collected any has moved on, and is listed instead.
        return Snapshot(int(restored[-1][0]["metadata"]["resourceVersion"]), objects)

    def _step(self, step: Step) -> None:
        sender = step.sender or ADMIN
        for where, doc in step.apply:
            self._apply(where, doc, sender)
        for where, ref in step.delete:
            self._delete(where, ref, sender)
        for name, changes in step.members.items():
            path = f"{step.path}.members.{name}"
            state = apply_member_changes(self.fleet.state(name), changes, self.scenario.file, path)
            self.fleet.set_state(name, state)
            if state.nodes is not None:
                self.driver.enqueue(self.fleet.controller_name, name)  # its nodes changed
        for reject in step.reject:
            self.outcomes.append(self._reject(reject, sender))
        self.driver.settle()
        self._check(step.expect)

    def _check(self, expectations: Iterable[Expectation]) -> None:
        at = offset(self.scenario.start_time, self.clock.now())
        reader = _Reader(self.store, self.fleet, self.clock.now(), self.registry)
        self.outcomes.extend(check(e, reader, at) for e in expectations)

    # writes ------------------------------------------------------------------------------

    def _admit(
        self, doc: Mapping[str, Any], sender: UserInfo
    ) -> tuple[KindInfo, Any, dict[str, Any] | None]:
        """The admitted object, and the stored one it updates (None for a create), once the
        sender may create or update it (RBAC, as the API server asks before admission)."""
        info = self.registry.info(str(doc["apiVersion"]), str(doc["kind"]))
        if info.conversion is not None:  # stored in another version, as the API server does
            doc = info.conversion.to_storage(self.registry.decode(doc).to_dict())
            info = info.conversion.storage
        current = _get(self.store, info, doc)
        meta = doc.get("metadata") or {}
        self._authorize(sender, "update" if current else "create", info, meta)
        old = self.registry.decode(current) if current else None
        merged = merge_apply(current, doc) if current else dict(doc)
        admitted = self.chain.admit(
            merged, old, now=self.clock.now(), config=self.admission, user=sender,
            authorizer=self.authorizer, lookup=lookup_in(self.store.get),
        )  # fmt: skip
        return info, admitted, current

    def _authorize(
        self, sender: UserInfo, verb: str, info: KindInfo, meta: Mapping[str, Any]
    ) -> None:
        namespace = str(meta.get("namespace") or ("default" if info.namespaced else ""))
        name = "" if verb == "create" else str(meta.get("name", ""))
        if (info.group, info.plural) == ("", "namespaces"):
            namespace = name  # as RequestInfo has it: a namespace is in itself
        attributes = Attributes(
            sender, verb, info.plural, info.group, namespace, name, api_version=info.version
        )
        decision = self.authorizer.authorize(attributes)
        if not decision.allowed:
            raise forbidden(attributes, decision.reason)

    def _apply(self, where: str, doc: Mapping[str, Any], sender: UserInfo = ADMIN) -> None:
        try:
            info, admitted, current = self._admit(doc, sender)
            wire = admitted.to_dict()
            stored = self.store.update(wire) if current else self.store.create(wire)
            if info.has_status and "status" in doc:
                wire["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
                self.store.update(wire, subresource="status")
        except StatusError as exc:
            raise ScenarioError(self.scenario.file, where, exc.message) from None

    def _delete(self, where: str, ref: ObjectRef, sender: UserInfo) -> None:
        info = self.registry.info(ref.api_version, ref.kind)
        namespace = ref.namespace or ("default" if info.namespaced else "")
        try:
            self._authorize(sender, "delete", info, {"name": ref.name, "namespace": namespace})
            self.store.delete(info, ref.name, namespace)
        except StatusError as exc:
            raise ScenarioError(self.scenario.file, where, exc.message) from None

    def _reject(self, reject: Reject, sender: UserInfo) -> Outcome:
        at = offset(self.scenario.start_time, self.clock.now())
        try:
            self._admit(reject.object, sender)
        except (Invalid, DecodeError, Forbidden, WebhookDenied) as exc:
            # refused by decoding, validation, RBAC or a webhook that asked it
            passed = reject.reason in exc.message
            return Outcome(reject.path, at, passed, "reject", reject.reason, exc.message, None)
        return Outcome(reject.path, at, False, "reject", reject.reason, "admitted", None)

    def _dump(self) -> list[dict[str, Any]]:
        objects: list[dict[str, Any]] = []
        kinds = {
            (i.group, i.plural): i
            for i in [*self.registry.kinds(), *_enabled_kinds(self.scenario, self.registry)]
        }
        for _, info in sorted(kinds.items()):
            if info.stored:
                objects.extend(self.store.list(info).items)
        return objects


def merge_apply(current: Mapping[str, Any], doc: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario's `apply` on an existing object (scenario.md): labels and annotations
    merged key by key (null removes), spec replaced whole, status replaced where given,
    every other top-level field replaced where given."""
    merged = dict(current)
    for key, value in doc.items():
        if key != "metadata":
            merged[key] = value
    meta = dict(current.get("metadata") or {})
    given = doc.get("metadata") or {}
    for field in ("labels", "annotations"):
        if field in given:
            values = {**(meta.get(field) or {}), **(given[field] or {})}
            meta[field] = {k: v for k, v in values.items() if v is not None} or None
            if meta[field] is None:
                del meta[field]
    merged["metadata"] = meta
    return merged


def _get(store: MemoryStore, info: KindInfo, doc: Mapping[str, Any]) -> dict[str, Any] | None:
    meta = doc.get("metadata") or {}
    if not meta.get("name"):
        return None
    namespace = meta.get("namespace") or ("default" if info.namespaced else "")
    try:
        return store.get(info, str(meta["name"]), str(namespace))
    except NotFound:
        return None


class _Reader:
    """What expectations read: the store, at the instant they are checked; or, for a
    `member`, what runs inside that member (its objects loaded into a store of their own,
    so selectors read them as the hub's). `registry`: the kinds the hub serves."""

    def __init__(
        self, store: MemoryStore, fleet: SimulatedFleet, now: datetime, registry: Registry
    ) -> None:
        self.store, self.fleet, self.now, self.registry = store, fleet, now, registry
        self._members: dict[str, MemoryStore] = {}

    def _member_kind(self, api_version: str, kind: str) -> KindInfo:
        """A kind as a member serves it (an AppliedManifestWork there), else as the hub
        does (a custom resource a Work brought)."""
        return MEMBER_REGISTRY.get(api_version, kind) or self.registry.info(api_version, kind)

    def _info(self, api_version: str, kind: str, member: str | None) -> KindInfo:
        return (self._member_kind if member else self.registry.info)(api_version, kind)

    def _store(self, member: str | None) -> MemoryStore:
        if member is None:
            return self.store
        if member not in self._members:
            store = MemoryStore(now=lambda: self.now, kinds=self._member_kind)
            self._members[member] = store
            objects = self.fleet.objects(member, self.now)
            # What the member's API server stores keeps the identity it gave (uid,
            # resourceVersion, generation); what its controllers run is written afresh.
            store.restore(o for o in objects if o["metadata"].get("resourceVersion"))
            for obj in (o for o in objects if not o["metadata"].get("resourceVersion")):
                stored = store.create(obj)
                if "status" in obj:
                    version = stored["metadata"]["resourceVersion"]
                    status = {**obj, "metadata": {**obj["metadata"], "resourceVersion": version}}
                    store.update(status, subresource="status")
        return self._members[member]

    def get(
        self, api_version: str, kind: str, name: str, namespace: str, member: str | None = None
    ) -> dict[str, Any] | None:
        info = self._info(api_version, kind, member)
        namespace = namespace or ("default" if info.namespaced else "")
        try:
            return served(info, self._store(member).get(info, name, namespace))
        except NotFound:
            return None

    def list_objects(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        label_selector: str | None,
        field_selector: str | None,
        member: str | None = None,
    ) -> list[dict[str, Any]]:
        info = self._info(api_version, kind, member)
        listed = self._store(member).list(
            info, namespace, label_selector=label_selector, field_selector=field_selector
        )
        return [served(info, item) for item in listed.items]

    def events(self) -> list[dict[str, Any]]:
        return self.store.list(EVENT).items


def _documents(scenario: Scenario) -> list[Mapping[str, Any]]:
    """Every object the scenario applies, at t=0 or in a step."""
    docs = [doc for _, doc in scenario.objects]
    return docs + [doc for step in scenario.steps for _, doc in step.apply]


def _enabled_kinds(scenario: Scenario, registry: Registry) -> list[KindInfo]:
    """Every apiVersion/kind the scenario mentions: the APIs its members report enabled."""
    unique = {(str(d["apiVersion"]), str(d["kind"])) for d in _documents(scenario)}
    return [registry.info(api_version, kind) for api_version, kind in sorted(unique)]


def scenario_registry(scenario: Scenario) -> Registry:
    """The kinds a simulated hub serves: the registered ones, and those the scenario's
    CustomResourceDefinitions define, from t=0, as if each were established before
    anything is applied."""
    return serving_crds(_documents(scenario))
