"""The naming condition controller (apiextensions-apiserver pkg/controller/status): which of
the names a CustomResourceDefinition asks for it gets, first come first served within its
group, in `status.acceptedNames` and the NamesAccepted condition; and Established false
until the establishing controller says otherwise.

One key per API group: every CRD of the group is reconciled together, so that a CRD
that frees names (deleted, or renamed) lets the others of its group take them. Upstream's
mutation cache is kept too: the names this controller wrote count even before the cache
has caught up with its writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from fleetwarden.api import apiextensions as crdv1
from fleetwarden.api.apiextensions import (
    CustomResourceDefinition,
    CustomResourceDefinitionNames,
)
from fleetwarden.api.errors import aggregate
from fleetwarden.api.meta import Condition, Resource, find_condition
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.semantics.conditions import set_status_condition

NAME = "naming-condition-controller"


@dataclass
class UsedNames:
    """The names some CRDs have been given: resources and kinds."""

    resources: set[str] = field(default_factory=set)
    kinds: set[str] = field(default_factory=set)


def used_names(crds: Iterable[CustomResourceDefinition]) -> UsedNames:
    """getAcceptedNamesForGroup, of the CRDs of one group."""
    used = UsedNames()
    for crd in crds:
        names = crd.status.accepted_names
        if names is not None:
            used.resources |= {names.plural, names.singular or "", *(names.short_names or ())}
            used.kinds |= {names.kind, names.list_kind or ""}
    return used


def _taken(requested: str, accepted: str, used: set[str]) -> str | None:
    """equalToAcceptedOrFresh's error, if any."""
    if requested == accepted or requested not in used:
        return None
    return f'"{requested}" is already in use'


def accepted_names(
    crd: CustomResourceDefinition, used: UsedNames
) -> tuple[CustomResourceDefinitionNames, Condition]:
    """calculateNamesAndConditions' names and NamesAccepted condition: each name asked for
    that is the CRD's already or taken by none, else the one it had; the last conflict found
    (plural, singular, short names, kind, list kind) is the condition's reason."""
    requested = crd.spec.names.to_dict()
    accepted = crd.status.accepted_names.to_dict() if crd.status.accepted_names else {}
    new = dict(accepted)
    conflicts: list[tuple[str, str]] = []

    def take(names: list[tuple[str, str]], pool: set[str]) -> None:
        for key, reason in names:
            error = _taken(requested.get(key, ""), accepted.get(key, ""), pool)
            if error:
                conflicts.append((reason, error))
            else:
                new[key] = requested.get(key, "")

    take([("plural", "PluralConflict"), ("singular", "SingularConflict")], used.resources)
    wanted, had = requested.get("shortNames") or [], accepted.get("shortNames") or []
    if wanted != had:
        errors = [
            e for name in wanted if name not in had and (e := _taken(name, "", used.resources))
        ]
        if errors:
            conflicts.append(("ShortNamesConflict", aggregate(errors)))
        else:
            new["shortNames"] = wanted
    take([("kind", "KindConflict"), ("listKind", "ListKindConflict")], used.kinds)
    new["categories"] = requested.get("categories")
    names = CustomResourceDefinitionNames.model_validate(
        {key: value for key, value in new.items() if value}  # Go's omitempty
    )
    if not conflicts:
        return names, Condition(type=crdv1.NAMES_ACCEPTED, status="True", reason="NoConflicts",
                                message="no conflicts found")  # fmt: skip
    reason, message = conflicts[-1]
    return names, Condition(
        type=crdv1.NAMES_ACCEPTED, status="False", reason=reason, message=message
    )


def established_condition(crd: CustomResourceDefinition, names_accepted: Condition) -> Condition:
    """Established stays as it is once true; until then false, Installing once the names
    are accepted."""
    current = find_condition(crd.status.conditions, crdv1.ESTABLISHED)
    if current is not None and current.status == "True":
        return current
    if names_accepted.status == "True":
        return Condition(type=crdv1.ESTABLISHED, status="False", reason="Installing",
                         message="the initial names have been accepted")  # fmt: skip
    return current or Condition(type=crdv1.ESTABLISHED, status="False", reason="NotAccepted",
                                message="not all names are accepted")  # fmt: skip


def _equivalent(a: Condition, b: Condition | None) -> bool:
    return b is not None and (a.type, a.status, a.reason, a.message) == (
        b.type, b.status, b.reason, b.message
    )  # fmt: skip


def _group(obj: Resource) -> list[str]:
    assert isinstance(obj, CustomResourceDefinition)
    return [obj.spec.group]


class NamingConditionController:
    def __init__(self) -> None:
        # name -> the CRD as this controller last wrote it (the mutation cache).
        self._written: dict[str, CustomResourceDefinition] = {}

    def controller(self) -> Controller:
        # One worker, as upstream: names are handed out one CRD at a time.
        return Controller(NAME, [Watches(crdv1.KIND, _group)], self.reconcile)

    def reconcile(self, group: str, ctx: Context) -> Result:
        crds = {
            c.metadata.name: self._newest(c)
            for c in ctx.cache.informer(crdv1.KIND).list()
            if isinstance(c, CustomResourceDefinition) and c.spec.group == group
        }
        for name in sorted(crds):
            crd = crds[name]
            if crd.spec.names == crd.status.accepted_names:
                continue
            names, names_accepted = accepted_names(crd, used_names(crds.values()))
            current = find_condition(crd.status.conditions, crdv1.NAMES_ACCEPTED)
            if names == crd.status.accepted_names and _equivalent(names_accepted, current):
                continue
            crds[name] = self._write(crd, names, names_accepted, ctx)
        return DONE

    def _newest(self, cached: CustomResourceDefinition) -> CustomResourceDefinition:
        written = self._written.get(cached.metadata.name)
        if written is None or _version(written) <= _version(cached):
            self._written.pop(cached.metadata.name, None)
            return cached
        return written

    def _write(
        self,
        crd: CustomResourceDefinition,
        names: CustomResourceDefinitionNames,
        names_accepted: Condition,
        ctx: Context,
    ) -> CustomResourceDefinition:
        """The CRD's new names and conditions written; and the storage version among the
        stored ones, where the API server would have put it on create (the store takes no
        status then)."""
        status = crd.status.model_copy(deep=True)
        now = ctx.clock.now()
        established = established_condition(crd, names_accepted)
        conditions = set_status_condition(status.conditions, names_accepted, now)
        status.conditions = set_status_condition(conditions, established, now)
        status.accepted_names = names
        if not status.stored_versions:
            status.stored_versions = [v.name for v in crd.spec.versions if v.storage][:1] or None
        wire = crd.to_dict()
        wire["status"] = status.to_dict()
        stored = ctx.store.update(wire, subresource="status")
        written = self._written[crd.metadata.name] = CustomResourceDefinition.model_validate(stored)
        return written


def _version(crd: CustomResourceDefinition) -> int:
    return int(crd.metadata.resource_version or 0)
