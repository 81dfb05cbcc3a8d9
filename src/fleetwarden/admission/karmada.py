"""Admission for the Karmada kinds: what upstream's API servers and karmada-webhook do to an
object before it is stored.

Cluster is served by karmada-aggregated-apiserver: its REST strategy fills in resource models,
canonicalizes taints and zones, and refuses what ValidateCluster refuses (422 Invalid).

The policy and work kinds are CRDs. The API server applies the schema's `default:` markers,
calls karmada-webhook's mutating webhook (whose JSON round trip through the Go types writes
every field that has no omitempty and drops empty omitempty strings), defaults again, checks
the schema, and only when that holds calls the validating webhook. Its refusals are field
errors upstream too, and come out here in the same words within a 422 Invalid.

Upstream references: pkg/registry/cluster/strategy.go, pkg/apis/cluster/{mutation,validation},
charts/karmada/_crds/bases, pkg/webhook/*, pkg/util/helper/policy.go,
pkg/util/validation/validation.go, pkg/resourceinterpreter/default/native/prune.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar

from pydantic import BaseModel

from fleetwarden.admission.chain import Mutate, Operation, Plugin, Request, Validate
from fleetwarden.api.core import NO_EXECUTE, NO_SCHEDULE, OP_EQUAL, OP_EXISTS, Taint, Toleration
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.karmada import cluster as clusterv1
from fleetwarden.api.karmada import policy as policyv1
from fleetwarden.api.karmada import work as workv1
from fleetwarden.api.meta import ObjectMeta, Resource
from fleetwarden.semantics.validation import (
    is_dns1123_label,
    is_label_value,
    validate_qualified_name,
)

_M = TypeVar("_M", bound=Resource)


def _obj(request: Request, model: type[_M]) -> _M:
    assert isinstance(request.obj, model)
    return request.obj


def _wire(value: BaseModel | list[Any]) -> Any:
    """A struct given as a field error's value, rendered as Go renders it: as its JSON."""
    if isinstance(value, list):
        return [_wire(item) for item in value]
    return value.model_dump(by_alias=True, exclude_unset=True, mode="json")


# --- the round trip through karmada-webhook's Go types ---------------------------------------


def _marshal_like_go(model: BaseModel) -> None:
    """What json.Marshal of the Go struct writes back: structs and the scalars without
    omitempty (ours have a scalar default) always, nil and empty omitempty ones never. A nil
    slice marshals to null, which the API server prunes, so an unset list stays unset."""
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if info.default is None and value in (None, ""):
            setattr(model, name, None)
            model.model_fields_set.discard(name)
        elif isinstance(value, BaseModel) or isinstance(info.default, str | int | float):
            setattr(model, name, value)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, BaseModel):
                _marshal_like_go(item)


def _marshal_spec_like_go(obj: Any) -> None:
    """The spec as the webhook's patch writes it; the status belongs to the status subresource."""
    obj.spec = obj.spec  # Go marshals the spec struct even when the request left it out
    _marshal_like_go(obj.spec)


def _through_webhook(
    defaults: Callable[[Any], None], webhook: Mutate, *operations: Operation
) -> Mutate:
    """A CRD's admission up to validation: defaults, the mutating webhook (on the operations
    it is registered for) and its Go round trip, then the defaults again."""

    def mutate(request: Request) -> None:
        defaults(request.obj)
        if request.operation in operations:
            webhook(request)
            _marshal_spec_like_go(request.obj)
            defaults(request.obj)

    return mutate


def _default(model: BaseModel, name: str, value: Any) -> None:
    """A schema `default:`, applied where the field is absent."""
    if getattr(model, name) is None:
        setattr(model, name, value)


# Upstream draws a random UUID. Ours derives one from the object's identity so that a run
# replays exactly; an object deleted and created again gets its old id back.
_PERMANENT_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_DNS, "karmada.io")


def _permanent_id(kind: str, meta: ObjectMeta) -> str:
    return str(uuid.uuid5(_PERMANENT_ID_NAMESPACE, f"{kind}/{meta.namespace}/{meta.name}"))


def _set_label(meta: ObjectMeta, key: str, value: str) -> None:
    meta.labels = {**(meta.labels or {}), key: value}


def _label_unset_permanent_id(obj: Resource, label: str) -> None:
    """The binding and work webhooks: a permanent id unless one is already there."""
    if not (obj.metadata.labels or {}).get(label):
        _set_label(obj.metadata, label, _permanent_id(obj.kind, obj.metadata))


# --- CRD schemas ------------------------------------------------------------------------------

Check = Callable[[Path, Any], ErrorList]


@dataclass(frozen=True)
class _Rule:
    """One OpenAPI constraint of a CRD schema, at `a.b[].c` (`[]` every item, `{}` every value)."""

    at: str
    check: Check


def _locate(doc: Any, at: str) -> list[tuple[Path, Any]]:
    found: list[tuple[Path, Any]] = [(Path(), doc)]
    for step in at.split(".") if at else []:
        name, each = (step[:-2], step[-2:]) if step.endswith(("[]", "{}")) else (step, "")
        found = [
            item
            for path, value in found
            if isinstance(value, dict) and value.get(name) is not None
            for item in _each(path.child(name), value[name], each)
        ]
    return found


def _each(path: Path, value: Any, each: str) -> list[tuple[Path, Any]]:
    if each == "[]":
        return [(path.index(i), v) for i, v in enumerate(value)] if isinstance(value, list) else []
    if each == "{}":
        return [(path.child(k), v) for k, v in value.items()] if isinstance(value, dict) else []
    return [(path, value)]


def _schema_errors(obj: Resource, schema: Iterable[_Rule]) -> ErrorList:
    doc = obj.to_dict()
    return [error for rule in schema for at in _locate(doc, rule.at) for error in rule.check(*at)]


def _required(at: str, *fields: str) -> _Rule:
    def check(path: Path, value: Any) -> ErrorList:
        if not isinstance(value, dict):
            return []
        # A null is pruned before validation, so it is as good as absent.
        return [path.child(f).required() for f in fields if value.get(f) is None]

    return _Rule(at, check)


def _enum(at: str, *allowed: str) -> _Rule:
    def check(path: Path, value: Any) -> ErrorList:
        return [] if value in allowed else [path.not_supported(value, allowed)]

    return _Rule(at, check)


def _min_items(at: str, minimum: int) -> _Rule:
    def check(path: Path, value: Any) -> ErrorList:
        if len(value) >= minimum:
            return []
        return [path.invalid(len(value), f"{path} in body should have at least {minimum} items")]

    return _Rule(at, check)


def _minimum(at: str, minimum: int) -> _Rule:
    def check(path: Path, value: Any) -> ErrorList:
        if value >= minimum:
            return []
        return [path.invalid(value, f"{path} in body should be greater than or equal to {minimum}")]

    return _Rule(at, check)


def _string(
    at: str, *, min_length: int = 0, max_length: int | None = None, pattern: str | None = None
) -> _Rule:
    """maxLength, minLength, pattern: the first one broken, as kube-openapi reports them."""

    def check(path: Path, value: Any) -> ErrorList:
        if not isinstance(value, str):
            return []
        if max_length is not None and len(value) > max_length:
            return [path.too_long(max_length)]
        if len(value) < min_length:
            return [
                path.invalid(value, f"{path} in body should be at least {min_length} chars long")
            ]
        if pattern is not None and not re.search(pattern, value):
            return [path.invalid(value, f"{path} in body should match '{pattern}'")]
        return []

    return _Rule(at, check)


_QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
_CONDITION_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
_PURGE_MODES = ("Directly", "Gracefully", "Never")
_HEALTH = ("Healthy", "Unhealthy", "Unknown")


def _match_expressions(at: str) -> list[_Rule]:
    """A label, field or node selector term."""
    return [_required(f"{at}.matchExpressions[]", "key", "operator")]


def _cluster_affinity(at: str) -> list[_Rule]:
    return [*_match_expressions(f"{at}.labelSelector"), *_match_expressions(f"{at}.fieldSelector")]


def _affinity_term(at: str) -> list[_Rule]:
    return [
        _required(at, "affinityName"),
        _string(f"{at}.affinityName", min_length=1, max_length=32),
        *_cluster_affinity(at),
    ]


def _placement(at: str) -> list[_Rule]:
    scheduling = f"{at}.replicaScheduling"
    weights = f"{scheduling}.weightPreference.staticWeightList[]"
    return [
        *_cluster_affinity(f"{at}.clusterAffinity"),
        *_affinity_term(f"{at}.clusterAffinities[]"),
        *_affinity_term(f"{at}.clusterAffinities[].overflowAffinities[]"),
        _enum(f"{scheduling}.replicaDivisionPreference", "Aggregated", "Weighted"),
        _enum(f"{scheduling}.replicaSchedulingType", "Duplicated", "Divided"),
        _enum(f"{scheduling}.weightPreference.dynamicWeight", "AvailableReplicas"),
        _required(weights, "targetCluster", "weight"),
        *_cluster_affinity(f"{weights}.targetCluster"),
        _minimum(f"{weights}.weight", 1),
        _enum(f"{at}.spreadConstraints[].spreadByField", "cluster", "region", "zone", "provider"),
        _required(f"{at}.workloadAffinity.affinity", "groupByLabelKey"),
        _required(f"{at}.workloadAffinity.antiAffinity", "groupByLabelKey"),
    ]


def _state_preservation(at: str) -> list[_Rule]:
    return [_required(at, "rules"), _required(f"{at}.rules[]", "aliasLabelName", "jsonPath")]


def _failover(at: str) -> list[_Rule]:
    return [
        _required(f"{at}.application", "decisionConditions"),
        _enum(f"{at}.application.purgeMode", *_PURGE_MODES),
        *_state_preservation(f"{at}.application.statePreservation"),
        _enum(f"{at}.cluster.purgeMode", "Directly", "Gracefully"),
        *_state_preservation(f"{at}.cluster.statePreservation"),
    ]


def _conditions(at: str) -> list[_Rule]:
    """metav1.Condition."""
    return [
        _required(at, "lastTransitionTime", "message", "reason", "status", "type"),
        _string(f"{at}.message", max_length=32768),
        _minimum(f"{at}.observedGeneration", 0),
        _string(f"{at}.reason", min_length=1, max_length=1024, pattern=_REASON_PATTERN),
        _enum(f"{at}.status", "True", "False", "Unknown"),
        _string(f"{at}.type", max_length=316, pattern=_CONDITION_TYPE_PATTERN),
    ]


def _target_clusters(at: str) -> list[_Rule]:
    return [_required(at, "name"), _required(f"{at}.components[]", "name", "replicas")]


def _replica_requirements(at: str) -> list[_Rule]:
    affinity = f"{at}.nodeClaim.hardNodeAffinity"
    return [
        _required(affinity, "nodeSelectorTerms"),
        *_match_expressions(f"{affinity}.nodeSelectorTerms[]"),
        _required(f"{affinity}.nodeSelectorTerms[].matchFields[]", "key", "operator"),
        _string(f"{at}.resourceRequest{{}}", pattern=_QUANTITY_PATTERN),
    ]


_PROPAGATION_POLICY_SCHEMA = [
    _required("", "spec"),
    _required("spec", "resourceSelectors"),
    _enum("spec.activationPreference", "Lazy"),
    _enum("spec.conflictResolution", "Abort", "Overwrite"),
    *_failover("spec.failover"),
    *_placement("spec.placement"),
    _enum("spec.preemption", "Always", "Never"),
    _min_items("spec.resourceSelectors", 1),
    _required("spec.resourceSelectors[]", "apiVersion", "kind"),
    *_match_expressions("spec.resourceSelectors[].labelSelector"),
    _required("spec.schedulePriority", "priorityClassName", "priorityClassSource"),
    _enum("spec.schedulePriority.priorityClassSource", "KubePriorityClass"),
]

_CLUSTER_TAINT_POLICY_SCHEMA = [
    _required("", "spec"),
    _required("spec", "taints"),
    _required("spec.addOnConditions[]", "conditionType", "operator", "statusValues"),
    _required("spec.removeOnConditions[]", "conditionType", "operator", "statusValues"),
    _min_items("spec.taints", 1),
    _required("spec.taints[]", "effect", "key"),
    *_cluster_affinity("spec.targetClusters"),
]

_BINDING_SCHEMA = [
    _required("", "spec"),
    _required("spec", "resource"),
    *_target_clusters("spec.clusters[]"),
    _required("spec.components[]", "name", "replicas"),
    _string("spec.components[].name", max_length=32),
    *_replica_requirements("spec.components[].replicaRequirements"),
    _enum("spec.conflictResolution", "Abort", "Overwrite"),
    *_failover("spec.failover"),
    _required("spec.gracefulEvictionTasks[]", "fromCluster", "producer", "reason"),
    _string("spec.gracefulEvictionTasks[].message", max_length=1024),
    _enum("spec.gracefulEvictionTasks[].purgeMode", *_PURGE_MODES),
    _string(
        "spec.gracefulEvictionTasks[].reason",
        min_length=1,
        max_length=32,
        pattern=_REASON_PATTERN,
    ),
    *_placement("spec.placement"),
    *_replica_requirements("spec.replicaRequirements"),
    _required("spec.requiredBy[]", "name"),
    *_target_clusters("spec.requiredBy[].clusters[]"),
    _required("spec.resource", "apiVersion", "kind", "name"),
    _required("status.aggregatedStatus[]", "clusterName"),
    _enum("status.aggregatedStatus[].health", *_HEALTH),
    *_conditions("status.conditions[]"),
]

_WORK_SCHEMA = [
    _required("", "spec"),
    *_conditions("status.conditions[]"),
    _required("status.manifestStatuses[]", "identifier"),
    _enum("status.manifestStatuses[].health", *_HEALTH),
    _required(
        "status.manifestStatuses[].identifier", "kind", "name", "ordinal", "resource", "version"
    ),
]


def _validation(schema: list[_Rule], webhook: Validate | None = None) -> Validate:
    """The CRD schema, then, only once that holds, the validating webhook."""

    def validate(request: Request) -> ErrorList:
        errors = _schema_errors(request.obj, schema)
        return errors if errors or webhook is None else webhook(request)

    return validate


# --- Cluster ----------------------------------------------------------------------------------

_CLUSTER_NAME_MAX_LENGTH = 48


def validate_cluster_name(name: str) -> list[str]:
    """ValidateClusterName: a DNS label short enough to prefix with `karmada-es-`."""
    if not name:
        return ["must be not empty"]
    if len(name) > _CLUSTER_NAME_MAX_LENGTH:
        return [f"must be no more than {_CLUSTER_NAME_MAX_LENGTH} characters"]
    return is_dns1123_label(name)


