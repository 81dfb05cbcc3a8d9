"""The kind registry: every kind fleetwarden knows, and decoding wire dicts into typed objects.

A kind that is not registered is still accepted as an Unstructured resource template,
namespaced unless the built-in table below says otherwise, with the plural Kubernetes'
RESTMapper would guess for it.

A hub's own registry (`REGISTRY.overlay()`) also knows the custom kinds its
CustomResourceDefinitions serve (`serve`); the registered kinds keep their names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from fleetwarden.api import (
    apiextensions,
    authentication,
    authorization,
    autoscaling,
    certificates,
    core,
    karmada,
    ocm,
    rbac,
)
from fleetwarden.api.errors import ErrorList, FieldError, Invalid, Path
from fleetwarden.api.kinds import (
    APPS_SCALE,
    OBJECT_META_FIELD_LABELS,
    Conversion,
    FieldGetter,
    FieldLabels,
    KindInfo,
    split_api_version,
)
from fleetwarden.api.meta import Resource
from fleetwarden.api.ocm import addon, work


def _builtin(
    group: str, version: str, kind: str, plural: str, namespaced: bool, *short: str
) -> KindInfo:
    return KindInfo(
        group, version, kind, plural, namespaced, core.Unstructured, short,
        has_status=kind not in _NO_STATUS, scale=APPS_SCALE if kind in _SCALED else None,
    )  # fmt: skip


# Built-in kinds without a status subresource: a write of theirs changes everything given.
_NO_STATUS = {
    "ConfigMap", "Secret", "ServiceAccount", "StorageClass", "PriorityClass", "LimitRange",
    "NetworkPolicy",
}  # fmt: skip
# Built-in kinds served with a /scale subresource (kubectl scale, a FederatedHPA).
_SCALED = {"Deployment", "ReplicaSet", "StatefulSet"}


_HPA = _builtin(
    "autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, "hpa"
)

CORE_KINDS = [
    KindInfo("", "v1", "Namespace", "namespaces", False, core.Namespace, ("ns",)),
    KindInfo("", "v1", "Event", "events", True, core.Event, ("ev",), has_status=False),
    KindInfo("coordination.k8s.io", "v1", "Lease", "leases", True, core.Lease, has_status=False),
]

# Built-in Kubernetes kinds users propagate: typed loosely, but with their real scope.
BUILTIN_TEMPLATE_KINDS = [
    _builtin("apps", "v1", "Deployment", "deployments", True, "deploy"),
    _builtin("apps", "v1", "StatefulSet", "statefulsets", True, "sts"),
    _builtin("apps", "v1", "DaemonSet", "daemonsets", True, "ds"),
    _builtin("apps", "v1", "ReplicaSet", "replicasets", True, "rs"),
    _builtin("batch", "v1", "Job", "jobs", True),
    _builtin("batch", "v1", "CronJob", "cronjobs", True, "cj"),
    _builtin("", "v1", "ConfigMap", "configmaps", True, "cm"),
    _builtin("", "v1", "Secret", "secrets", True),
    _builtin("", "v1", "Service", "services", True, "svc"),
    replace(
        _builtin("", "v1", "ServiceAccount", "serviceaccounts", True, "sa"),
        more_subresources=("token",),  # the TokenRequest API, created only
    ),
    _builtin("", "v1", "Pod", "pods", True, "po"),
    _builtin("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, "pvc"),
    _builtin("", "v1", "ResourceQuota", "resourcequotas", True, "quota"),
    _builtin("", "v1", "LimitRange", "limitranges", True, "limits"),
    _builtin("", "v1", "PersistentVolume", "persistentvolumes", False, "pv"),
    _builtin("", "v1", "Node", "nodes", False, "no"),
    _builtin("networking.k8s.io", "v1", "Ingress", "ingresses", True, "ing"),
    _builtin("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, "netpol"),
    _builtin("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, "pdb"),
    _HPA,
    replace(  # stored as v2: kubectl autoscale writes v1
        _builtin("autoscaling", "v1", _HPA.kind, _HPA.plural, True, *_HPA.short_names),
        conversion=Conversion(_HPA, autoscaling.to_v2, autoscaling.to_v1),
    ),
    *rbac.KINDS,
    _builtin("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, "sc"),
    _builtin("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, "pc"),
    apiextensions.KIND,
]


def guess_plural(kind: str) -> str:
    """meta.UnsafeGuessKindToResource."""
    lower = kind.lower()
    if not lower:
        return lower
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in tuple("aeiou"):
        return lower[:-1] + "ies"
    return lower + "s"


class _Kinds:
    """Kinds by (apiVersion, kind) and by (group, version, plural); and the (group, plural)
    their objects are stored by."""

    def __init__(self, kinds: Iterable[KindInfo] = ()) -> None:
        self.by_kind: dict[tuple[str, str], KindInfo] = {}
        self.by_plural: dict[tuple[str, str, str], KindInfo] = {}
        self.stored: set[tuple[str, str]] = set()
        for info in kinds:
            self.add(info)

    def add(self, info: KindInfo) -> None:
        self.by_kind[(info.api_version, info.kind)] = info
        self.by_plural[(info.group, info.version, info.plural)] = info
        self.stored.add((info.group, info.plural))


class Registry:
    def __init__(self, kinds: Iterable[KindInfo]) -> None:
        self._registered = _Kinds(kinds)
        # Replaced whole by serve(), so that a reader on another thread sees one set or
        # the other.
        self._custom = _Kinds()
        self.generation = 0  # moves on whenever the custom kinds change

    def register(self, info: KindInfo) -> None:
        self._registered.add(info)

    def overlay(self) -> Registry:
        """A registry of these kinds for one hub, to serve its custom kinds besides."""
        return Registry(self._registered.by_kind.values())

    def serve(self, kinds: Iterable[KindInfo]) -> None:
        """Serve these custom kinds, and no others, besides the registered ones; a custom
        kind taking a registered kind's names, in any version, is left out."""
        self._custom = _Kinds(info for info in kinds if not self.overlaps_registered(info))
        self.generation += 1

    def overlaps_registered(self, info: KindInfo) -> bool:
        """Whether the kind names a registered kind, or its objects (group and plural)."""
        registered = self._registered
        return (info.api_version, info.kind) in registered.by_kind or (
            (info.group, info.plural) in registered.stored
        )

    def get(self, api_version: str, kind: str) -> KindInfo | None:
        key = (api_version, kind)
        return self._registered.by_kind.get(key) or self._custom.by_kind.get(key)

    def by_plural(self, group: str, version: str, plural: str) -> KindInfo | None:
        key = (group, version, plural)
        return self._registered.by_plural.get(key) or self._custom.by_plural.get(key)

    def info(self, api_version: str, kind: str) -> KindInfo:
        """The registered kind, or an Unstructured template kind with a guessed plural."""
        known = self.get(api_version, kind)
        if known is not None:
            return known
        group, version = split_api_version(api_version)
        return KindInfo(group, version, kind, guess_plural(kind), True, core.Unstructured)

    def kinds(self) -> list[KindInfo]:
        return [*self._registered.by_kind.values(), *self._custom.by_kind.values()]

    def custom_kinds(self) -> list[KindInfo]:
        return list(self._custom.by_kind.values())

    def decode(self, data: Mapping[str, Any]) -> Resource:
        """A wire dict to its typed object; type errors become field errors (422)."""
        api_version, kind = data.get("apiVersion"), data.get("kind")
        errors: ErrorList = []
        if not isinstance(api_version, str) or not api_version:
            errors.append(Path("apiVersion").required())
        if not isinstance(kind, str) or not kind:
            errors.append(Path("kind").required())
        if errors:
            raise Invalid(str(kind or "Object"), "", _name_of(data), errors)
        assert isinstance(api_version, str) and isinstance(kind, str)
        info = self.info(api_version, kind)
        try:
            # model_validate's own work, without its wrapper: this is every informer's
            # hot path. Validation leaves its input alone, so a plain dict needs no copy.
            obj: Resource = info.model.__pydantic_validator__.validate_python(
                data if type(data) is dict else dict(data)
            )
        except ValidationError as exc:
            raise Invalid(info.kind, info.group, _name_of(data), _field_errors(exc)) from None
        return obj


