"""The REST verbs on one resource: what the API server's generic registry does between the
HTTP handler and the store.

Every create, update and patch goes through admission; an update or patch is admitted
against the object it replaces, and written only if that object is still the stored one
(a patch, or an update that names no resourceVersion, is retried on a newer one, as the
API server's GuaranteedUpdate does). These functions block: the app calls them off its
event loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from fleetwarden.admission.chain import AdmissionChain, AdmissionConfig, lookup_in
from fleetwarden.admission.undeclared import prune_undeclared
from fleetwarden.api import apiextensions
from fleetwarden.api.authentication import ADMIN, UserInfo
from fleetwarden.api.authorization import Authorizer
from fleetwarden.api.errors import (
    BadRequest,
    Conflict,
    DecodeError,
    Forbidden,
    Invalid,
    NotFound,
    Path,
    name_mismatch,
    namespace_mismatch,
    type_mismatch,
)
from fleetwarden.api.kinds import KindInfo, served, stored_as
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import Registry
from fleetwarden.runtime.clock import Clock
from fleetwarden.server import namespaces
from fleetwarden.server.delete_options import DeleteOptions
from fleetwarden.server.scale import SCALE, scale_of, scaled
from fleetwarden.server.validation import FieldValidation, check_fields
from fleetwarden.store.core import apply_patch
from fleetwarden.store.interface import Obj, PatchType, Store

# Attempts at a write whose stored object keeps changing under it.
_WRITE_ATTEMPTS = 5


@dataclass(frozen=True)
class WriteOptions:
    dry_run: bool = False
    field_validation: FieldValidation = FieldValidation.WARN


@dataclass
class Written:
    """A write's result: the object (or Status) to send, and warnings for the client."""

    object: Obj
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ListOptions:
    label_selector: str | None = None
    field_selector: str | None = None
    limit: int | None = None
    continue_: str | None = None


