"""Admission plugins for the ocm kinds: the CRD schemas and the hub's registration webhooks.

Each kind is checked against a transcription of its upstream CRD's openAPIV3Schema (defaults,
enums, patterns, lengths, ranges, required fields; open-cluster-management-io/api cluster/*/
0000_*.crd.yaml), worded as the API server words schema errors. ManagedCluster and
ManagedClusterSetBinding also pass the hub's registration webhooks (ocm
pkg/registration/webhook), less what needs a SubjectAccessReview or a namespace lookup:
accepting a cluster (managedclusters/accept), joining a set (managedclustersets/join),
binding one (managedclustersets/bind). Placement has no webhook upstream: what its schema
admits is admitted, and the placement controller reports the rest as PlacementMisconfigured.
"""

from __future__ import annotations

import binascii
import json
import re
from base64 import b64decode
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import get_args
from urllib.parse import urlsplit

from fleetwarden.admission.chain import Mutate, Plugin, Request, Validate, Webhook
from fleetwarden.api.core import OP_EQUAL, Taint
from fleetwarden.api.errors import BadRequest, ErrorList, Path
from fleetwarden.api.meta import Model
from fleetwarden.api.ocm.cluster import (
    CLUSTER_SET_LABEL,
    DEFAULT_CLUSTER_SET,
    EXCLUSIVE_CLUSTER_SET_LABEL,
    GROUP,
    LABEL_SELECTOR,
    LEGACY_CLUSTER_SET_LABEL,
    TAINT_EFFECTS,
    ManagedCluster,
    ManagedClusterSetBinding,
)
from fleetwarden.api.ocm.placement import (
    DO_NOT_SCHEDULE,
    MODE_ADDITIVE,
    SCHEDULE_ANYWAY,
    SCORE_ADD_ON,
    SCORE_BUILT_IN,
    SORT_BY_CLUSTER_NAME,
    SORT_BY_SCORE,
    TOPOLOGY_KEY_CLAIM,
    TOPOLOGY_KEY_LABEL,
)
from fleetwarden.semantics.validation import is_dns1123_label

# --- A structural schema, as much of one as the OCM CRDs use ------------------------------


@dataclass(frozen=True, kw_only=True)
class _String:
    enum: tuple[str, ...] = ()
    pattern: str | None = None  # every CRD pattern here is anchored at both ends
    min_length: int | None = None
    max_length: int | None = None
    byte: bool = False  # format: byte, base64 as []byte travels in JSON
    default: str | None = None


@dataclass(frozen=True, kw_only=True)
class _Integer:
    minimum: int | None = None
    maximum: int | None = None
    default: int | None = None


@dataclass(frozen=True, kw_only=True)
class _IntOrString:
    pattern: str | None = None  # like any OpenAPI pattern, it only applies to strings
    default: str | None = None


@dataclass(frozen=True, kw_only=True)
class _Array:
    items: _Schema
    max_items: int | None = None


@dataclass(frozen=True, kw_only=True)
class _Map:
    values: _Schema


@dataclass(frozen=True, kw_only=True)
class _Object:
    properties: Mapping[str, _Schema] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    # The CRD defaults this object when absent. Every such default upstream is the object its
    # own fields' defaults make, so an empty one is created and defaulting carries on inside.
    defaulted: bool = False


_Schema = _String | _Integer | _IntOrString | _Array | _Map | _Object


@cache
def _attributes(model: type[Model]) -> dict[str, str]:
    """Wire name -> attribute name."""
    return {info.alias or name: name for name, info in model.model_fields.items()}


def _given(obj: Model, wire: str) -> object:
    """The field's value if the object was given it (or defaulting set it), else None."""
    name = _attributes(type(obj))[wire]
    return getattr(obj, name) if name in obj.model_fields_set else None


