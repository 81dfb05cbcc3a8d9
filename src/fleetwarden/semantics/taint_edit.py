"""`kubectl taint` and `karmadactl taint`: reading taint arguments, applying them to taints.

    key=value:Effect   add (or, with --overwrite, replace) the key/effect taint
    key:Effect         the same with no value
    key:Effect-        remove the key/effect taint
    key-               remove every taint with that key

The rules and messages are kubectl's (pkg/cmd/taint/utils.go, taint.go); karmadactl lifts the
same parser (pkg/util/lifted/taint.go) and differs only in how it names the object and words
a conflict. Resolving the resource type and names, and printing `node/foo tainted`, is the
CLI's part.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from fleetwarden.api.core import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Taint
from fleetwarden.api.errors import aggregate
from fleetwarden.api.ocm.cluster import TAINT_EFFECTS as OCM_EFFECTS
from fleetwarden.semantics.tolerations import taint_to_string
from fleetwarden.semantics.validation import is_label_value, is_qualified_name

TAINTED = "tainted"
UNTAINTED = "untainted"
MODIFIED = "modified"

# kubectl's parser accepts every corev1 effect, karmadactl's too; a Karmada Cluster then
# refuses PreferNoSchedule at admission, as upstream's webhook does.
CORE_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)


class TaintError(ValueError):
    """A taint command refused, worded as upstream words it."""


@dataclass(frozen=True)
class TaintRequest:
    """The command line read: `<resource> <name>...` and the taints to add and remove."""

    resources: tuple[str, ...]
    to_add: tuple[Taint, ...]
    to_remove: tuple[Taint, ...]


@dataclass(frozen=True)
class TaintUpdate:
    operation: str  # TAINTED, UNTAINTED or MODIFIED, as the command prints it
    taints: list[Taint]


def _taint(key: str, value: str, effect: str) -> Taint:
    # An empty value stays unset, so the taint serialises as kubectl's does (omitempty).
    return Taint(key=key, value=value, effect=effect) if value else Taint(key=key, effect=effect)


def _parse_taint(spec: str, effects: Collection[str]) -> Taint:
    """parseTaint: `key=value:effect`, `key:effect` or `key`."""
    parts = spec.split(":")
    if len(parts) > 2:
        raise TaintError(f"invalid taint spec: {spec}")
    key, value, effect = parts[0], "", ""
    if len(parts) == 2:
        effect = parts[1]
        if effect not in effects:
            raise TaintError(f"invalid taint effect: {effect}, unsupported taint effect")
        key_value = parts[0].split("=")
        if len(key_value) > 2:
            raise TaintError(f"invalid taint spec: {spec}")
        key = key_value[0]
        if len(key_value) == 2:
            value = key_value[1]
            if errs := is_label_value(value):
                raise TaintError(f"invalid taint spec: {spec}, {'; '.join(errs)}")
    if errs := is_qualified_name(key):
        raise TaintError(f"invalid taint spec: {spec}, {'; '.join(errs)}")
    return _taint(key, value, effect)


def parse_taints(
    specs: Iterable[str], effects: Collection[str] = CORE_EFFECTS
) -> tuple[list[Taint], list[Taint]]:
    """parseTaints: the taints to add and those to remove (key, and effect when given)."""
    to_add: list[Taint] = []
    to_remove: list[Taint] = []
    for spec in specs:
        if spec.endswith("-"):
            taint = _parse_taint(spec[:-1], effects)
            to_remove.append(_taint(taint.key, "", taint.effect))
            continue
        taint = _parse_taint(spec, effects)
        if not taint.effect:
            raise TaintError(f"invalid taint spec: {spec}")
        if any(_same_key_effect(taint, other) for other in to_add):
            # Go prints the corev1.Taint struct with %v.
            shown = f"{{{taint.key} {taint.value or ''} {taint.effect} <nil>}}"
            raise TaintError(f"duplicated taints with the same key and effect: {shown}")
        to_add.append(taint)
    return to_add, to_remove


def _same_key_effect(a: Taint, b: Taint) -> bool:
    """Taint.MatchTaint: taints are unique by key and effect."""
    return a.key == b.key and a.effect == b.effect


def _removes(removal: Taint, taint: Taint) -> bool:
    return taint.key == removal.key and (not removal.effect or taint.effect == removal.effect)


@dataclass(frozen=True)
class TaintCommand:
    """One dialect of the taint command: what it calls the object, which effects it takes,
    how it words an add-and-remove conflict."""

    kind: str
    effects: tuple[str, ...]
    conflict_format: str

    def complete(self, args: Sequence[str]) -> TaintRequest:
        """Split the arguments (resources first, then taints) and parse the taints."""
        resources: list[str] = []
        taint_args: list[str] = []
        for arg in args:
            if "=" in arg or ":" in arg or arg.endswith("-"):
                taint_args.append(arg)
            elif taint_args:
                raise TaintError(f"all resources must be specified before taint changes: {arg}")
            else:
                resources.append(arg)
        if not resources:
            raise TaintError("one or more resources must be specified as <resource> <name>")
        if not taint_args:
            raise TaintError("at least one taint update is required")
        to_add, to_remove = parse_taints(taint_args, self.effects)
        return TaintRequest(tuple(resources), tuple(to_add), tuple(to_remove))

    def validate(self, request: TaintRequest) -> None:
        """Refuse adding and removing the same taint in one command."""
        conflicts = [
            self.conflict_format.format(key=removal.key, effect=removal.effect)
            for taint in request.to_add
            for removal in request.to_remove
            if _removes(removal, taint)
        ]
        if conflicts:
            raise TaintError(
                "can not both modify and remove the following taint(s) in the same command: "
                + ", ".join(conflicts)
            )

    def update_taints(
        self, name: str, taints: Sequence[Taint] | None, request: TaintRequest, *, overwrite: bool
    ) -> TaintUpdate:
        """The object's new taints and what the command reports (updateTaints)."""
        current = list(taints or ())
        if not overwrite and (present := _already_present(current, request.to_add)):
            raise TaintError(
                f"{self.kind} {name} already has {present} taint(s) with same effect(s)"
                " and --overwrite is false"
            )
        new = list(request.to_add)
        for old in current:
            if not any(_same_key_effect(taint, old) for taint in new):
                new.append(old)
        # kubectl judges "added" by length, so duplicate old taints can hide an addition.
        added = len(new) != len(current)
        new, missing = _remove(new, request.to_remove)
        if missing:
            raise TaintError(aggregate(f'taint "{taint_to_string(t)}" not found' for t in missing))
        if (added and bool(request.to_remove)) or overwrite:
            return TaintUpdate(MODIFIED, new)
        return TaintUpdate(TAINTED if added else UNTAINTED, new)


def _already_present(current: Sequence[Taint], to_add: Iterable[Taint]) -> str:
    """checkIfTaintsAlreadyExists: the keys of taints to add that are already there."""
    return ",".join(t.key for t in to_add for old in current if _same_key_effect(t, old))


def _remove(taints: list[Taint], removals: Iterable[Taint]) -> tuple[list[Taint], list[Taint]]:
    """deleteTaints: what is left, and the removals that found nothing."""
    missing = []
    for removal in removals:
        kept = [t for t in taints if not _removes(removal, t)]
        if len(kept) == len(taints):
            missing.append(removal)
        taints = kept
    return taints, missing


KUBECTL = TaintCommand(kind="node", effects=CORE_EFFECTS, conflict_format="{key}={effect}")
KARMADACTL = TaintCommand(
    kind="cluster", effects=CORE_EFFECTS, conflict_format='{{"{key}":"{effect}"}}'
)
# OCM has no taint command of its own; its docs use kubectl on ManagedClusters.
OCM = TaintCommand(kind="managedcluster", effects=OCM_EFFECTS, conflict_format="{key}={effect}")