_MAX_INT64 = 2**63 - 1
# (cpu min, cpu max, memory min, memory max) of grades 0 to 8, as SetDefaultClusterResourceModels.
_DEFAULT_RESOURCE_MODEL_BOUNDS = [
    ("0", "1", "0", "4Gi"),
    ("1", "2", "4Gi", "16Gi"),
    ("2", "4", "16Gi", "32Gi"),
    ("4", "8", "32Gi", "64Gi"),
    ("8", "16", "64Gi", "128Gi"),
    ("16", "32", "128Gi", "256Gi"),
    ("32", "64", "256Gi", "512Gi"),
    ("64", "128", "512Gi", "1Ti"),
    ("128", str(_MAX_INT64), "1Ti", str(_MAX_INT64)),
]


def _default_resource_models() -> list[clusterv1.ResourceModel]:
    return [
        clusterv1.ResourceModel(
            grade=grade,
            ranges=[
                clusterv1.ResourceModelRange(name="cpu", min=cpu_min, max=cpu_max),
                clusterv1.ResourceModelRange(name="memory", min=mem_min, max=mem_max),
            ],
        )
        for grade, (cpu_min, cpu_max, mem_min, mem_max) in enumerate(_DEFAULT_RESOURCE_MODEL_BOUNDS)
    ]


def _standardize_resource_models(spec: clusterv1.ClusterSpec) -> None:
    """Grades in order; the first grade starts at 0 and the last one never ends."""
    models = sorted(spec.resource_models or [], key=lambda m: m.grade)
    for bound in models[0].ranges:
        bound.min = "0"
    for bound in models[-1].ranges:
        bound.max = str(_MAX_INT64)
    spec.resource_models = models


def _mutate_cluster(request: Request) -> None:
    cluster = _obj(request, clusterv1.Cluster)
    spec = cluster.spec
    # PrepareForCreate / PrepareForUpdate, with CustomizedClusterResourceModeling on (its default).
    if spec.resource_models:
        _standardize_resource_models(spec)
    elif request.operation is Operation.CREATE:
        spec.resource_models = _default_resource_models()
    # Canonicalize (mutation.MutateCluster).
    for taint in spec.taints or []:
        if taint.effect == NO_EXECUTE and taint.time_added is None:
            taint.time_added = request.now
    # Upstream moves zone into zones after validating it; an invalid zone is left in place for
    # validation to report where the user wrote it.
    if spec.zone and not spec.zones and not is_label_value(spec.zone):
        spec.zones, spec.zone = [spec.zone], None
    _marshal_spec_like_go(cluster)


def _validate_cluster(request: Request) -> ErrorList:
    return _validate_cluster_spec(_obj(request, clusterv1.Cluster).spec, Path("spec"))


def _validate_cluster_spec(spec: clusterv1.ClusterSpec, path: Path) -> ErrorList:
    """ValidateClusterSpec."""
    errors: ErrorList = []
    if not spec.sync_mode:
        errors.append(path.child("syncMode").required())
    if spec.sync_mode not in (clusterv1.SYNC_MODE_PULL, clusterv1.SYNC_MODE_PUSH):
        errors.append(
            path.child("syncMode").not_supported(
                spec.sync_mode, (clusterv1.SYNC_MODE_PULL, clusterv1.SYNC_MODE_PUSH)
            )
        )
    if spec.api_endpoint:
        errors += _validate_api_endpoint(spec.api_endpoint, path.child("apiEndpoint"))
    for name, ref in (
        ("secretRef", spec.secret_ref),
        ("impersonatorSecretRef", spec.impersonator_secret_ref),
    ):
        if ref is not None:
            errors += _validate_secret_ref(ref, path.child(name))
    if spec.proxy_url:
        errors += _validate_proxy_url(spec.proxy_url, path.child("proxyURL"))
    errors += _validate_cluster_location(spec, path)
    errors += _validate_cluster_taints(spec.taints or [], path.child("taints"))
    errors += _validate_resource_models(spec.resource_models or [], path.child("resourceModels"))
    return errors


def _validate_secret_ref(ref: clusterv1.LocalSecretReference, path: Path) -> ErrorList:
    return [path.child(f).required() for f in ("namespace", "name") if not getattr(ref, f)]


def _label_value_error(value: str, path: Path, sep: str = "; ") -> ErrorList:
    messages = is_label_value(value)
    return [path.invalid(value, sep.join(messages))] if messages else []


def _validate_cluster_location(spec: clusterv1.ClusterSpec, path: Path) -> ErrorList:
    """validateClusterSpecForFieldSelector: what a field selector may match must be a label
    value. Upstream's paths (`spec.spec`, `spec.Zone`) are kept as they are."""
    errors = _label_value_error(spec.provider or "", path.child("provider"))
    errors += _label_value_error(spec.region or "", path.child("region"))
    if spec.zone and spec.zones:
        return [
            *errors,
            path.child("spec").type_invalid(_wire(spec), "Zone and Zones cannot co-exist"),
        ]
    if spec.zone:
        return errors + _label_value_error(spec.zone, path.child("Zone"))
    for zone in spec.zones or []:
        errors += _label_value_error(zone, path.child("Zones"))
    return errors


def _validate_cluster_taints(taints: list[Taint], path: Path) -> ErrorList:
    """lifted.ValidateClusterTaints: node taint rules, less PreferNoSchedule."""
    errors: ErrorList = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        at = path.index(i)
        errors += validate_qualified_name(taint.key, at.child("key"))
        errors += _label_value_error(taint.value or "", at.child("value"), sep=";")
        if not taint.effect:
            errors.append(at.child("effect").required())
        elif taint.effect not in (NO_SCHEDULE, NO_EXECUTE):
            errors.append(at.child("effect").not_supported(taint.effect, (NO_SCHEDULE, NO_EXECUTE)))
        if (taint.effect, taint.key) in seen:
            duplicate = at.duplicate(_wire(taint))
            errors.append(
                dataclasses.replace(
                    duplicate, detail="taints must be unique by key and effect pair"
                )
            )
        seen.add((taint.effect, taint.key))
    return errors


def _validate_resource_models(models: list[clusterv1.ResourceModel], path: Path) -> ErrorList:
    """ValidateClusterResourceModels, once every quantity parses (upstream fails to decode one
    that does not)."""
    unparsed = [
        path.index(i).child("ranges").index(j).child(end).invalid(quantity, _QUANTITY_FORMAT_ERROR)
        for i, model in enumerate(models)
        for j, bound in enumerate(model.ranges)
        for end, quantity in (("min", bound.min), ("max", bound.max))
        if _quantity(quantity) is None
    ]
    if unparsed:
        return unparsed
    message = _resource_models_error(models)
    return [path.invalid(_wire(models), message)] if message else []


def _resource_models_error(models: list[clusterv1.ResourceModel]) -> str | None:
    """The first broken rule. Standardization has already made the first grade start at 0 and
    the last one end at MaxInt64, the two rules not checked here."""
    for previous, model in zip([None, *models], models, strict=False):
        if previous is not None and model.grade == previous.grade:
            return "The grade of each models should not be the same"
        if previous is not None and len(model.ranges) != len(previous.ranges):
            return "The number of resource types should be the same"
        for j, bound in enumerate(model.ranges):
            if _amount(bound.max) <= _amount(bound.min):
                return "The max value of each resource must be greater than the min value"
            if previous is None:
                continue
            if previous.ranges[j].name != bound.name:
                return "The resource types of each models should be the same"
            # Go compares the parsed structs, which differ whenever the written forms do.
            if str(previous.ranges[j].max).strip() != str(bound.min).strip():
                return "Model intervals for resources must be contiguous and non-overlapping"
    return None


