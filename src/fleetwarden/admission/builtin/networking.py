"""NetworkPolicy (networking.k8s.io/v1) as kube-apiserver 1.32 validates it
(pkg/apis/networking/validation: ValidateNetworkPolicy): the pod selector, each ingress and
egress rule's ports (protocol, port number or name, an end port only after a numbered
port) and peers (one of pod and namespace selectors, or an ipBlock alone, whose CIDR and
exceptions parse and nest), and the policy types.
"""

from __future__ import annotations

import ipaddress

from fleetwarden.admission.builtin.pods import Obj
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.meta import LabelSelector
from fleetwarden.semantics.validation import (
    is_valid_port_name,
    is_valid_port_num,
    validate_label_selector,
)

SPEC = Path("spec")
_PROTOCOLS = ("TCP", "UDP", "SCTP")  # upstream lists them in this order
_POLICY_TYPES = ("Ingress", "Egress")
_BAD_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def validate_network_policy(obj: Obj, old: Obj | None) -> ErrorList:
    spec = obj.get("spec") or {}
    errs = _selector(spec.get("podSelector") or {}, SPEC.child("podSelector"))
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or []):
            at = SPEC.child(direction).index(i)
            for j, port in enumerate(rule.get("ports") or []):
                errs += _port(port, at.child("ports").index(j))
            for j, peer in enumerate(rule.get(peers) or []):
                errs += _peer(peer, at.child(peers).index(j))
    return errs + _policy_types(spec.get("policyTypes") or [])


def _selector(raw: Obj, path: Path) -> ErrorList:
    return validate_label_selector(LabelSelector.model_validate(raw), path)


def _port(port: Obj, path: Path) -> ErrorList:
    """ValidateNetworkPolicyPort."""
    errs: ErrorList = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in _PROTOCOLS:
        errs.append(path.child("protocol").not_supported(protocol, _PROTOCOLS))
    number, end = port.get("port"), port.get("endPort")
    end_path = path.child("endPort")
    if number is None:
        if end is not None:
            errs.append(end_path.invalid(end, "may not be specified when `port` is not specified"))
        return errs
    if isinstance(number, str):
        if end is not None:
            errs.append(end_path.invalid(end, "may not be specified when `port` is non-numeric"))
        return errs + [path.child("port").invalid(number, m) for m in is_valid_port_name(number)]
    errs += [path.child("port").invalid(number, m) for m in is_valid_port_num(number)]
    if end is not None:
        if end < number:
            errs.append(end_path.invalid(end, "must be greater than or equal to `port`"))
        errs += [end_path.invalid(end, m) for m in is_valid_port_num(end)]
    return errs


def _peer(peer: Obj, path: Path) -> ErrorList:
    """ValidateNetworkPolicyPeer: at least one kind of peer; an ipBlock alone."""
    errs: ErrorList = []
    for field in ("podSelector", "namespaceSelector"):
        if peer.get(field) is not None:
            errs += _selector(peer[field], path.child(field))
    if peer.get("ipBlock") is not None:
        errs += _ip_block(peer["ipBlock"], path.child("ipBlock"))
    given = [f for f in ("podSelector", "namespaceSelector", "ipBlock") if peer.get(f) is not None]
    if not given:
        errs.append(path.required("must specify a peer"))
    elif len(given) > 1 and "ipBlock" in given:
        errs.append(path.forbidden("may not specify both ipBlock and another peer"))
    return errs


def _ip_block(block: Obj, path: Path) -> ErrorList:
    """ValidateIPBlock: a CIDR, and exceptions strictly inside it."""
    cidr = block.get("cidr") or ""
    if not cidr:
        return [path.child("cidr").required()]
    network = _parse_cidr(cidr)
    if network is None:
        return [path.child("cidr").invalid(cidr, _BAD_CIDR)]
    errs: ErrorList = []
    for i, text in enumerate(block.get("except") or []):
        at = path.child("except").index(i)
        inner = _parse_cidr(text)
        if inner is None:
            errs.append(at.invalid(text, _BAD_CIDR))
        elif not _strictly_within(inner, network):
            errs.append(at.invalid(text, "must be a strict subset of `cidr`"))
    return errs


def _parse_cidr(text: str) -> _Network | None:
    """netutils.ParseCIDRSloppy: an address (IPv4 parts may have leading zeros) and a
    prefix length; host bits may be set."""
    address, slash, prefix = text.partition("/")
    if not slash or not prefix.isdigit() or not prefix.isascii():
        return None
    parts = address.split(".")
    if len(parts) == 4 and all(p.isdigit() and p.isascii() for p in parts):
        address = ".".join(str(int(p)) for p in parts)  # 010 is ten, as Go's sloppy parse
    try:
        return ipaddress.ip_network(f"{address}/{int(prefix)}", strict=False)
    except ValueError:
        return None


def _strictly_within(inner: _Network, outer: _Network) -> bool:
    """Go's Contains(inner.IP) and a longer prefix; an IPv4 network never holds an IPv6 one."""
    return (
        inner.version == outer.version
        and inner.network_address in outer
        and inner.prefixlen > outer.prefixlen
    )


def _policy_types(types: list[str]) -> ErrorList:
    path = SPEC.child("policyTypes")
    if len(types) > len(_POLICY_TYPES):
        return [path.invalid(types, "may not specify more than two policyTypes")]
    return [
        path.index(i).not_supported(kind, _POLICY_TYPES)
        for i, kind in enumerate(types)
        if kind not in _POLICY_TYPES
    ]
