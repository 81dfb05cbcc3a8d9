"""KindInfo: what the kind registry knows of a kind (group, version, plural, scope...), and
FieldLabels: what its objects can be selected by in a field selector."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fleetwarden.api.meta import Resource


@dataclass(frozen=True)
class KindInfo:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    model: type[Resource]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = field(default=())
    has_status: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def group_kind(self) -> str:
        """`Cluster.cluster.karmada.io`, as Kubernetes names a kind in errors."""
        return f"{self.kind}.{self.group}" if self.group else self.kind


def split_api_version(api_version: str) -> tuple[str, str]:
    """`apps/v1` -> ("apps", "v1"); `v1` -> ("", "v1")."""
    group, _, version = api_version.rpartition("/")
    return group, version


FieldGetter = Callable[[Mapping[str, Any]], str]


def not_supported(label: str) -> str:
    """How the field label conversions of core/v1 kinds and of custom resources refuse."""
    return f"field label not supported: {label}"


def not_known(label: str) -> str:
    """runtime.DefaultMetaV1FieldSelectorConversion's refusal, for kinds that register no
    field label conversion (Deployments, ConfigMaps, Leases...)."""
    quoted = json.dumps(label, ensure_ascii=False)  # Go's %q, for a label's characters
    return f'{quoted} is not a known field selector: only "metadata.name", "metadata.namespace"'


@dataclass(frozen=True)
class FieldLabels:
    """The field labels a kind's field selectors may use, as its field label conversion
    accepts them: `metadata.name` always, `metadata.namespace` when `namespace`, and the
    kind's own `fields` (its GetAttrs), each read from the object as stored. Any other
    label is refused with `refuse(label)`, a 400 BadRequest."""

    fields: Mapping[str, FieldGetter] = field(default_factory=dict)
    namespace: bool = True
    refuse: Callable[[str], str] = not_supported

    def supports(self, label: str) -> bool:
        return (
            label == "metadata.name"
            or (label == "metadata.namespace" and self.namespace)
            or label in self.fields
        )


# apimachinery's default: the object's name and namespace, whatever its scope.
OBJECT_META_FIELD_LABELS = FieldLabels(refuse=not_known)