_QUANTITY_RE = re.compile(_QUANTITY_PATTERN)
_QUANTITY_FORMAT_ERROR = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
# Multipliers of the binary suffixes, powers of ten of the decimal ones.
_BINARY_SUFFIXES = {s: 1 << 10 * i for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"), 1)}
_DECIMAL_SUFFIXES = {
    s: 3 * i for i, s in enumerate(("n", "u", "m", "", "k", "M", "G", "T", "P", "E"), -3)
}


def _quantity(value: Any) -> Fraction | None:
    """resource.ParseQuantity's value, or None when it would not parse."""
    text = str(value).strip()
    match = _QUANTITY_RE.match(text)
    if match is None:
        return None
    suffix = match.group(6) or ""
    number = Fraction(text[: len(text) - len(suffix)])
    if suffix in _BINARY_SUFFIXES:
        return number * _BINARY_SUFFIXES[suffix]
    if suffix in _DECIMAL_SUFFIXES:
        return number * _power_of_ten(_DECIMAL_SUFFIXES[suffix])
    exponent = suffix[1:]
    return number * _power_of_ten(int(exponent)) if exponent.lstrip("+-").isdigit() else None


def _amount(value: Any) -> Fraction:
    amount = _quantity(value)
    assert amount is not None, value
    return amount


def _power_of_ten(exponent: int) -> Fraction:
    return Fraction(10**exponent) if exponent >= 0 else Fraction(1, 10**-exponent)


# --- Go's net/url.Parse, as far as the Cluster endpoint checks look ---------------------------


@dataclass(frozen=True)
class _URL:
    scheme: str = ""
    user: str | None = None
    host: str = ""
    query: str = ""
    fragment: str = ""


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _parse_url(raw: str) -> _URL:
    """url.Parse; ValueError worded as Go's *url.Error."""
    head, _, fragment = raw.partition("#")
    try:
        url = _parse_url_head(head)
    except ValueError as exc:
        raise ValueError(f"parse {_go_quote(head)}: {exc}") from None
    try:
        _unescape(fragment)
    except ValueError as exc:
        raise ValueError(f"parse {_go_quote(raw)}: {exc}") from None
    return dataclasses.replace(url, fragment=fragment)


def _parse_url_head(raw: str) -> _URL:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise ValueError("net/url: invalid control character in URL")
    scheme, rest = _url_scheme(raw)
    if rest.endswith("?") and rest.count("?") == 1:
        rest, query = rest[:-1], ""
    else:
        rest, _, query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return _URL(scheme, query=query)  # opaque, like mailto:someone
        if ":" in rest.partition("/")[0]:
            raise ValueError("first path segment in URL cannot contain colon")
    user, host = None, ""
    if rest.startswith("//") and (scheme or not rest.startswith("///")):
        authority, slash, path = rest[2:].partition("/")
        user, host = _url_authority(authority)
        rest = slash + path
    _unescape(rest)
    return _URL(scheme, user, host, query)


def _url_scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if c.isascii() and (c.isdigit() or c in "+-."):
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise ValueError("missing protocol scheme")
            return raw[:i].lower(), raw[i + 1 :]
        return "", raw
    return "", raw


_USERINFO_CHARS = set("-._:~!$&'()*+,;=%@")
_HOST_CHARS = set("-_.~!$&'()*+,;=:[]<>\"")


def _url_authority(authority: str) -> tuple[str | None, str]:
    userinfo, at, hostport = authority.rpartition("@")
    host = _url_host(hostport)
    if not at:
        return None, host
    if not all((c.isascii() and c.isalnum()) or c in _USERINFO_CHARS for c in userinfo):
        raise ValueError("net/url: invalid userinfo")
    _unescape(userinfo)
    return userinfo, host


def _url_host(host: str) -> str:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise ValueError("missing ']' in host")
        port = host[end + 1 :]
    else:
        port = host[host.rfind(":") :] if ":" in host else ""
    if port and not (port[0] == ":" and all("0" <= c <= "9" for c in port[1:])):
        raise ValueError(f"invalid port {_go_quote(port)} after host")
    _unescape(host, in_host=True)
    return host


def _unescape(text: str, in_host: bool = False) -> None:
    """url.unescape's refusals: bad percent escapes and, in a host, characters to escape."""
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%":
            escape = text[i : i + 3]
            if len(escape) < 3 or not all(h in "0123456789abcdefABCDEF" for h in escape[1:]):
                raise ValueError(f"invalid URL escape {_go_quote(escape)}")
            if in_host and int(escape[1], 16) < 8 and escape != "%25":
                raise ValueError(f"invalid URL escape {_go_quote(escape)}")
            i += 3
            continue
        if in_host and c.isascii() and not c.isalnum() and c not in _HOST_CHARS:
            raise ValueError(f"invalid character {_go_quote(c)} in host name")
        i += 1


_ENDPOINT_FORM = "; desired format: hostname, hostname:port, IP or IP:port"


def _validate_api_endpoint(endpoint: str, path: Path) -> ErrorList:
    """ValidateClusterAPIEndpoint, without forcing https (as ValidateClusterSpec calls it)."""
    try:
        url = _parse_url(endpoint)
    except ValueError as exc:
        return [path.invalid(endpoint, f"apiEndpoint must be a valid URL: {exc}{_ENDPOINT_FORM}")]
    errors: ErrorList = []
    if not url.host:
        errors.append(path.invalid(url.host, "host must be provided" + _ENDPOINT_FORM))
    if url.user is not None:
        errors.append(path.invalid(url.user, "user information is not permitted in the URL"))
    if url.fragment:
        errors.append(path.invalid(url.fragment, "fragments are not permitted in the URL"))
    if url.query:
        errors.append(path.invalid(url.query, "query parameters are not permitted in the URL"))
    return errors


def _validate_proxy_url(proxy_url: str, path: Path) -> ErrorList:
    try:
        url = _parse_url(proxy_url)
    except ValueError as exc:
        # Upstream's message names apiEndpoint here too.
        return [path.invalid(proxy_url, f"apiEndpoint must be a valid URL: {exc}")]
    if url.scheme in ("http", "https", "socks5"):
        return []
    message = f"unsupported scheme {_go_quote(url.scheme)}, must be http, https, or socks5"
    return [path.invalid(proxy_url, message)]


# --- PropagationPolicy and ClusterPropagationPolicy -------------------------------------------

Policy = policyv1.PropagationPolicy | policyv1.ClusterPropagationPolicy

_SERVICE_IMPORT = ("multicluster.x-k8s.io/v1alpha1", "ServiceImport")
_DEFAULT_GRACE_PERIOD_SECONDS = 600


@dataclass(frozen=True)
class _PolicyKind:
    model: type[Policy]
    webhook: str
    permanent_id_label: str
    finalizer: str


_PROPAGATION_POLICY = _PolicyKind(
    policyv1.PropagationPolicy,
    "propagationpolicy.karmada.io",
    policyv1.PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    "karmada.io/propagation-policy-controller",
)
_CLUSTER_PROPAGATION_POLICY = _PolicyKind(
    policyv1.ClusterPropagationPolicy,
    "clusterpropagationpolicy.karmada.io",
    policyv1.CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    "karmada.io/cluster-propagation-policy-controller",
)


def _default_policy(policy: Policy) -> None:
    """The CRD's `default:` markers."""
    if "spec" not in policy.model_fields_set:
        return
    spec = policy.spec
    _default(spec, "conflict_resolution", policyv1.CONFLICT_ABORT)
    _default(spec, "preemption", policyv1.PREEMPT_NEVER)
    _default(spec, "priority", 0)
    _default(spec, "scheduler_name", "default-scheduler")
    _default_failover(spec.failover)
    if spec.placement.replica_scheduling is not None:
        _default(
            spec.placement.replica_scheduling,
            "replica_scheduling_type",
            policyv1.REPLICA_SCHEDULING_DIVIDED,
        )


def _default_failover(failover: policyv1.FailoverBehavior | None) -> None:
    if failover is None:
        return
    if failover.application is not None:
        _default(failover.application, "purge_mode", policyv1.PURGE_MODE_GRACEFULLY)
        if "decision_conditions" in failover.application.model_fields_set:
            _default(failover.application.decision_conditions, "toleration_seconds", 300)
    if failover.cluster is not None:
        _default(failover.cluster, "purge_mode", policyv1.PURGE_MODE_GRACEFULLY)


def _policy_webhook_mutate(kind: _PolicyKind) -> Mutate:
    """The policy mutating webhook."""

    def mutate(request: Request) -> None:
        policy = _obj(request, kind.model)
        spec, placement = policy.spec, policy.spec.placement
        if request.info.namespaced:
            for selector in spec.resource_selectors:
                selector.namespace = selector.namespace or policy.metadata.namespace
        _default_spread_constraints(placement.spread_constraints or [])
        _add_default_tolerations(placement, request)
        if any((s.api_version, s.kind) == _SERVICE_IMPORT for s in spec.resource_selectors):
            spec.propagate_deps = True
        if placement.replica_scheduling_type() == policyv1.REPLICA_SCHEDULING_DIVIDED:
            scheduling = placement.replica_scheduling
            assert scheduling is not None
            scheduling.replica_division_preference = (
                scheduling.replica_division_preference or policyv1.REPLICA_DIVISION_WEIGHTED
            )
        application = spec.failover.application if spec.failover else None
        if (
            application is not None
            and application.purge_mode == policyv1.PURGE_MODE_GRACEFULLY
            and application.grace_period_seconds is None
        ):
            application.grace_period_seconds = _DEFAULT_GRACE_PERIOD_SECONDS
        if request.operation is Operation.CREATE:
            _set_label(
                policy.metadata,
                kind.permanent_id_label,
                _permanent_id(policy.kind, policy.metadata),
            )
            finalizers = policy.metadata.finalizers or []
            if kind.finalizer not in finalizers:
                policy.metadata.finalizers = [*finalizers, kind.finalizer]

    return mutate


def _default_spread_constraints(constraints: list[policyv1.SpreadConstraint]) -> None:
    """SetDefaultSpreadConstraints: spread by cluster unless told otherwise, at least 1 group."""
    for constraint in constraints:
        if not constraint.spread_by_label and not constraint.spread_by_field:
            constraint.spread_by_field = policyv1.SPREAD_BY_FIELD_CLUSTER
        if not constraint.min_groups:
            constraint.min_groups = 1


def _add_default_tolerations(placement: policyv1.Placement, request: Request) -> None:
    """Karmada <= v1.13 (--default-not-ready-toleration-seconds and
    --default-unreachable-toleration-seconds): tolerate the NoExecute not-ready and unreachable
    taints for a while, unless the policy already has that very toleration."""
    config = request.config
    for key, seconds in (
        (clusterv1.TAINT_CLUSTER_NOT_READY, config.default_not_ready_toleration_seconds),
        (clusterv1.TAINT_CLUSTER_UNREACHABLE, config.default_unreachable_toleration_seconds),
    ):
        if seconds is None:
            continue
        default = Toleration(
            key=key, operator=OP_EXISTS, effect=NO_EXECUTE, toleration_seconds=seconds
        )
        tolerations = placement.cluster_tolerations or []
        if not any(_same_toleration(t, default) for t in tolerations):
            placement.cluster_tolerations = [*tolerations, default]


def _same_toleration(a: Toleration, b: Toleration) -> bool:
    """Toleration.MatchToleration: same key, operator, value and effect, whatever the seconds."""
    return all(
        (getattr(a, f) or "") == (getattr(b, f) or "")
        for f in ("key", "operator", "value", "effect")
    )


def _policy_webhook_validate(kind: _PolicyKind) -> Validate:
    """The policy validating webhook: the first of its checks to refuse. The update and label
    checks deny with bare messages upstream; here they name the field they are about."""

    def validate(request: Request) -> ErrorList:
        policy = _obj(request, kind.model)
        namespace = policy.metadata.namespace if request.info.namespaced else ""
        return (
            _policy_update_errors(policy, request.old, kind.permanent_id_label)
            or _permanent_id_errors(policy, kind.permanent_id_label)
            or _validate_propagation_spec(policy.spec, namespace)
        )

    return validate


def _policy_update_errors(policy: Policy, old: Any, label: str) -> ErrorList:
    if old is None:
        return []
    if policy.spec.scheduler_name != old.spec.scheduler_name:
        path = Path("spec").child("schedulerName")
        return [path.invalid(policy.spec.scheduler_name, "the schedulerName should not be updated")]
    value = (policy.metadata.labels or {}).get(label)
    if value != (old.metadata.labels or {}).get(label):
        message = f"label {label} is immutable, it can only be set by the system during creation"
        return [Path("metadata").child("labels").key(label).invalid(value, message)]
    return []


def _permanent_id_errors(policy: Policy, label: str) -> ErrorList:
    if label in (policy.metadata.labels or {}):
        return []
    message = (
        f"label {label} is required, it should be set by the mutating admission webhook during "
        "creation"
    )
    return [Path("metadata").child("labels").key(label).required(message)]


def _validate_propagation_spec(spec: policyv1.PropagationSpec, namespace: str) -> ErrorList:
    """ValidatePropagationSpec; `namespace` is empty for a ClusterPropagationPolicy."""
    path = Path("spec")
    errors = _validate_placement(spec.placement, path.child("placement"))
    application = spec.failover.application if spec.failover is not None else None
    if application is not None and not spec.propagate_deps:
        errors.append(
            path.child("propagateDeps").invalid(
                False, "application failover is set, propagateDeps must be true"
            )
        )
    errors += _validate_failover(spec.failover, path.child("failover"))
    errors += _validate_resource_selectors(spec, namespace, path.child("resourceSelectors"))
    errors += _validate_suspension(spec.suspension, path.child("suspension"))
    return errors


def _validate_resource_selectors(
    spec: policyv1.PropagationSpec, namespace: str, path: Path
) -> ErrorList:
    """A PropagationPolicy selects in its own namespace; preemption needs names, lest a policy
    take over templates it never meant to."""
    foreign = "namespace of resource selector must be the same as the namespace of the policy"
    unnamed = (
        "name cannot be empty if preemption is Always, the empty name may cause unexpected "
        "resources preemption"
    )
    errors: ErrorList = []
    for i, selector in enumerate(spec.resource_selectors if namespace else []):
        if selector.namespace != namespace:
            errors.append(path.index(i).child("namespace").invalid(selector.namespace, foreign))
    preempting = spec.preemption == policyv1.PREEMPT_ALWAYS
    for i, selector in enumerate(spec.resource_selectors if preempting else []):
        if not selector.name:
            errors.append(path.index(i).child("name").invalid("", unnamed))
    return errors


def _validate_suspension(suspension: policyv1.Suspension | None, path: Path) -> ErrorList:
    if (
        suspension is None
        or not suspension.dispatching
        or suspension.dispatching_on_clusters is None
        or not suspension.dispatching_on_clusters.cluster_names
    ):
        return []
    # Upstream names the field twice.
    return [
        path.child("suspension").invalid(
            _wire(suspension),
            "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames",
        )
    ]


def _validate_placement(placement: policyv1.Placement, path: Path) -> ErrorList:
    """ValidatePlacement."""
    errors: ErrorList = []
    if placement.cluster_affinity is not None and placement.cluster_affinities is not None:
        errors.append(
            path.invalid(_wire(placement), "clusterAffinities cannot co-exist with clusterAffinity")
        )
    overflow_allowed = _overflow_scheduling_allowed(placement.replica_scheduling)
    for i, term in enumerate(placement.cluster_affinities or []):
        if term.overflow_affinities is not None and not overflow_allowed:
            errors.append(
                path.child("clusterAffinities")
                .index(i)
                .child("overflowAffinities")
                .invalid(
                    _wire(term.overflow_affinities),
                    "overflowAffinities can only be used together with dynamic weight or "
                    "aggregated scheduling",
                )
            )
    errors += _validate_cluster_affinity(placement.cluster_affinity, path.child("clusterAffinity"))
    errors += _validate_cluster_affinities(
        placement.cluster_affinities or [], path.child("clusterAffinities")
    )
    errors += _validate_spread_constraints(
        placement.spread_constraints or [], path.child("spreadConstraints")
    )
    errors += _validate_workload_affinity(
        placement.workload_affinity, path.child("workloadAffinity")
    )
    for i, toleration in enumerate(placement.cluster_tolerations or []):
        # Lt and Gt (KEP-5471) compare numbers on nodes; Karmada keeps them off clusters.
        if toleration.operator in ("Lt", "Gt"):
            errors.append(
                path.child("clusterTolerations")
                .index(i)
                .child("operator")
                .not_supported(toleration.operator, ("", OP_EXISTS, OP_EQUAL))
            )
    return errors


def _overflow_scheduling_allowed(scheduling: policyv1.ReplicaSchedulingStrategy | None) -> bool:
    """Overflow tiers need replicas divided by available resources: aggregated or dynamic weight."""
    if (
        scheduling is None
        or scheduling.replica_scheduling_type != policyv1.REPLICA_SCHEDULING_DIVIDED
    ):
        return False
    if scheduling.replica_division_preference == policyv1.REPLICA_DIVISION_AGGREGATED:
        return True
    return (
        scheduling.replica_division_preference == policyv1.REPLICA_DIVISION_WEIGHTED
        and scheduling.weight_preference is not None
        and bool(scheduling.weight_preference.dynamic_weight)
    )


_FIELD_SELECTOR_KEYS = ("provider", "region", "zone")


def _validate_cluster_affinity(affinity: policyv1.ClusterAffinity | None, path: Path) -> ErrorList:
    """ValidateClusterAffinity: the field selector's first unsupported key or operator."""
    selector = affinity.field_selector if affinity is not None else None
    if selector is None:
        return []
    for expression in selector.match_expressions or []:
        if expression.key not in _FIELD_SELECTOR_KEYS:
            message = (
                f"unsupported key {_go_quote(expression.key)}, must be provider, region, or zone"
            )
        elif expression.operator not in ("In", "NotIn"):
            message = f"unsupported operator {_go_quote(expression.operator)}, must be In or NotIn"
        else:
            continue
        return [path.child("fieldSelector").invalid(_wire(selector), message)]
    return []


def _validate_cluster_affinities(
    terms: list[policyv1.ClusterAffinityTerm], path: Path
) -> ErrorList:
    errors: ErrorList = []
    names: set[str] = set()
    for i, term in enumerate(terms):
        errors += validate_qualified_name(term.affinity_name, path.index(i))
        if term.affinity_name in names:
            errors.append(
                path.invalid(_wire(terms), "each affinity term in a policy must have a unique name")
            )
        names.add(term.affinity_name)
        errors += _validate_cluster_affinity(term, path.index(i))
        errors += _validate_overflow_affinities(term, path.index(i).child("overflowAffinities"))
    return errors


def _validate_overflow_affinities(term: policyv1.ClusterAffinityTerm, path: Path) -> ErrorList:
    if term.overflow_affinities is None:
        return []
    errors: ErrorList = []
    if _empty_cluster_affinity(term):
        errors.append(
            path.invalid(
                _wire(term.overflow_affinities),
                "overflowAffinities can only be used together with the inline ClusterAffinity",
            )
        )
    names = {term.affinity_name}
    for i, overflow in enumerate(term.overflow_affinities):
        name_path = path.index(i).child("affinityName")
        errors += validate_qualified_name(overflow.affinity_name, name_path)
        if overflow.affinity_name in names:
            errors.append(
                name_path.invalid(
                    overflow.affinity_name,
                    "overflow affinity name must be unique and must not duplicate the primary "
                    "group's affinityName",
                )
            )
        names.add(overflow.affinity_name)
        errors += _validate_cluster_affinity(overflow, path.index(i))
    return errors


def _empty_cluster_affinity(affinity: policyv1.ClusterAffinity) -> bool:
    return (
        affinity.label_selector is None
        and affinity.field_selector is None
        and not affinity.cluster_names
        and not affinity.exclude_clusters
    )


def _validate_spread_constraints(
    constraints: list[policyv1.SpreadConstraint], path: Path
) -> ErrorList:
    """ValidateSpreadConstraint."""
    errors: ErrorList = []
    reported: dict[str, bool] = {}  # spreadByField values seen, and whether a repeat was reported
    for i, constraint in enumerate(constraints):
        value = _wire(constraint)
        min_groups, max_groups = constraint.min_groups or 0, constraint.max_groups or 0
        if constraint.spread_by_field and constraint.spread_by_label:
            errors.append(
                path.index(i).invalid(value, "spreadByLabel should not co-exist with spreadByField")
            )
        if min_groups < 0:
            errors.append(path.index(i).invalid(value, "minGroups lower than 0 is not allowed"))
        if max_groups < 0:
            errors.append(path.index(i).invalid(value, "maxGroups lower than 0 is not allowed"))
        if 0 < max_groups < min_groups:
            errors.append(
                path.index(i).invalid(value, "maxGroups lower than minGroups is not allowed")
            )
        field = constraint.spread_by_field
        if field and reported.get(field) is False:
            message = f"multiple {field} spread constraints are not allowed"
            errors.append(path.invalid(_wire(constraints), message))
            reported[field] = True
        elif field:
            reported.setdefault(field, False)
    if reported and policyv1.SPREAD_BY_FIELD_CLUSTER not in reported:
        errors.append(
            path.invalid(
                _wire(constraints),
                "the cluster spread constraint must be enabled in one of the constraints in case "
                "of SpreadByField is enabled",
            )
        )
    return errors


def _validate_workload_affinity(
    affinity: policyv1.WorkloadAffinity | None, path: Path
) -> ErrorList:
    if affinity is None:
        return []
    errors: ErrorList = []
    for name, term in (("affinity", affinity.affinity), ("antiAffinity", affinity.anti_affinity)):
        if term is not None:
            errors += validate_qualified_name(
                term.group_by_label_key, path.child(name, "groupByLabelKey")
            )
    if (
        affinity.affinity is not None
        and affinity.anti_affinity is not None
        and affinity.affinity.group_by_label_key == affinity.anti_affinity.group_by_label_key
    ):
        errors.append(
            path.invalid(
                _wire(affinity), "affinity and antiAffinity must not use the same groupByLabelKey"
            )
        )
    return errors


def _validate_failover(failover: policyv1.FailoverBehavior | None, path: Path) -> ErrorList:
    """ValidateFailover."""
    if failover is None:
        return []
    errors = _validate_application_failover(failover.application, path.child("application"))
    if failover.cluster is not None:
        errors += _validate_state_preservation(
            failover.cluster.state_preservation, path.child("cluster", "statePreservation")
        )
    return errors


def _validate_application_failover(
    application: policyv1.ApplicationFailoverBehavior | None, path: Path
) -> ErrorList:
    if application is None:
        return []
    errors: ErrorList = []
    seconds = application.decision_conditions.toleration_seconds
    if seconds is not None and seconds < 0:
        errors.append(
            path.child("decisionConditions", "tolerationSeconds").invalid(
                seconds, "must be greater than or equal to 0"
            )
        )
    grace = application.grace_period_seconds
    gracefully = application.purge_mode == policyv1.PURGE_MODE_GRACEFULLY
    if not gracefully and grace is not None:
        errors.append(
            path.child("gracePeriodSeconds").invalid(
                grace, "only takes effect when purgeMode is gracefully"
            )
        )
    if gracefully and grace is None:
        errors.append(
            path.child("gracePeriodSeconds").invalid(
                None, "should not be empty when purgeMode is gracefully"
            )
        )
    if grace is not None and grace <= 0:
        errors.append(path.child("gracePeriodSeconds").invalid(grace, "must be greater than 0"))
    errors += _validate_state_preservation(
        application.state_preservation, path.child("statePreservation")
    )
    return errors


def _validate_state_preservation(
    preservation: policyv1.StatePreservation | None, path: Path
) -> ErrorList:
    """Each alias becomes a label key on the workload in its new cluster."""
    errors: ErrorList = []
    for i, rule in enumerate(preservation.rules if preservation is not None else []):
        errors += validate_qualified_name(
            rule.alias_label_name, path.child("rules").index(i).child("aliasLabelName")
        )
    return errors


# --- ClusterTaintPolicy -----------------------------------------------------------------------


def _cluster_taint_policy_webhook(request: Request) -> ErrorList:
    """The ClusterTaintPolicy validating webhook: NoExecute only when the hub allows it
    (--allow-no-execute-taint-policy), and each key and effect pair once."""
    taints = _obj(request, policyv1.ClusterTaintPolicy).spec.taints
    path = Path("spec").child("taints")
    errors: ErrorList = []
    for i, taint in enumerate(taints):
        if taint.effect == NO_EXECUTE and not request.config.allow_no_execute_taint_policy:
            errors.append(
                path.index(i).forbidden(
                    "Configuring taint with NoExecute effect is not allowed, this capability must "
                    "be explicitly enabled by administrators through command-line flags"
                )
            )
        if any((t.key, t.effect) == (taint.key, taint.effect) for t in taints[i + 1 :]):
            errors.append(
                path.index(i).duplicate(
                    f"Duplicate taint with the same key({taint.key}) and effect({taint.effect}) "
                    "is not allowed"
                )
            )
    return errors


# --- ResourceBinding, ClusterResourceBinding and Work -----------------------------------------

Binding = workv1.ResourceBinding | workv1.ClusterResourceBinding

_DEPENDENCIES_ANNOTATION = "resourcebinding.karmada.io/dependencies"


def _default_binding(binding: Binding) -> None:
    """The binding CRDs' `default:` markers."""
    if "spec" not in binding.model_fields_set:
        return
    spec = binding.spec
    _default(spec, "conflict_resolution", policyv1.CONFLICT_ABORT)
    _default_failover(spec.failover)
    if spec.placement is not None and spec.placement.replica_scheduling is not None:
        _default(
            spec.placement.replica_scheduling,
            "replica_scheduling_type",
            policyv1.REPLICA_SCHEDULING_DIVIDED,
        )
    if spec.schedule_priority is not None:
        _default(spec.schedule_priority, "priority", 0)


def _binding_webhook_mutate(label: str) -> Mutate:
    return lambda request: _label_unset_permanent_id(request.obj, label)


def _resource_binding_webhook(request: Request) -> ErrorList:
    """The ResourceBinding validating webhook. Its FederatedResourceQuota check and its
    components check sit behind feature gates that are off by default
    (FederatedQuotaEnforcement, MultiplePodTemplatesScheduling)."""
    binding = _obj(request, workv1.ResourceBinding)
    dependencies = (binding.metadata.annotations or {}).get(_DEPENDENCIES_ANNOTATION)
    if dependencies is None or _dependencies_parse(dependencies):
        return []
    path = Path("metadata").child("annotations", _DEPENDENCIES_ANNOTATION)
    return [path.invalid(dependencies, "annotation value must be a valid JSON")]


def _dependencies_parse(text: str) -> bool:
    """Whether Go would unmarshal the annotation into []DependentObjectReference."""

    def refuse(constant: str) -> Any:
        raise ValueError(constant)

    try:
        items = json.loads(text, parse_constant=refuse)
    except ValueError:
        return False
    if items is None:
        return True
    return isinstance(items, list) and all(
        item is None
        or (
            isinstance(item, dict)
            and all(
                isinstance(item.get(f), str | None)
                for f in ("apiVersion", "kind", "namespace", "name")
            )
            and isinstance(item.get("labelSelector"), dict | None)
        )
        for item in items
    )


def _work_webhook_mutate(request: Request) -> None:
    """The Work mutating webhook: a permanent id, and each manifest pruned of what the API
    server or a member cluster fills in, labelled with that id and its managed keys recorded."""
    work = _obj(request, workv1.Work)
    _label_unset_permanent_id(work, workv1.WORK_PERMANENT_ID_LABEL)
    manifests = work.spec.workload.manifests
    if manifests and not _manifest_kind_errors(work):
        permanent_id = (work.metadata.labels or {})[workv1.WORK_PERMANENT_ID_LABEL]
        work.spec.workload.manifests = [_prepare_workload(m, permanent_id) for m in manifests]


def _manifest_kind_errors(work: workv1.Work) -> ErrorList:
    """The Work mutating webhook fails on the first manifest it cannot decode: one without a
    kind. Upstream answers 500; here it is the manifest's field error."""
    path = Path("spec").child("workload", "manifests")
    for i, manifest in enumerate(work.spec.workload.manifests or []):
        if not isinstance(manifest.get("kind"), str) or not manifest["kind"]:
            raw = json.dumps(manifest, separators=(",", ":"), ensure_ascii=False)
            return [path.index(i).child("kind").required(f"Object 'Kind' is missing in '{raw}'")]
    return []


def _validate_work(request: Request) -> ErrorList:
    return _manifest_kind_errors(request.obj) or _schema_errors(request.obj, _WORK_SCHEMA)


def _prepare_workload(manifest: dict[str, Any], permanent_id: str) -> dict[str, Any]:
    """RemoveIrrelevantFields, then SetLabelsAndAnnotationsForWorkload."""
    workload = copy.deepcopy(manifest)
    remove_irrelevant_fields(workload)
    metadata = _map_at(workload, "metadata")
    if metadata is None:
        metadata = workload["metadata"] = {}
    annotations = dict(_map_at(metadata, "annotations") or {})
    managed = {workv1.MANAGED_ANNOTATIONS_ANNOTATION, workv1.MANAGED_LABELS_ANNOTATION}
    annotations[workv1.MANAGED_ANNOTATIONS_ANNOTATION] = ",".join(
        sorted(managed | set(annotations))
    )
    labels = {**(_map_at(metadata, "labels") or {}), workv1.WORK_PERMANENT_ID_LABEL: permanent_id}
    annotations[workv1.MANAGED_LABELS_ANNOTATION] = ",".join(sorted(labels))
    metadata["labels"], metadata["annotations"] = labels, annotations
    return workload


_SERVER_SET_METADATA = (
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "managedFields",
    "resourceVersion",
    "selfLink",
    "uid",
    "ownerReferences",
    "finalizers",
)


def remove_irrelevant_fields(workload: dict[str, Any]) -> None:
    """prune.RemoveIrrelevantFields with the RemoveJobTTLSeconds hook, in place."""
    _pop_keys(_map_at(workload, "metadata"), _SERVER_SET_METADATA)
    workload.pop("status", None)
    prune = _KIND_PRUNERS.get(workload.get("kind", ""))
    if prune is not None:
        prune(workload)


def _map_at(obj: dict[str, Any], *keys: str) -> dict[str, Any] | None:
    for key in keys:
        child = obj.get(key)
        if not isinstance(child, dict):
            return None
        obj = child
    return obj


def _pop_keys(mapping: dict[str, Any] | None, keys: Iterable[str]) -> None:
    for key in keys if mapping is not None else ():
        mapping.pop(key, None)  # type: ignore[union-attr]


def _pop_annotation(workload: dict[str, Any], key: str) -> None:
    _pop_keys(_map_at(workload, "metadata", "annotations"), (key,))


def _prune_deployment(workload: dict[str, Any]) -> None:
    for key in ("deployment.kubernetes.io/revision", "deployment.kubernetes.io/revision-history"):
        _pop_annotation(workload, key)


def _prune_job(workload: dict[str, Any]) -> None:
    """The selector and labels the Job controller generated, and the TTL a member cluster's
    ttl-after-finished controller would act on."""
    spec = _map_at(workload, "spec") or {}
    if spec.get("manualSelector") is not True:
        uid_labels = ("controller-uid", "batch.kubernetes.io/controller-uid")
        _pop_keys(_map_at(spec, "selector", "matchLabels"), uid_labels)
        _pop_keys(
            _map_at(spec, "template", "metadata", "labels"),
            (*uid_labels, "job-name", "batch.kubernetes.io/job-name"),
        )
    spec.pop("ttlSecondsAfterFinished", None)


def _prune_secret(workload: dict[str, Any]) -> None:
    """A service account token belongs to the member cluster that minted it."""
    if workload.get("type") == "kubernetes.io/service-account-token":
        _pop_annotation(workload, "kubernetes.io/service-account.uid")
        workload["data"] = None


def _prune_service_account(workload: dict[str, Any]) -> None:
    secrets = workload.get("secrets")
    name = (_map_at(workload, "metadata") or {}).get("name")
    if not isinstance(secrets, list):
        return
    prefix = f"{name}-token-"
    i = 0
    while i < len(secrets):
        secret_name = secrets[i].get("name") if isinstance(secrets[i], dict) else None
        if isinstance(secret_name, str) and secret_name.startswith(prefix):
            del secrets[i]  # and, as upstream's loop does, skip the entry that moved up
        i += 1


def _prune_service(workload: dict[str, Any]) -> None:
    """Cluster IPs are the member cluster's to allocate; a headless Service keeps `None`."""
    spec = _map_at(workload, "spec")
    if spec is not None and isinstance(spec.get("clusterIP"), str) and spec["clusterIP"] != "None":
        spec.pop("clusterIP")
        spec.pop("clusterIPs", None)


def _prune_persistent_volume_claim(workload: dict[str, Any]) -> None:
    key = "volume.kubernetes.io/selected-node"
    if (_map_at(workload, "metadata", "annotations") or {}).get(key):
        _pop_annotation(workload, key)


_KIND_PRUNERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "Deployment": _prune_deployment,
    "Job": _prune_job,
    "Secret": _prune_secret,
    "ServiceAccount": _prune_service_account,
    "Service": _prune_service,
    "PersistentVolumeClaim": _prune_persistent_volume_claim,
}


