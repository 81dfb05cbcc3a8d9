"""KindInfo: what the kind registry knows of a kind (group, version, plural, scope...), and
FieldLabels: what its objects can be selected by in a field selector."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from fleetwarden.api.meta import Resource


class PrinterColumn(NamedTuple):
    """apiextensions/v1 CustomResourceColumnDefinition."""

    name: str
    type: str
    json_path: str
    description: str = ""
    format: str = ""
    priority: int = 0


@dataclass(frozen=True, eq=False)
class CustomResource:
    """What the CustomResourceDefinition serving a kind says of it beyond its names, for
    one version (apiextensions-apiserver's crdInfo)."""

    singular: str
    list_kind: str
    schema: Mapping[str, Any] | None = None  # the version's openAPIV3Schema
    printer_columns: tuple[PrinterColumn, ...] = ()
    terminating: bool = False  # being deleted: its objects go, no new ones come


@dataclass(frozen=True, eq=False)
class Conversion:
    """A version served besides the one its objects are stored in (a CRD's conversion
    webhook): what it is stored as, and each wire object converted on its way in and out.
    A conversion keeps the metadata whole and may lose what the other version lacks."""

    storage: KindInfo
    to_storage: Callable[[Mapping[str, Any]], dict[str, Any]]
    from_storage: Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Scale:
    """Where a kind keeps what its /scale subresource shows: a CRD's
    CustomResourceSubresourceScale paths (`.spec.replicas`...), or the apps/v1 kinds' own
    (`builtin`: spec.replicas defaults to 1, and the selector is spec.selector's
    LabelSelector, printed as a string, rather than a string kept at a path)."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str = ""
    builtin: bool = False


APPS_SCALE = Scale(builtin=True)


@dataclass(frozen=True)
class KindInfo:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    # The kind's model, or what finds it when first asked: a client's discovery looks it up
    # in the registry only then, so that a client that only reads (the CLI) never imports
    # the API's models. It follows from the kind: not part of its identity.
    typed: type[Resource] | Callable[[], type[Resource]] = field(compare=False)
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = field(default=())
    has_status: bool = True
    # The verbs served, where not every storage verb: the access reviews are only created.
    verbs: tuple[str, ...] | None = None
    # Subresources besides status and scale: each writing part of the status through an
    # endpoint of its own (a CertificateSigningRequest's approval: its conditions; admission
    # says which), or a ServiceAccount's token (the TokenRequest API, created only).
    more_subresources: tuple[str, ...] = ()
    # Served with a /scale subresource (autoscaling/v1 Scale), and how.
    scale: Scale | None = field(default=None, compare=False)
    # Served by a CustomResourceDefinition: what it says. Not part of the kind's identity.
    custom: CustomResource | None = field(default=None, compare=False, repr=False)
    # Stored in another version of the kind, converted on the way.
    conversion: Conversion | None = field(default=None, compare=False, repr=False)

    @property
    def model(self) -> type[Resource]:
        return self.typed if isinstance(self.typed, type) else self.typed()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.custom.singular if self.custom else self.kind.lower()

    @property
    def list_kind(self) -> str:
        return self.custom.list_kind if self.custom else f"{self.kind}List"

    @property
    def subresources(self) -> tuple[str, ...]:
        own = ("status",) if self.has_status else ()
        return (*own, *self.more_subresources, *(("scale",) if self.scale else ()))

    @property
    def stored(self) -> bool:
        """Whether its objects are kept (a review is answered, not stored)."""
        return self.verbs is None

    @property
    def group_kind(self) -> str:
        """`Cluster.cluster.karmada.io`, as Kubernetes names a kind in errors."""
        return f"{self.kind}.{self.group}" if self.group else self.kind


def review_kind(
    group: str, version: str, kind: str, plural: str, model: type[Resource], namespaced: bool
) -> KindInfo:
    """A kind asked with a create and answered in the response, never stored: the access
    and token reviews."""
    return KindInfo(
        group, version, kind, plural, namespaced, model, has_status=False, verbs=("create",)
    )


def stored_as(info: KindInfo) -> KindInfo:
    """The kind its objects are stored as: itself, or a converted version's storage one."""
    return info.conversion.storage if info.conversion is not None else info


def served(info: KindInfo, obj: dict[str, Any]) -> dict[str, Any]:
    """A stored object (or a Status) as the kind it is asked for is served."""
    if info.conversion is None or obj.get("kind") != info.kind:
        return obj
    return info.conversion.from_storage(obj)


def split_api_version(api_version: str) -> tuple[str, str]:
    """`apps/v1` -> ("apps", "v1"); `v1` -> ("", "v1")."""
    group, _, version = api_version.rpartition("/")
    return group, version


_KUBE_VERSION_RE = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")
_LEVEL = {"alpha": 0, "beta": 1, None: 2}


def version_priority(version: str) -> tuple[int, int, int, int, str]:
    """A sort key putting the preferred version first, as version.CompareKubeAwareVersionStrings
    orders them: GA, then beta, then alpha, newest first; other names last, alphabetically."""
    match = _KUBE_VERSION_RE.fullmatch(version)
    if match is None:
        return (1, 0, 0, 0, version)
    major, level, minor = match.groups()
    return (0, -_LEVEL[level], -int(major), -int(minor or 0), "")


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
