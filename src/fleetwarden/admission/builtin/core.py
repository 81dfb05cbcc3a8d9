"""core/v1 kinds as kube-apiserver validates them (pkg/apis/core/validation): ConfigMap, Secret,
Service and Pod; and the Secret strategy's writing of `stringData` into `data`.

Covered: ConfigMap and Secret keys, their 1 MiB of data, `immutable`, a Secret's type rules
(its type defaults to Opaque and may not change); a Service's ports (required unless headless
or ExternalName, numbers, names, protocols, target ports), type, session affinity, external
name and selector; a Pod's spec (pods.py). Not covered: a Service's IPs, node ports beyond
ClusterIP's, traffic policies and load balancer fields.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from fleetwarden.admission.builtin.pods import (
    PROTOCOLS,
    Obj,
    one_of,
    validate_pod_spec,
)
from fleetwarden.admission.golang import go_quote
from fleetwarden.admission.taints import validate_taints
from fleetwarden.api.core import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Taint
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.semantics.validation import (
    is_config_map_key,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_valid_port_name,
    is_valid_port_num,
    validate_labels,
)

# core.MaxSecretSize: of a Secret's data, and of a ConfigMap's data and binaryData together.
MAX_SIZE = 1024 * 1024
_IMMUTABLE = "field is immutable when `immutable` is set"
DATA, SPEC = Path("data"), Path("spec")


def _key(key: str, path: Path) -> ErrorList:
    return [path.key(key).invalid(key, m) for m in is_config_map_key(key)]


def _immutable(obj: Obj, old: Obj | None, fields: tuple[str, ...]) -> ErrorList:
    """What an object once made `immutable` may not change."""
    if old is None or not old.get("immutable"):
        return []
    errs = [] if obj.get("immutable") else [Path("immutable").forbidden(_IMMUTABLE)]
    changed = [f for f in fields if (obj.get(f) or None) != (old.get(f) or None)]  # {} is none
    return errs + [Path(f).forbidden(_IMMUTABLE) for f in changed]


def _decoded(value: str) -> bytes:
    """A []byte value, which decoding has checked is base64."""
    return base64.b64decode(value.replace("\r", "").replace("\n", ""))


# --- ConfigMap ---------------------------------------------------------------------------


def validate_config_map(obj: Obj, old: Obj | None) -> ErrorList:
    errs = _immutable(obj, old, ("data", "binaryData"))
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    for key in data:
        errs += _key(key, DATA)
        if key in binary:
            errs.append(DATA.key(key).invalid(key, "duplicate of key present in binaryData"))
    for key in binary:
        errs += _key(key, Path("binaryData"))
    size = sum(len(v.encode()) for v in data.values())
    size += sum(len(_decoded(v)) for v in binary.values())
    if size > MAX_SIZE:
        errs.append(Path("[]").too_long(MAX_SIZE))  # field.NewPath(""): the whole object
    return errs


# --- Secret ------------------------------------------------------------------------------

OPAQUE = "Opaque"


def prepare_secret(obj: Obj, old: Obj | None) -> None:
    """The v1 Secret's conversion and defaulting: `stringData` overwrites `data` (base64)
    and goes; a Secret with no type is Opaque."""
    string_data = obj.pop("stringData", None) or {}
    if string_data:
        data = obj.setdefault("data", {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(value.encode()).decode()
    if not obj.get("type"):
        obj["type"] = OPAQUE


def validate_secret(obj: Obj, old: Obj | None) -> ErrorList:
    errs: ErrorList = []
    if old is not None and obj.get("type") != (old.get("type") or OPAQUE):
        errs.append(Path("type").invalid(obj.get("type"), "field is immutable"))
    errs += _immutable(obj, old, ("data",))
    data = obj.get("data") or {}
    errs += [e for key in data for e in _key(key, DATA)]
    if sum(len(_decoded(v)) for v in data.values()) > MAX_SIZE:
        errs.append(DATA.too_long(MAX_SIZE))
    return errs + _secret_type(obj.get("type", ""), obj, data)


_SERVICE_ACCOUNT_NAME = "kubernetes.io/service-account.name"
# The keys a Secret of these types must hold (any one of them, for basic-auth).
_REQUIRED_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/basic-auth": ("username", "password"),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
}


def _secret_type(kind: str, obj: Obj, data: Obj) -> ErrorList:
    if kind == "kubernetes.io/service-account-token":
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if not annotations.get(_SERVICE_ACCOUNT_NAME):
            return [Path("metadata.annotations").key(_SERVICE_ACCOUNT_NAME).required()]
        return []
    if kind == "kubernetes.io/tls":
        return [DATA.key(key).required() for key in ("tls.crt", "tls.key") if key not in data]
    keys = _REQUIRED_KEYS.get(kind, ())
    if kind == "kubernetes.io/ssh-auth":
        present = [k for k in keys if data.get(k)]  # an empty private key is none
    else:
        present = [k for k in keys if k in data]
    if keys and not present:
        return [DATA.key(key).required() for key in keys]
    if kind.startswith("kubernetes.io/docker"):
        problem = _json_object_error(_decoded(data[keys[0]]))
        return [DATA.key(keys[0]).invalid("<secret contents redacted>", problem)] if problem else []
    return []


def _json_object_error(raw: bytes) -> str | None:
    """Why encoding/json would not read the bytes as a JSON object, in about its words."""
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        doc = raw.decode(errors="replace")
        pos = exc.pos if isinstance(exc, json.JSONDecodeError) else 0
        if pos >= len(doc.rstrip()):
            return "unexpected end of JSON input"
        return f"invalid character {_go_char(doc[pos])} looking for beginning of value"
    if isinstance(value, dict):
        return None
    kind = {list: "array", str: "string", bool: "bool"}.get(type(value), "number")
    return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"


def _go_char(ch: str) -> str:
    """encoding/json's quoteChar."""
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return f"'{ch}'" if ch.isprintable() else go_quote(ch)