def _empty_object(owner: Model, wire: str) -> Model:
    """A new instance of the model class the field holds."""
    annotation = type(owner).model_fields[_attributes(type(owner))[wire]].annotation
    return next(
        t()
        for t in (*get_args(annotation), annotation)
        if isinstance(t, type) and issubclass(t, Model)
    )


def _default(schema: _Object, obj: Model) -> None:
    """Structural defaulting: fill absent fields, descending only into what exists."""
    for wire, prop in schema.properties.items():
        value = _given(obj, wire)
        if value is None:
            value = _default_value(prop, obj, wire)
            if value is not None:
                setattr(obj, _attributes(type(obj))[wire], value)
        _default_within(prop, value)


def _default_value(prop: _Schema, owner: Model, wire: str) -> object:
    if isinstance(prop, _Object):
        return _empty_object(owner, wire) if prop.defaulted else None
    return None if isinstance(prop, _Array | _Map) else prop.default


def _default_within(prop: _Schema, value: object) -> None:
    if isinstance(prop, _Object) and isinstance(value, Model):
        _default(prop, value)
    elif isinstance(prop, _Array) and isinstance(value, list):
        for item in value:
            _default_within(prop.items, item)


def _check(schema: _Schema, value: object, path: Path) -> ErrorList:
    """Schema validation, each error worded as apiextensions-apiserver words it."""
    match schema:
        case _Object() if isinstance(value, Model):
            return _check_object(schema, value, path)
        case _Array() if isinstance(value, list):
            return _check_array(schema, value, path)
        case _Map() if isinstance(value, dict):
            return [
                e
                for key, item in value.items()
                for e in _check(schema.values, item, path.child(key))
            ]
        case _Integer() if isinstance(value, int):
            return _check_integer(schema, value, path)
        case _String() | _IntOrString() if isinstance(value, str):
            return _check_string(schema, value, path)
    return []


def _check_object(schema: _Object, obj: Model, path: Path) -> ErrorList:
    errs = [path.child(wire).required() for wire in schema.required if _given(obj, wire) is None]
    for wire, prop in schema.properties.items():
        value = _given(obj, wire)
        if value is not None:
            errs += _check(prop, value, path.child(wire))
    return errs


def _check_array(schema: _Array, items: list[object], path: Path) -> ErrorList:
    errs: ErrorList = []
    if schema.max_items is not None and len(items) > schema.max_items:
        errs.append(path.too_many(len(items), schema.max_items))
    for i, item in enumerate(items):
        errs += _check(schema.items, item, path.index(i))
    return errs


def _check_integer(schema: _Integer, value: int, path: Path) -> ErrorList:
    errs: ErrorList = []
    if schema.minimum is not None and value < schema.minimum:
        detail = f"{path} in body should be greater than or equal to {schema.minimum}"
        errs.append(path.invalid(value, detail))
    if schema.maximum is not None and value > schema.maximum:
        detail = f"{path} in body should be less than or equal to {schema.maximum}"
        errs.append(path.invalid(value, detail))
    return errs


def _check_string(schema: _String | _IntOrString, value: str, path: Path) -> ErrorList:
    errs: ErrorList = []
    if isinstance(schema, _String):
        if schema.enum and value not in schema.enum:
            errs.append(path.not_supported(value, schema.enum))
        if schema.max_length is not None and len(value) > schema.max_length:
            errs.append(path.too_long(schema.max_length))
        if schema.min_length is not None and len(value) < schema.min_length:
            detail = f"{path} in body should be at least {schema.min_length} chars long"
            errs.append(path.invalid(value, detail))
        if schema.byte and not _is_base64(value):
            detail = f"{path} in body must be of type byte: {_quote(value)}"
            errs.append(path.invalid(value, detail))
    if schema.pattern is not None and not re.fullmatch(schema.pattern, value):
        errs.append(path.invalid(value, f"{path} in body should match '{schema.pattern}'"))
    return errs


def _is_base64(value: str) -> bool:
    """Go's base64.StdEncoding, which skips line breaks."""
    try:
        b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
    except binascii.Error:
        return False
    return True