@dataclass(frozen=True)
class Resources:
    """The verbs, for one sender: admission sees who sends each write, and may ask
    `authorizer` what they may do."""

    store: Store
    chain: AdmissionChain
    clock: Clock
    config: AdmissionConfig
    user: UserInfo = ADMIN
    authorizer: Authorizer | None = None

    def as_user(self, user: UserInfo, authorizer: Authorizer) -> Resources:
        return replace(self, user=user, authorizer=authorizer)

    def _review(self, obj: Obj, old: Resource | None, subresource: str | None = None) -> Any:
        return self.chain.review(
            obj, old, now=self.clock.now(), config=self.config, user=self.user,
            authorizer=self.authorizer, subresource=subresource,
            lookup=lookup_in(self.store.get),
        )  # fmt: skip

    # reads -------------------------------------------------------------------------------

    def get(
        self, info: KindInfo, namespace: str | None, name: str, subresource: str | None = None
    ) -> Obj:
        obj = served(info, self.store.get(info, name, namespace or ""))
        return scale_of(info, obj) if subresource == "scale" else obj

    def list(self, info: KindInfo, namespace: str | None, options: ListOptions) -> Obj:
        result = self.store.list(
            stored_as(info),
            namespace,
            label_selector=options.label_selector,
            field_selector=options.field_selector,
            limit=options.limit,
            continue_=options.continue_,
        )
        meta: dict[str, Any] = {"resourceVersion": result.resource_version}
        if result.continue_:
            meta["continue"] = result.continue_
        if result.remaining_item_count is not None:
            meta["remainingItemCount"] = result.remaining_item_count
        return list_document(info, meta, [served(info, item) for item in result.items])

    # writes ------------------------------------------------------------------------------

    def create(
        self, info: KindInfo, namespace: str | None, body: Any, options: WriteOptions
    ) -> Written:
        obj = addressed(info, namespace, None, body)
        if info.custom is not None and info.custom.terminating:
            name = obj["metadata"].get("name") or ""
            raise Forbidden(info.plural, info.group, name, _DEFINITION_TERMINATING)
        if info.namespaced:
            namespaces.require_namespace(self.store, info, obj)
        obj, converted_away = _to_storage(self.chain.registry, info, obj)
        request = self._review(obj, None)
        admitted: Resource = request.obj
        pruned = converted_away + request.pruned
        warnings = check_fields(info, pruned, options.field_validation)
        wire = admitted.to_dict()
        if options.dry_run:
            return Written(served(info, wire), warnings)
        created = self.store.create(wire)
        if info == namespaces.NAMESPACE:
            created = namespaces.activate(self.store, created)
        return Written(served(info, created), warnings)

    def update(
        self,
        info: KindInfo,
        namespace: str | None,
        name: str,
        subresource: str | None,
        body: Any,
        options: WriteOptions,
    ) -> Written:
        obj = addressed(SCALE if subresource == "scale" else info, namespace, name, body)
        return self._write(info, namespace, name, subresource, lambda _: obj, options)

    def patch(
        self,
        info: KindInfo,
        namespace: str | None,
        name: str,
        subresource: str | None,
        patch: bytes,
        patch_type: PatchType,
        options: WriteOptions,
    ) -> Written:
        last: list[Obj] = []
        patched_kind = SCALE if subresource == "scale" else info

        def patched(current: Obj) -> Obj:
            new = apply_patch(patched_kind, current, patch, patch_type)  # the same, or refused
            last[:] = [new]
            return new

        try:
            return self._write(info, namespace, name, subresource, patched, options)
        except DecodeError as exc:
            # The patch handler decodes the patched object itself: a 422 quoting it.
            text = json.dumps(last[0], separators=(",", ":"), ensure_ascii=False)
            raise Invalid("", "", "", [Path("patch").invalid(text, exc.detail)]) from None

    def delete(
        self, info: KindInfo, namespace: str | None, name: str, options: DeleteOptions
    ) -> Obj:
        current = self.get(info, namespace, name)
        _check_preconditions(info, current, options)
        if info == namespaces.NAMESPACE:
            namespaces.check_deletable(name)
        if options.dry_run:
            return current
        if info == apiextensions.KIND:
            _hold_for_cleanup(self.store, current)
        deleted = served(
            info,
            self.store.delete(info, name, namespace or "", propagation=options.propagation),
        )
        meta = deleted["metadata"]
        if ("deletionTimestamp" in meta and meta.get("finalizers")) or not _builtin(info):
            return deleted  # still terminating; a custom resource's registry returns it anyway
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {
                "name": name,
                "group": info.group,
                "kind": info.plural,
                "uid": meta.get("uid", ""),
            },
        }

    def delete_collection(
        self,
        info: KindInfo,
        namespace: str | None,
        options: ListOptions,
        delete_options: DeleteOptions,
    ) -> Obj:
        selectors = ListOptions(options.label_selector, options.field_selector)  # every page
        listed = self.list(info, namespace, selectors)
        deleted = []
        for obj in listed["items"]:
            meta = obj["metadata"]
            try:
                deleted.append(
                    self.delete(info, meta.get("namespace"), meta["name"], delete_options)
                )
            except NotFound:
                continue  # gone meanwhile
        return list_document(info, listed["metadata"], deleted)

    # internals ---------------------------------------------------------------------------

    def _write(
        self,
        info: KindInfo,
        namespace: str | None,
        name: str,
        subresource: str | None,
        change: Callable[[Obj], Obj],
        options: WriteOptions,
    ) -> Written:
        """Admit the change against the stored object and write it if that is still the
        stored one; retried on a newer one unless the change names its own version."""
        for attempt in range(_WRITE_ATTEMPTS):
            stored = self.store.get(info, name, namespace or "")
            current = served(info, stored)
            current_rv = current["metadata"]["resourceVersion"]
            new = _changed(info, current, subresource, change)
            meta = new["metadata"] = dict(new["metadata"])
            given_rv = meta.get("resourceVersion")
            meta["resourceVersion"] = given_rv or current_rv
            new, converted_away = _to_storage(self.chain.registry, info, new)
            old = self.chain.registry.decode(stored)
            request = self._review(new, old, subresource)
            admitted: Resource = request.obj
            pruned = converted_away + request.pruned
            warnings = check_fields(info, pruned, options.field_validation)
            wire = admitted.to_dict()
            if options.dry_run:
                return Written(_answer(info, wire, subresource), warnings)
            # Every subresource but scale writes (part of) the status.
            subresource_written = "status" if subresource not in (None, "scale") else None
            try:
                updated = self.store.update(wire, subresource=subresource_written)
                return Written(_answer(info, updated, subresource), warnings)
            except Conflict:
                if (given_rv and given_rv != current_rv) or attempt == _WRITE_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")


