"""Cluster, served by karmada-aggregated-apiserver: its REST strategy fills in resource
models and canonicalizes taints and zones (pkg/apis/cluster/mutation), then refuses what
ValidateCluster refuses (pkg/apis/cluster/validation) with a 422 Invalid.

Upstream: pkg/registry/cluster/strategy.go, pkg/apis/cluster/{mutation,validation}.
"""

from __future__ import annotations

from typing import Any

from fleetwarden.admission.chain import Operation, Plugin, Request
from fleetwarden.admission.golang import go_quote, wire
from fleetwarden.admission.karmada.webhook import marshal_spec_like_go
from fleetwarden.admission.taints import validate_taints
from fleetwarden.admission.urls import parse_url
from fleetwarden.api.core import NO_EXECUTE, NO_SCHEDULE
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.karmada import cluster as clusterv1
from fleetwarden.semantics.quantity import QUANTITY_FORMAT_ERROR, QuantityError, parse_quantity
from fleetwarden.semantics.validation import (
    is_dns1123_label,
    is_label_value,
)

_CLUSTER_NAME_MAX_LENGTH = 48


def validate_cluster_name(name: str) -> list[str]:
    """ValidateClusterName: a DNS label short enough to prefix with `karmada-es-`."""
    if not name:
        return ["must be not empty"]
    if len(name) > _CLUSTER_NAME_MAX_LENGTH:
        return [f"must be no more than {_CLUSTER_NAME_MAX_LENGTH} characters"]
    return is_dns1123_label(name)


# --- mutation ---------------------------------------------------------------------------------

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
    cluster = request.of(clusterv1.Cluster)
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
    marshal_spec_like_go(cluster)


# --- validation -------------------------------------------------------------------------------


def _validate_cluster(request: Request) -> ErrorList:
    return _validate_cluster_spec(request.of(clusterv1.Cluster).spec, Path("spec"))


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
    # lifted.ValidateClusterTaints: the node taint rules, less PreferNoSchedule.
    errors += validate_taints(spec.taints or [], path.child("taints"), (NO_SCHEDULE, NO_EXECUTE))
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
            path.child("spec").type_invalid(wire(spec), "Zone and Zones cannot co-exist"),
        ]
    if spec.zone:
        return errors + _label_value_error(spec.zone, path.child("Zone"))
    for zone in spec.zones or []:
        errors += _label_value_error(zone, path.child("Zones"))
    return errors


def _validate_resource_models(models: list[clusterv1.ResourceModel], path: Path) -> ErrorList:
    """ValidateClusterResourceModels, once every quantity parses (upstream fails to decode one
    that does not)."""
    unparsed = [
        path.index(i).child("ranges").index(j).child(end).invalid(quantity, QUANTITY_FORMAT_ERROR)
        for i, model in enumerate(models)
        for j, bound in enumerate(model.ranges)
        for end, quantity in (("min", bound.min), ("max", bound.max))
        if not _parses(quantity)
    ]
    if unparsed:
        return unparsed
    message = _resource_models_error(models)
    return [path.invalid(wire(models), message)] if message else []


def _resource_models_error(models: list[clusterv1.ResourceModel]) -> str | None:
    """The first broken rule. Standardization has already made the first grade start at 0 and
    the last one end at MaxInt64, the two rules not checked here."""
    for previous, model in zip([None, *models], models, strict=False):
        if previous is not None and model.grade == previous.grade:
            return "The grade of each models should not be the same"
        if previous is not None and len(model.ranges) != len(previous.ranges):
            return "The number of resource types should be the same"
        for j, bound in enumerate(model.ranges):
            if parse_quantity(bound.max) <= parse_quantity(bound.min):
                return "The max value of each resource must be greater than the min value"
            if previous is None:
                continue
            if previous.ranges[j].name != bound.name:
                return "The resource types of each models should be the same"
            # Go compares the parsed structs, which differ whenever the written forms do.
            if str(previous.ranges[j].max).strip() != str(bound.min).strip():
                return "Model intervals for resources must be contiguous and non-overlapping"
    return None


def _parses(value: Any) -> bool:
    try:
        parse_quantity(value)
    except QuantityError:
        return False
    return True


_ENDPOINT_FORM = "; desired format: hostname, hostname:port, IP or IP:port"


def _validate_api_endpoint(endpoint: str, path: Path) -> ErrorList:
    """ValidateClusterAPIEndpoint, without forcing https (as ValidateClusterSpec calls it)."""
    try:
        url = parse_url(endpoint)
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
        url = parse_url(proxy_url)
    except ValueError as exc:
        # Upstream's message names apiEndpoint here too.
        return [path.invalid(proxy_url, f"apiEndpoint must be a valid URL: {exc}")]
    if url.scheme in ("http", "https", "socks5"):
        return []
    message = f"unsupported scheme {go_quote(url.scheme)}, must be http, https, or socks5"
    return [path.invalid(proxy_url, message)]


PLUGIN = Plugin(
    f"{clusterv1.GROUP}/{clusterv1.VERSION}",
    "Cluster",
    mutate=_mutate_cluster,
    validate=_validate_cluster,
    name_rule=validate_cluster_name,
)