def _quote(text: str) -> str:
    """Go's %q, for the strings met here."""
    return json.dumps(text, ensure_ascii=False)


def _schema_plugin(
    api_version: str, kind: str, schema: _Object, webhook: Webhook | None = None
) -> Plugin:
    return Plugin(api_version, kind, _defaulter(schema), _validator(schema), webhook)


def _defaulter(schema: _Object) -> Mutate:
    return lambda req: _default(schema, req.obj)


def _validator(schema: _Object) -> Validate:
    return lambda req: _check(schema, req.obj, Path())


# --- Schemas shared by the CRDs -----------------------------------------------------------

_QUALIFIED_NAME = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
_DNS1123_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

# metav1.Condition.
_CONDITIONS = _Array(
    items=_Object(
        properties={
            "type": _String(max_length=316, pattern=_QUALIFIED_NAME),
            "status": _String(enum=("True", "False", "Unknown")),
            "observedGeneration": _Integer(minimum=0),
            "reason": _String(
                min_length=1, max_length=1024, pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
            ),
            "message": _String(max_length=32768),
        },
        required=("lastTransitionTime", "message", "reason", "status", "type"),
    )
)
_CONDITIONS_STATUS = _Object(properties={"conditions": _CONDITIONS})

# metav1.LabelSelector, and OCM's ClusterClaimSelector (its matchExpressions alone).
_SELECTOR = _Object(
    properties={"matchExpressions": _Array(items=_Object(required=("key", "operator")))}
)

_MANAGED_NAMESPACE = {"name": _String(max_length=63, pattern=_DNS1123_LABEL)}


# --- ManagedCluster -----------------------------------------------------------------------

_MANAGED_CLUSTER = _Object(
    properties={
        "spec": _Object(
            properties={
                "managedClusterClientConfigs": _Array(
                    items=_Object(properties={"caBundle": _String(byte=True)}, required=("url",))
                ),
                "leaseDurationSeconds": _Integer(default=60),
                "taints": _Array(
                    items=_Object(
                        properties={
                            "key": _String(max_length=316, pattern=_QUALIFIED_NAME),
                            "value": _String(max_length=1024),
                            "effect": _String(enum=TAINT_EFFECTS),
                        },
                        required=("effect", "key"),
                    )
                ),
            }
        ),
        "status": _Object(
            properties={
                "conditions": _CONDITIONS,
                "capacity": _Map(values=_IntOrString(pattern=_QUANTITY)),
                "allocatable": _Map(values=_IntOrString(pattern=_QUANTITY)),
                "clusterClaims": _Array(
                    items=_Object(
                        properties={
                            "name": _String(min_length=1, max_length=253),
                            "value": _String(min_length=1, max_length=1024),
                        }
                    )
                ),
                "managedNamespaces": _Array(
                    items=_Object(
                        properties={**_MANAGED_NAMESPACE, "conditions": _CONDITIONS},
                        required=("clusterSet", "name"),
                    )
                ),
            }
        ),
    }
)

_MANAGED_CLUSTER_MUTATOR = "managedclustermutators.admission.cluster.open-cluster-management.io"
_MANAGED_CLUSTER_VALIDATOR = "managedclustervalidators.admission.cluster.open-cluster-management.io"


def _denied(webhook: str, message: str) -> BadRequest:
    """How the API server reports a webhook's 400."""
    return BadRequest(f"admission webhook {_quote(webhook)} denied the request: {message}")


def _mutate_managed_cluster(req: Request) -> None:
    cluster: ManagedCluster = req.obj
    _stamp_taints(cluster, req.old, req.now)
    if req.config.default_cluster_set:
        _label_default_cluster_set(cluster)
    # The webhook answers with the object re-encoded from Go, which never omits spec nor
    # spec.hubAcceptsClient; the API server then applies the schema defaults once more.
    _mark_given(cluster, "spec")
    _mark_given(cluster.spec, "hub_accepts_client")
    _default(_MANAGED_CLUSTER, cluster)


