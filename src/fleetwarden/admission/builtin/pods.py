"""What kube-apiserver checks of a pod spec, in a Pod and in a workload's pod template
(pkg/apis/core/validation: ValidatePodTemplateSpec, ValidatePodSpec, validateContainers).

The object has been decoded by its Go type, so every value here has its field's type. Fields
the API server would have defaulted (a port's protocol, a container's pull policy, the pod's
restart policy...) are checked only when given: the hub stores objects without defaults.

Covered: containers required; container and init container names (DNS labels, unique), image
required (no surrounding whitespace in a Pod); ports (numbers, names, protocols); pull and
termination message policies; requests not above limits, quantities not negative; restart
and DNS policies; activeDeadlineSeconds; node selector labels; a template's labels and
annotations, and no ephemeral containers in it. Not covered: volumes and mounts, probes,
environment variables, security contexts, affinity, tolerations, extended resources.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.semantics.quantity import QuantityError, parse_quantity
from fleetwarden.semantics.validation import (
    NEGATIVE_ERROR,
    inclusive_range_error,
    is_dns1123_label,
    is_valid_port_name,
    is_valid_port_num,
    validate_annotations,
    validate_labels,
)

Obj = dict[str, Any]

RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
PROTOCOLS = ("SCTP", "TCP", "UDP")
_MAX_INT32 = 2**31 - 1


def validate_pod_template(template: Obj, path: Path) -> ErrorList:
    """ValidatePodTemplateSpec: its labels and annotations (named without `metadata`, as
    upstream names them), its pod spec, no ephemeral containers."""
    meta = template.get("metadata") or {}
    errs = validate_labels(meta.get("labels"), path.child("labels"))
    errs += validate_annotations(meta.get("annotations"), path.child("annotations"))
    spec = template.get("spec") or {}
    errs += validate_pod_spec(spec, path.child("spec"))
    if spec.get("ephemeralContainers"):
        errs.append(
            path.child("spec", "ephemeralContainers").forbidden(
                "ephemeral containers not allowed in pod template"
            )
        )
    return errs


def validate_pod_spec(spec: Obj, path: Path, *, pod: bool = False) -> ErrorList:
    """ValidatePodSpec, for a Pod (`pod`) or a pod template."""
    containers = spec.get("containers") or []
    errs: ErrorList = [] if containers else [path.child("containers").required()]
    errs += _containers(containers, path.child("containers"), set(), pod=pod)
    names = {c.get("name", "") for c in containers}
    errs += _containers(spec.get("initContainers") or [], path.child("initContainers"), names,
                        pod=pod)  # fmt: skip
    errs += one_of(spec, "restartPolicy", RESTART_POLICIES, path)
    errs += one_of(spec, "dnsPolicy", _DNS_POLICIES, path)
    errs += validate_labels(spec.get("nodeSelector"), path.child("nodeSelector"))
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= _MAX_INT32:
        errs.append(
            path.child("activeDeadlineSeconds").invalid(
                deadline, inclusive_range_error(1, _MAX_INT32)
            )
        )
    return errs


def _containers(containers: list[Obj], path: Path, names: set[str], *, pod: bool) -> ErrorList:
    """Each container, its name unique among these and `names` (which it joins)."""
    errs: ErrorList = []
    for i, container in enumerate(containers):
        errs += _container(container, path.index(i), pod=pod)
        name = container.get("name", "")
        if name in names:
            errs.append(path.index(i).child("name").duplicate(name))
        elif name:
            names.add(name)
    return errs


def _container(container: Obj, path: Path, *, pod: bool) -> ErrorList:
    """validateContainerCommon, and a Pod's image without surrounding whitespace."""
    name = container.get("name", "")
    errs: ErrorList = (
        [path.child("name").invalid(name, m) for m in is_dns1123_label(name)]
        if name
        else [path.child("name").required()]
    )
    image = container.get("image", "")
    if not image:
        errs.append(path.child("image").required())
    elif pod and image != image.strip():
        detail = "must not have leading or trailing whitespace"
        errs.append(path.child("image").invalid(image, detail))
    errs += one_of(container, "terminationMessagePolicy", _TERMINATION_MESSAGE_POLICIES, path)
    errs += _ports(container.get("ports") or [], path.child("ports"))
    errs += one_of(container, "imagePullPolicy", _PULL_POLICIES, path)
    errs += _resources(container.get("resources") or {}, path.child("resources"))
    return errs


def _ports(ports: list[Obj], path: Path) -> ErrorList:
    """validateContainerPorts."""
    errs: ErrorList = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        at = path.index(i)
        name = port.get("name", "")
        if name:
            messages = is_valid_port_name(name)
            errs += [at.child("name").invalid(name, m) for m in messages]
            if not messages and name in names:
                errs.append(at.child("name").duplicate(name))
            names.add(name)
        number = port.get("containerPort", 0)
        if not number:
            errs.append(at.child("containerPort").required())
        errs += [at.child("containerPort").invalid(number, m) for m in is_valid_port_num(number)
                 if number]  # fmt: skip
        host = port.get("hostPort", 0)
        errs += [at.child("hostPort").invalid(host, m) for m in is_valid_port_num(host) if host]
        errs += one_of(port, "protocol", PROTOCOLS, at)
    return errs


def _resources(resources: Obj, path: Path) -> ErrorList:
    """Quantities not negative, and a request not above its limit."""
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    errs: ErrorList = []
    for field, amounts in (("limits", limits), ("requests", requests)):
        for name, amount in amounts.items():
            if quantity_amount(amount) < 0:
                errs.append(path.child(field).key(name).invalid(str(amount), NEGATIVE_ERROR))
    for name, amount in requests.items():
        if name in limits and quantity_amount(amount) > quantity_amount(limits[name]):
            detail = f"must be less than or equal to {name} limit of {limits[name]}"
            errs.append(path.child("requests").invalid(str(amount), detail))
    return errs


def quantity_amount(quantity: Any) -> Fraction:
    """A quantity decoding let through (so it parses)."""
    try:
        return parse_quantity(quantity)
    except QuantityError:
        return Fraction(0)


def one_of(obj: Obj, field: str, supported: tuple[str, ...], path: Path) -> ErrorList:
    """A field upstream defaults: when given, one of the supported values."""
    value = obj.get(field)
    if not value or value in supported:
        return []
    return [path.child(field).not_supported(value, supported)]
