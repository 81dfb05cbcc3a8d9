"""The store a simulated member's own API serves (`fleetwarden agent --member-api-dir`).

The member's control plane (cluster.py) keeps its nodes, workloads, pods and other objects
in memory; `publish` writes them to this store after each run of the member's agents, so
that kubectl reads them as it would on a real cluster (only what changed is written; this
store gives each object an identity of its own). What users change
through the API goes the other way, as it does on a real cluster where the API is the truth
and controllers follow it:

- a Node's taints, labels and spec.unschedulable (`kubectl taint`, `label`, `cordon`) become
  the member's declared node; the node lifecycle controller's own taints (not-ready,
  unreachable, unschedulable, the pressure ones) stay its own to add and remove;
- a Node deleted leaves the member with its pods, a Node created joins it; a Pod deleted
  is gone from its node, and its workload's controller makes another.

Edits are queued by the store's callback (on the API server's thread) and taken by
`take_edits` on the agents' thread, which alone touches the member; `wake` asks for that
run. Objects created through the API that no controller here owns (a Deployment made
directly on the member, say) are stored and served, and nothing acts on them.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from fleetwarden.api import authentication, authorization
from fleetwarden.api.core import Taint
from fleetwarden.api.errors import AlreadyExists, Conflict, NotFound
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.ocm.work import APPLIED_MANIFEST_WORK_KIND
from fleetwarden.api.registry import BUILTIN_TEMPLATE_KINDS, CORE_KINDS, Registry
from fleetwarden.members.inside.cluster import MemberKube
from fleetwarden.members.inside.nodes import HOSTNAME_LABEL, NodeSpec
from fleetwarden.semantics.pod_scheduling import (
    TAINT_DISK_PRESSURE,
    TAINT_MEMORY_PRESSURE,
    TAINT_NETWORK_UNAVAILABLE,
    TAINT_NOT_READY,
    TAINT_PID_PRESSURE,
    TAINT_UNREACHABLE,
    TAINT_UNSCHEDULABLE,
)
from fleetwarden.store import MemoryStore
from fleetwarden.store.interface import EventType, Obj, WatchEvent

# The kinds a member's API serves: Kubernetes' own (access reviews too), none of the hub's,
# and the AppliedManifestWorks of OCM's work agent.
MEMBER_REGISTRY = Registry(
    [*CORE_KINDS, *BUILTIN_TEMPLATE_KINDS, *authentication.KINDS, *authorization.KINDS,
     APPLIED_MANIFEST_WORK_KIND]
)  # fmt: skip
NODE = MEMBER_REGISTRY.info("v1", "Node")
POD = MEMBER_REGISTRY.info("v1", "Pod")
NAMESPACE = MEMBER_REGISTRY.info("v1", "Namespace")
# The node lifecycle controller's taints: it alone adds and removes them.
CONTROLLER_TAINTS = frozenset({
    TAINT_NOT_READY, TAINT_UNREACHABLE, TAINT_UNSCHEDULABLE, TAINT_MEMORY_PRESSURE,
    TAINT_DISK_PRESSURE, TAINT_PID_PRESSURE, TAINT_NETWORK_UNAVAILABLE,
})  # fmt: skip
# Written in this order, so that an object's namespace and owners come before it.
_ORDER = {"Node": 0, "Namespace": 0, "Deployment": 1, "StatefulSet": 1, "DaemonSet": 1,
          "Job": 1, "ReplicaSet": 2, "Pod": 3}  # fmt: skip

Key = tuple[str, str, str]  # kind, namespace, name


@dataclass(frozen=True)
class _Written:
    """An object as published (without what the store adds), and the version it got."""

    info: KindInfo
    content: Mapping[str, Any]
    resource_version: str


@dataclass(frozen=True)
class _Edit:
    kind: str
    namespace: str
    name: str
    obj: Obj | None  # None: deleted


class MemberApiStore:
    """The member's API store; see the module's doc."""

    def __init__(self) -> None:
        self.store = MemoryStore(kinds=MEMBER_REGISTRY.info)
        self.wake: Callable[[], None] = lambda: None
        self._written: dict[Key, _Written] = {}
        self._edits: list[_Edit] = []
        self._lock = threading.Lock()
        # The thread publishing: what it writes is no user's edit.
        self._publisher: int | None = None
        self.store.subscribe(self._observe)

    # users' edits ------------------------------------------------------------------------

    def _observe(self, event: WatchEvent) -> None:
        obj = event.object
        kind = obj.get("kind", "")
        if threading.get_ident() == self._publisher or kind not in ("Node", "Pod"):
            return
        if kind == "Pod" and event.type is not EventType.DELETED:
            return  # a pod's spec is its workload's: only its deletion is taken
        meta = obj["metadata"]
        deleted = event.type is EventType.DELETED
        with self._lock:
            self._edits.append(
                _Edit(kind, meta.get("namespace", ""), meta["name"], None if deleted else obj)
            )
        self.wake()

    def take_edits(
        self, nodes: Sequence[NodeSpec], kube: MemberKube | None, now: datetime
    ) -> tuple[NodeSpec, ...] | None:
        """The member's declared nodes with users' Node edits made (None: no Node edited);
        the Pods users deleted, deleted from `kube`."""
        with self._lock:
            edits, self._edits = self._edits, []
        if not edits:
            return None
        declared = {spec.name: spec for spec in nodes}
        for edit in edits:
            self._written.pop((edit.kind, edit.namespace, edit.name), None)
            if edit.kind == "Pod":
                if kube is not None:
                    kube.delete_pod(edit.namespace, edit.name, now)
            elif edit.obj is None:
                declared.pop(edit.name, None)
            else:  # a Node created through the API joins (of the default allocatable)
                declared[edit.name] = edited_node(
                    declared.get(edit.name) or NodeSpec(edit.name), edit.obj
                )
        if all(edit.kind == "Pod" for edit in edits):
            return None
        return tuple(declared.values())

    # the member's objects ----------------------------------------------------------------

    def publish(self, objects: Sequence[Mapping[str, Any]]) -> None:
        """Write the member's objects as they are now: what changed, what is new, and the
        deletion of what is gone. An object a user changed since it was published is left
        for the next publish (its edit is queued, and taken first)."""
        self._publisher = threading.get_ident()
        try:
            current = {_key(obj): obj for obj in objects}
            for key in [k for k in self._written if k not in current]:
                self._delete(key)
            for key, obj in sorted(current.items(), key=lambda item: _ORDER.get(item[0][0], 1)):
                self._write(key, obj)
        finally:
            self._publisher = None

    def _delete(self, key: Key) -> None:
        _, namespace, name = key
        written = self._written.pop(key)
        with contextlib.suppress(NotFound):  # collected with its owner, or deleted by a user
            self.store.delete(written.info, name, namespace)

    def _write(self, key: Key, obj: Mapping[str, Any]) -> None:
        written = self._written.get(key)
        if written is not None and written.content == obj:
            return
        info = MEMBER_REGISTRY.info(str(obj["apiVersion"]), str(obj["kind"]))
        try:
            if written is None:
                self._ensure_namespace(key[1])
                stored = self._create(info, obj)
            else:
                stored = self._status(obj, self._update(obj, written.resource_version))
        except (Conflict, NotFound):
            return  # a user's edit or deletion came first: taken at the next run
        self._written[key] = _Written(info, obj, stored["metadata"]["resourceVersion"])

    def _create(self, info: KindInfo, obj: Mapping[str, Any]) -> Obj:
        meta = obj["metadata"]
        # This API server gives its own identity (the member's control plane gave one too).
        identity = ("uid", "resourceVersion", "creationTimestamp")
        fresh = {k: v for k, v in meta.items() if k not in identity}
        try:
            stored = self.store.create({**obj, "metadata": fresh})
        except AlreadyExists:
            # A user edited it since it was published (or made it first): replaced.
            current = self.store.get(info, meta["name"], meta.get("namespace", ""))
            stored = self._update(obj, current["metadata"]["resourceVersion"])
        return self._status(obj, stored)

    def _update(self, obj: Mapping[str, Any], resource_version: str) -> Obj:
        meta = {**obj["metadata"], "resourceVersion": resource_version}
        return self.store.update({**obj, "metadata": meta})

    def _status(self, obj: Mapping[str, Any], stored: Obj) -> Obj:
        if "status" not in obj or stored.get("status") == obj["status"]:
            return stored
        return self.store.update({**stored, "status": obj["status"]}, subresource="status")

    def _ensure_namespace(self, name: str) -> None:
        if not name:
            return
        try:
            self.store.get(NAMESPACE, name)
        except NotFound:
            meta = {"name": name}
            created = self.store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
            self.store.update({**created, "status": {"phase": "Active"}}, subresource="status")


def edited_node(spec: NodeSpec, node: Obj) -> NodeSpec:
    """The node as declared once a user edited its object: its taints but the node
    lifecycle controller's, its labels but the hostname one, spec.unschedulable."""
    node_spec = node.get("spec") or {}
    taints = tuple(
        Taint.model_validate(t) for t in node_spec.get("taints") or []
        if t.get("key") not in CONTROLLER_TAINTS
    )  # fmt: skip
    labels = {k: v for k, v in (node["metadata"].get("labels") or {}).items()
              if k != HOSTNAME_LABEL}  # fmt: skip
    return replace(
        spec, taints=taints, labels=labels, unschedulable=bool(node_spec.get("unschedulable"))
    )


def _key(obj: Mapping[str, Any]) -> Key:
    meta = obj["metadata"]
    return str(obj["kind"]), str(meta.get("namespace", "")), str(meta["name"])