# --- Service -----------------------------------------------------------------------------

_SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
NODE_TAINT_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)


def validate_service(obj: Obj, old: Obj | None) -> ErrorList:
    spec = obj.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"  # upstream's default
    headless = spec.get("clusterIP") == "None"
    ports: list[Obj] = spec.get("ports") or []
    errs: ErrorList = []
    if not ports and not headless and kind != "ExternalName":
        errs.append(SPEC.child("ports").required())
    errs += _service_type(spec, kind, headless)
    names: set[str] = set()
    for i, port in enumerate(ports):
        errs += _service_port(port, len(ports) > 1, names, SPEC.child("ports").index(i))
    errs += validate_labels(spec.get("selector"), SPEC.child("selector"))
    errs += one_of(spec, "sessionAffinity", ("ClientIP", "None"), SPEC)
    errs += one_of(spec, "type", _SERVICE_TYPES, SPEC)
    if kind == "ClusterIP":
        errs += [
            SPEC.child("ports")
            .index(i)
            .child("nodePort")
            .forbidden("may not be used when `type` is 'ClusterIP'")
            for i, port in enumerate(ports)
            if port.get("nodePort")
        ]
    return errs


def _service_type(spec: Obj, kind: str, headless: bool) -> ErrorList:
    """What a NodePort, LoadBalancer or ExternalName Service needs."""
    cluster_ip = SPEC.child("clusterIP")
    if kind in ("LoadBalancer", "NodePort") and headless:
        return [cluster_ip.invalid("None", f"may not be set to 'None' for {kind} services")]
    if kind != "ExternalName":
        return []
    errs = []
    if spec.get("clusterIP"):
        errs.append(cluster_ip.forbidden("must be empty for ExternalName services"))
    name: str = spec.get("externalName", "")
    path = SPEC.child("externalName")
    if not name:
        return [*errs, path.required()]
    return errs + [path.invalid(name, m) for m in is_dns1123_subdomain(name)]


def _service_port(port: Obj, require_name: bool, names: set[str], path: Path) -> ErrorList:
    name = port.get("name", "")
    errs: ErrorList = []
    if require_name and not name:
        errs.append(path.child("name").required())
    elif name:
        errs += [path.child("name").invalid(name, m) for m in is_dns1123_label(name)]
        if name in names:
            errs.append(path.child("name").duplicate(name))
        names.add(name)
    number = port.get("port", 0)
    errs += [path.child("port").invalid(number, m) for m in is_valid_port_num(number)]
    errs += one_of(port, "protocol", PROTOCOLS, path)
    return errs + _target_port(port.get("targetPort"), path.child("targetPort"))


def _target_port(target: Any, path: Path) -> ErrorList:
    """A port number or name; none (or 0, or "") is the port itself, by default."""
    if not target:
        return []
    if isinstance(target, int):
        return [path.invalid(target, m) for m in is_valid_port_num(target)]
    return [path.invalid(target, m) for m in is_valid_port_name(target)]


# --- Pod ---------------------------------------------------------------------------------


def validate_pod(obj: Obj, old: Obj | None) -> ErrorList:
    return validate_pod_spec(obj.get("spec") or {}, SPEC, pod=True)


def validate_node(obj: Obj, old: Obj | None) -> ErrorList:
    """ValidateNode's taint rules (validateNodeTaints): what `kubectl taint`, `edit` or
    `patch` may leave on a member's Node."""
    taints = [Taint.model_validate(t) for t in (obj.get("spec") or {}).get("taints") or []]
    return validate_taints(taints, SPEC.child("taints"), NODE_TAINT_EFFECTS)