def _stamp_taints(cluster: ManagedCluster, old: ManagedCluster | None, now: datetime) -> None:
    """timeAdded belongs to the hub: stamped on a new or changed taint, kept on an unchanged one.

    On create a given timeAdded is overwritten; on update, setting one on a new or changed
    taint, or changing (or dropping) an unchanged taint's, is refused.
    """
    stamp = now.replace(microsecond=0)  # metav1.Time keeps whole seconds
    refused: list[str] = []
    for taint in cluster.spec.taints or []:
        if old is None:
            taint.time_added = stamp
            continue
        before = _find_taint(old, taint.key)
        if before is not None and _same_taint(before, taint):
            if before.time_added != taint.time_added:
                refused.append(taint.key)
        elif taint.time_added is not None:
            refused.append(taint.key)
        else:
            taint.time_added = stamp
    if refused:
        message = f"It is not allowed to set TimeAdded of Taint {_quote(','.join(refused))}."
        raise _denied(_MANAGED_CLUSTER_MUTATOR, message)


def _find_taint(cluster: ManagedCluster, key: str) -> Taint | None:
    return next((t for t in cluster.spec.taints or [] if t.key == key), None)


def _same_taint(a: Taint, b: Taint) -> bool:
    return (a.value or "", a.effect) == (b.value or "", b.effect)


def _label_default_cluster_set(cluster: ManagedCluster) -> None:
    """Put a cluster without a (non-empty) clusterset label into the default set."""
    labels = cluster.metadata.labels or {}
    if not labels.get(CLUSTER_SET_LABEL):
        cluster.metadata.labels = {**labels, CLUSTER_SET_LABEL: DEFAULT_CLUSTER_SET}


def _mark_given(obj: Model, name: str) -> None:
    """Record a field as set, so that it goes on the wire."""
    setattr(obj, name, getattr(obj, name))


def _check_managed_cluster(req: Request) -> None:
    cluster: ManagedCluster = req.obj
    configs = cluster.spec.managed_cluster_client_configs or []
    # Upstream returns early on a cluster without client configs, its name unchecked.
    if not configs:
        return
    problems = [
        f"url {_quote(config.url)} is invalid in client configs"
        for config in configs
        if not _is_https_url(config.url)
    ]
    name_errors = is_dns1123_label(cluster.metadata.name)
    if name_errors:
        problems.append("metadata.name format is not correct: " + ",".join(name_errors))
    if problems:
        raise _denied(_MANAGED_CLUSTER_VALIDATOR, "\n".join(sorted(problems)))