def _name_of(data: Mapping[str, Any]) -> str:
    metadata = data.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return name if isinstance(name, str) else ""


_JSON_TYPES = {
    "int_type": "integer",
    "int_from_float": "integer",
    "string_type": "string",
    "bool_type": "boolean",
    "float_type": "number",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
}


def _field_errors(exc: ValidationError) -> ErrorList:
    """pydantic's errors in the words of a CRD schema check, one per field."""
    seen: dict[str, FieldError] = {}
    for err in exc.errors(include_url=False):
        # Union members (a Quantity is string|int|float) add their type name to the loc.
        parts = [p for p in err["loc"] if not (isinstance(p, str) and p in _UNION_TAGS)]
        path = _path_text(parts)
        if path in seen:
            continue
        json_type = _JSON_TYPES.get(err["type"])
        if json_type:
            seen[path] = Path(path).type_invalid(err["input"], f"must be of type {json_type}")
        else:
            seen[path] = Path(path).invalid(_plain(err["input"]), str(err["msg"]))
    return list(seen.values())


_UNION_TAGS = {"str", "int", "float", "bool", "function-after[parse_time(), datetime]"}


def _path_text(loc: list[int | str]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text = f"{text}.{part}" if text else str(part)
    return text


def _plain(value: Any) -> Any:
    return (
        value
        if isinstance(value, str | int | float | bool | list | dict) or value is None
        else str(value)
    )


REGISTRY = Registry(
    [
        *CORE_KINDS,
        *BUILTIN_TEMPLATE_KINDS,
        *authentication.KINDS,
        *authorization.KINDS,
        *certificates.KINDS,
        *karmada.KINDS,
        *ocm.KINDS,
        *addon.KINDS,
        *work.KINDS,
    ]
)


# --- field labels --------------------------------------------------------------------------------


def _at(*keys: str) -> FieldGetter:
    """The string at a path of the object, or "" (Go's zero value) where there is none."""

    def get(obj: Mapping[str, Any]) -> str:
        value: Any = obj
        for key in keys:
            value = value.get(key) if isinstance(value, Mapping) else None
        return value if isinstance(value, str) else ""

    return get


def _event_source(event: Mapping[str, Any]) -> str:
    """An Event written through events.k8s.io has no source: its reporting controller
    stands in (the event strategy's GetAttrs)."""
    return _at("source", "component")(event) or _at("reportingComponent")(event)


def _secret_type(secret: Mapping[str, Any]) -> str:
    """Defaulting makes an untyped Secret Opaque; a stored one may still lack the field."""
    return _at("type")(secret) or "Opaque"


_POD_SPEC_FIELDS = ("nodeName", "restartPolicy", "schedulerName", "serviceAccountName")
_POD_STATUS_FIELDS = ("phase", "podIP", "nominatedNodeName")
_INVOLVED = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
# The kinds whose field label conversion accepts more than the object's name and namespace
# (pkg/apis/core/v1/conversion.go, and the strategies' GetAttrs that evaluate them).
_FIELD_LABELS: dict[tuple[str, str], FieldLabels] = {
    ("", "Event"): FieldLabels(
        {
            **{f"involvedObject.{key}": _at("involvedObject", key) for key in _INVOLVED},
            "reason": _at("reason"),
            "reportingComponent": _at("reportingComponent"),
            "source": _event_source,
            "type": _at("type"),
        }
    ),
    ("", "Namespace"): FieldLabels({"status.phase": _at("status", "phase")}, namespace=False),
    ("", "Pod"): FieldLabels(
        {
            **{f"spec.{key}": _at("spec", key) for key in _POD_SPEC_FIELDS},
            **{f"status.{key}": _at("status", key) for key in _POD_STATUS_FIELDS},
        }
    ),
    ("", "Secret"): FieldLabels({"type": _secret_type}),
    (certificates.GROUP, "CertificateSigningRequest"): FieldLabels(
        {"spec.signerName": _at("spec", "signerName")}, namespace=False
    ),
}
# The other kinds served by an API server's own scheme, with no field label conversion:
# apimachinery's default. Karmada's Cluster is one (karmada-aggregated-apiserver's).
_DEFAULT_CONVERSION = {
    *((info.group, info.kind) for info in [*CORE_KINDS, *BUILTIN_TEMPLATE_KINDS]),
    ("cluster.karmada.io", "Cluster"),
}


def field_labels(info: KindInfo) -> FieldLabels:
    """What a field selector on the kind may use. Any kind not above is a custom resource:
    apiextensions' crConverter takes no namespace for a cluster-scoped one, and Karmada's
    and OCM's CRDs declare no selectableFields."""
    key = (info.group, info.kind)
    if key in _FIELD_LABELS:
        return _FIELD_LABELS[key]
    if key in _DEFAULT_CONVERSION:
        return OBJECT_META_FIELD_LABELS
    return FieldLabels(namespace=info.namespaced)


def decode(data: Mapping[str, Any]) -> Resource:
    return REGISTRY.decode(data)


def encode(obj: Resource) -> dict[str, Any]:
    return obj.to_dict()


def serving_crds(documents: Iterable[Mapping[str, Any]]) -> Registry:
    """The registered kinds, and those the CustomResourceDefinitions among `documents`
    define (their scope, plural and schema), as if each were established: for what takes a
    set of objects offline (a scenario, `fleetwarden validate`). A CRD its kind cannot
    hold defines nothing here; admission refuses it, naming it."""
    registry = REGISTRY.overlay()
    crd = (apiextensions.KIND.api_version, apiextensions.KIND.kind)
    kinds: list[KindInfo] = []
    for doc in documents:
        if (doc.get("apiVersion"), doc.get("kind")) != crd:
            continue
        try:
            kinds += apiextensions.defined_kinds(
                apiextensions.CustomResourceDefinition.model_validate(doc)
            )
        except ValueError:
            continue
    registry.serve(kinds)
    return registry