def _no_defaults(_: Resource) -> None:
    """The Work CRD has no `default:` markers."""


# --- registration -----------------------------------------------------------------------------

_CREATE = (Operation.CREATE,)
_CREATE_UPDATE = (Operation.CREATE, Operation.UPDATE)


def _policy_plugin(kind: _PolicyKind) -> Plugin:
    return Plugin(
        f"{policyv1.GROUP}/{policyv1.VERSION}",
        kind.model.__name__,
        mutate=_through_webhook(_default_policy, _policy_webhook_mutate(kind), *_CREATE_UPDATE),
        validate=_validation(_PROPAGATION_POLICY_SCHEMA, _policy_webhook_validate(kind)),
    )


def _binding_plugin(model: type[Binding], label: str) -> Plugin:
    return Plugin(
        f"{workv1.GROUP}/{workv1.BINDING_VERSION}",
        model.__name__,
        mutate=_through_webhook(_default_binding, _binding_webhook_mutate(label), *_CREATE),
        validate=_validation(
            _BINDING_SCHEMA,
            _resource_binding_webhook if model is workv1.ResourceBinding else None,
        ),
    )


PLUGINS: list[Plugin] = [
    Plugin(
        f"{clusterv1.GROUP}/{clusterv1.VERSION}",
        "Cluster",
        mutate=_mutate_cluster,
        validate=_validate_cluster,
        name_rule=validate_cluster_name,
    ),
    _policy_plugin(_PROPAGATION_POLICY),
    _policy_plugin(_CLUSTER_PROPAGATION_POLICY),
    Plugin(
        f"{policyv1.GROUP}/{policyv1.VERSION}",
        "ClusterTaintPolicy",
        validate=_validation(_CLUSTER_TAINT_POLICY_SCHEMA, _cluster_taint_policy_webhook),
    ),
    _binding_plugin(workv1.ResourceBinding, workv1.RESOURCE_BINDING_PERMANENT_ID_LABEL),
    _binding_plugin(
        workv1.ClusterResourceBinding, workv1.CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL
    ),
    Plugin(
        f"{workv1.GROUP}/{workv1.WORK_VERSION}",
        "Work",
        mutate=_through_webhook(_no_defaults, _work_webhook_mutate, *_CREATE_UPDATE),
        validate=_validate_work,
    ),
]