# What Go's url.Parse takes: host bytes (%-escapes only for non-ASCII bytes, or %25), a port of
# digits, userinfo bytes, and well-formed %-escapes in path and fragment.
_GO_URL_HOST = re.compile(
    r"([-A-Za-z0-9._~!$&'()*+,;=:\[\]<>\"]|%(25|[89A-Fa-f][0-9A-Fa-f])|[^\x00-\x7f])*"
)
_GO_URL_PORT = re.compile(r"(:[0-9]*)?")
_GO_URL_USERINFO = re.compile(r"[-A-Za-z0-9._:~!$&'()*+,;=%@]*")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _is_https_url(url: str) -> bool:
    """helpers.IsValidHTTPSURL: Go's url.Parse takes it and its scheme is https."""
    if not url or re.search(r"[\x00-\x1f\x7f]", url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    userinfo, _, host = parts.netloc.rpartition("@")
    if host.startswith("["):  # an IPv6 literal, then an optional port
        port = host[host.rfind("]") + 1 :]
    else:
        port = host[host.rfind(":") :] if ":" in host else ""
    return (
        parts.scheme == "https"
        and _GO_URL_USERINFO.fullmatch(userinfo) is not None
        and _GO_URL_HOST.fullmatch(host) is not None
        and _GO_URL_PORT.fullmatch(port) is not None
        and not _BAD_ESCAPE.search(parts.path + parts.fragment)
    )


# --- ManagedClusterSet and ManagedClusterSetBinding, v1beta2 and v1beta1 -------------------


def _cluster_set(exclusive: str, *, managed_namespaces: bool) -> _Object:
    """v1beta1 names the exclusive selector LegacyClusterSetLabel and has no managedNamespaces."""
    spec: dict[str, _Schema] = {
        "clusterSelector": _Object(
            properties={
                "selectorType": _String(enum=(exclusive, LABEL_SELECTOR), default=exclusive),
                "labelSelector": _SELECTOR,
            },
            defaulted=True,
        )
    }
    if managed_namespaces:
        spec["managedNamespaces"] = _Array(
            items=_Object(properties=_MANAGED_NAMESPACE, required=("name",))
        )
    return _Object(
        properties={
            "spec": _Object(properties=spec, defaulted=True),
            "status": _CONDITIONS_STATUS,
        }
    )


_CLUSTER_SET_BINDING = _Object(
    properties={
        "spec": _Object(properties={"clusterSet": _String(min_length=1)}),
        "status": _CONDITIONS_STATUS,
    }
)


def _binding_names_its_set(webhook: str) -> Webhook:
    """The binding webhook, on create and update, less its managedclustersets/bind check."""

    def check(req: Request) -> None:
        binding: ManagedClusterSetBinding = req.obj
        if binding.metadata.name != binding.spec.cluster_set:
            raise _denied(
                webhook,
                "The ManagedClusterSetBinding must have the same name as the target "
                "ManagedClusterSet",
            )

    return check


def _cluster_set_plugins(
    version: str, exclusive: str, binding_webhook: str, *, managed_namespaces: bool
) -> list[Plugin]:
    api_version = f"{GROUP}/{version}"
    return [
        _schema_plugin(
            api_version,
            "ManagedClusterSet",
            _cluster_set(exclusive, managed_namespaces=managed_namespaces),
        ),
        _schema_plugin(
            api_version,
            "ManagedClusterSetBinding",
            _CLUSTER_SET_BINDING,
            _binding_names_its_set(binding_webhook),
        ),
    ]


# --- Placement, PlacementDecision, AddOnPlacementScore, ClusterClaim ----------------------

_CLUSTER_SELECTOR = _Object(properties={"labelSelector": _SELECTOR, "claimSelector": _SELECTOR})

_PLACEMENT = _Object(
    properties={
        "spec": _Object(
            properties={
                "predicates": _Array(
                    items=_Object(properties={"requiredClusterSelector": _CLUSTER_SELECTOR})
                ),
                "prioritizerPolicy": _Object(
                    properties={
                        "mode": _String(
                            default=MODE_ADDITIVE
                        ),  # no enum: a bad one is misconfigured
                        "configurations": _Array(
                            items=_Object(
                                properties={
                                    "scoreCoordinate": _Object(
                                        properties={
                                            "type": _String(
                                                enum=(SCORE_BUILT_IN, SCORE_ADD_ON),
                                                default=SCORE_BUILT_IN,
                                            ),
                                            "addOn": _Object(
                                                required=("resourceName", "scoreName")
                                            ),
                                        },
                                        required=("type",),
                                    ),
                                    "weight": _Integer(minimum=-10, maximum=10, default=1),
                                },
                                required=("scoreCoordinate",),
                            )
                        ),
                    }
                ),
                "spreadPolicy": _Object(
                    properties={
                        "spreadConstraints": _Array(
                            max_items=8,
                            items=_Object(
                                properties={
                                    "topologyKey": _String(
                                        max_length=316,
                                        pattern=(
                                            r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?"
                                            r"(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                                            r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
                                        ),
                                    ),
                                    "topologyKeyType": _String(
                                        enum=(TOPOLOGY_KEY_LABEL, TOPOLOGY_KEY_CLAIM)
                                    ),
                                    "maxSkew": _Integer(minimum=1, default=1),
                                    "whenUnsatisfiable": _String(
                                        enum=(DO_NOT_SCHEDULE, SCHEDULE_ANYWAY),
                                        default=SCHEDULE_ANYWAY,
                                    ),
                                },
                                required=("topologyKey", "topologyKeyType"),
                            ),
                        )
                    }
                ),
                "tolerations": _Array(
                    items=_Object(
                        properties={
                            "key": _String(max_length=316, pattern=_QUALIFIED_NAME),
                            "operator": _String(default=OP_EQUAL),  # no enum, as for mode
                            "value": _String(max_length=1024),
                            "effect": _String(enum=TAINT_EFFECTS),
                        }
                    )
                ),
                "decisionStrategy": _Object(
                    properties={
                        "groupStrategy": _Object(
                            properties={
                                "decisionGroups": _Array(
                                    items=_Object(
                                        properties={
                                            "groupName": _String(
                                                pattern=r"^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$"
                                            ),
                                            "groupClusterSelector": _CLUSTER_SELECTOR,
                                        },
                                        required=("groupClusterSelector", "groupName"),
                                    )
                                ),
                                "clustersPerDecisionGroup": _IntOrString(
                                    pattern=r"^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$",
                                    default="100%",
                                ),
                            }
                        )
                    }
                ),
                "sortBy": _String(
                    enum=(SORT_BY_CLUSTER_NAME, SORT_BY_SCORE), default=SORT_BY_CLUSTER_NAME
                ),
                "scoreRateLimit": _String(pattern=r"^[0-9]+[hms]$", default="1m"),
            }
        ),
        "status": _Object(
            properties={
                "conditions": _CONDITIONS,
                "decisionGroups": _Array(
                    items=_Object(properties={"clusterCount": _Integer(default=0)})
                ),
            }
        ),
    },
    required=("spec",),
)

_PLACEMENT_DECISION = _Object(
    properties={
        "status": _Object(
            properties={"decisions": _Array(items=_Object(required=("clusterName", "reason")))},
            required=("decisions",),
        )
    }
)

_ADD_ON_PLACEMENT_SCORE = _Object(
    properties={
        "status": _Object(
            properties={
                "conditions": _CONDITIONS,
                "scores": _Array(
                    items=_Object(
                        properties={"value": _Integer(minimum=-100, maximum=100)},
                        required=("name", "value"),
                    )
                ),
            }
        )
    }
)

_CLUSTER_CLAIM = _Object(
    properties={
        "spec": _Object(properties={"value": _String(min_length=1, max_length=1024)}),
    }
)


PLUGINS: list[Plugin] = [
    Plugin(
        f"{GROUP}/v1",
        "ManagedCluster",
        _mutate_managed_cluster,
        _validator(_MANAGED_CLUSTER),
        _check_managed_cluster,
    ),
    *_cluster_set_plugins(
        "v1beta2",
        EXCLUSIVE_CLUSTER_SET_LABEL,
        "managedclustersetbindingvalidators.admission.cluster.open-cluster-management.io",
        managed_namespaces=True,
    ),
    *_cluster_set_plugins(
        "v1beta1",
        LEGACY_CLUSTER_SET_LABEL,
        "managedclustersetbindingv1beta1validators.admission.cluster.open-cluster-management.io",
        managed_namespaces=False,
    ),
    _schema_plugin(f"{GROUP}/v1beta1", "Placement", _PLACEMENT),
    _schema_plugin(f"{GROUP}/v1beta1", "PlacementDecision", _PLACEMENT_DECISION),
    _schema_plugin(f"{GROUP}/v1alpha1", "ClusterClaim", _CLUSTER_CLAIM),
    _schema_plugin(f"{GROUP}/v1alpha1", "AddOnPlacementScore", _ADD_ON_PLACEMENT_SCORE),
]