def _changed(
    info: KindInfo, current: Obj, subresource: str | None, change: Callable[[Obj], Obj]
) -> Obj:
    """The object a write through the subresource asks for: a change of its Scale, written
    into its spec; or the stored one with the new status; or the change itself."""
    if subresource == "scale":
        return scaled(info, current, change)
    new = change(current)
    return _with_status_of(current, new) if subresource else new


def _answer(info: KindInfo, written: Obj, subresource: str | None) -> Obj:
    """What a write answers: the object, or its Scale for a write through /scale."""
    obj = served(info, written)
    return scale_of(info, obj) if subresource == "scale" else obj


def _to_storage(registry: Registry, info: KindInfo, obj: Obj) -> tuple[Obj, list[str]]:
    """A write in a converted version: decoded by that version's types (what they do not
    declare dropped, as its schema prunes it), then converted to the storage version; and
    the fields dropped."""
    if info.conversion is None:
        return obj, []
    typed = registry.decode(obj)
    pruned = prune_undeclared(typed)
    return info.conversion.to_storage(typed.to_dict()), pruned


def list_document(info: KindInfo, metadata: Mapping[str, Any], items: list[Obj]) -> Obj:
    return {
        "kind": info.list_kind,
        "apiVersion": info.api_version,
        "metadata": dict(metadata),
        "items": items,
    }


def addressed(info: KindInfo, namespace: str | None, name: str | None, body: Any) -> Obj:
    """The request body as an object of the URL's kind, in the URL's namespace and name."""
    if not isinstance(body, dict):
        raise BadRequest(f"the body of the request must be a {info.kind} object")
    obj = dict(body)
    for key, expected in (("apiVersion", info.api_version), ("kind", info.kind)):
        given = obj.get(key)
        if not given:
            obj[key] = expected  # as the URL defaults it
        elif given != expected:
            raise BadRequest(type_mismatch(key, given, expected))
    meta = obj.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise BadRequest("metadata must be an object")
    meta = obj["metadata"] = dict(meta)
    if info.namespaced and namespace:
        if not meta.get("namespace"):
            meta["namespace"] = namespace
        elif meta["namespace"] != namespace:
            raise namespace_mismatch()
    if name is not None and meta.get("name") != name:
        raise name_mismatch(meta.get("name"), name)
    return obj


def _with_status_of(current: Obj, new: Obj) -> Obj:
    """What a status write admits: the stored object with the new status (and the new
    resourceVersion precondition); the rest of the new object is ignored."""
    merged = {**current, "metadata": dict(current["metadata"])}
    new_rv = (new.get("metadata") or {}).get("resourceVersion")
    if new_rv:
        merged["metadata"]["resourceVersion"] = new_rv
    if "status" in new:
        merged["status"] = new["status"]
    else:
        merged.pop("status", None)
    return merged


def _check_preconditions(info: KindInfo, current: Obj, options: DeleteOptions) -> None:
    """DeleteOptions.preconditions, as rest.BeforeDelete checks them (naming the kind)."""
    meta = current["metadata"]
    for wanted, key, field_name, why in (
        (options.uid, "uid", "UID", "deleted and then recreated"),
        (options.resource_version, "resourceVersion", "ResourceVersion", "modified"),
    ):
        if wanted is not None and wanted != meta.get(key):
            raise Conflict(
                info.kind,
                info.group,
                meta["name"],
                f"the {field_name} in the precondition ({wanted}) does not match the "
                f"{field_name} in record ({meta.get(key)}). The object might have been {why}",
            )


_DEFINITION_TERMINATING = "create not allowed while custom resource definition is terminating"


def _hold_for_cleanup(store: Store, crd: Obj) -> None:
    """What the CRD registry's Delete adds: the finalizer that keeps a CRD until the
    crd-finalizer controller has deleted its custom resources."""
    meta = crd["metadata"]
    finalizers = meta.get("finalizers") or []
    if "deletionTimestamp" in meta or apiextensions.CLEANUP_FINALIZER in finalizers:
        return
    held = {"metadata": {"finalizers": [*finalizers, apiextensions.CLEANUP_FINALIZER]}}
    store.patch(apiextensions.KIND, meta["name"], "", held)  # whatever else changed since


def _builtin(info: KindInfo) -> bool:
    """A Kubernetes kind (its registry answers a delete with a Status, not the object)."""
    return not info.group or "." not in info.group or info.group.endswith(".k8s.io")
