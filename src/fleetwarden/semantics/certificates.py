"""Reading certificates and certificate requests: what a PEM CERTIFICATE REQUEST asks for
(its subject, checked against its own signature), whose agent asks for it, and the
certificates of a PEM bundle."""

from __future__ import annotations

import base64
import binascii
import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import NameOID

from fleetwarden.api.certificates import KUBE_APISERVER_CLIENT_SIGNER, CertificateSigningRequest
from fleetwarden.api.ocm.cluster import (
    AGENT_GROUP_PREFIX,
    CLUSTER_NAME_LABEL,
    MANAGED_CLUSTERS_GROUP,
)


@dataclass(frozen=True)
class CertificateRequest:
    """What a PEM CERTIFICATE REQUEST asks for."""

    common_name: str
    organizations: tuple[str, ...]
    request: x509.CertificateSigningRequest

    @property
    def has_alternative_names(self) -> bool:
        """Whether it asks for any subjectAltName (DNS, email, IP, URI)."""
        try:
            self.request.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        except x509.ExtensionNotFound:
            return False
        return True


def parse_certificate_request(pem: bytes) -> CertificateRequest:
    """The request, its signature checked; ValueError when it is none."""
    try:
        request = x509.load_pem_x509_csr(pem)
        valid = request.is_signature_valid
    except (ValueError, TypeError, InvalidSignature) as exc:
        raise ValueError(str(exc) or "not a certificate request") from None
    if not valid:
        raise ValueError("the certificate request's signature is invalid")
    subject = request.subject
    common_names = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    organizations = subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    return CertificateRequest(
        str(common_names[0].value) if common_names else "",
        tuple(str(o.value) for o in organizations),
        request,
    )


def ocm_agent_request(csr: CertificateSigningRequest) -> CertificateRequest | None:
    """OCM's validateCSR: the request, when it is a registration agent's for the cluster its
    `open-cluster-management.io/cluster-name` label names: client signer, organizations
    `system:open-cluster-management:<cluster>` (and optionally `...:managed-clusters`),
    common name `system:open-cluster-management:<cluster>:<agent>`."""
    cluster = (csr.metadata.labels or {}).get(CLUSTER_NAME_LABEL)
    if not cluster or csr.spec.signer_name != KUBE_APISERVER_CLIENT_SIGNER:
        return None
    try:
        request = parse_certificate_request(base64.b64decode(csr.spec.request))
    except (ValueError, binascii.Error):
        return None
    if set(request.organizations) - {MANAGED_CLUSTERS_GROUP} != {AGENT_GROUP_PREFIX + cluster}:
        return None
    if not request.common_name.startswith(AGENT_GROUP_PREFIX):
        return None
    parts = request.common_name.removeprefix(AGENT_GROUP_PREFIX).split(":")
    return request if len(parts) == 2 and parts[0] == cluster and parts[1] else None


_BEGIN = re.compile(rb"-----BEGIN ([^-\r\n]*)-----\r?\n")
_END = re.compile(rb"-----END ([^-\r\n]*)-----")


def _pem_blocks(pem: bytes) -> Iterator[tuple[bytes, bytes]]:
    """The (type, body) of each PEM block in turn: a BEGIN line, then everything up to the
    first END line of the same type after it; a BEGIN without one is skipped. Linear: the
    END lines are indexed by type once, not searched for from each BEGIN (a regex with a
    back-reference did that, and took a minute on 20,000 BEGIN lines)."""
    ends: dict[bytes, list[int]] = {}
    at = pem.find(b"-----END ")
    while at >= 0:  # END lines may overlap ("-----END A-----END B-----"): try each start
        end = _END.match(pem, at)
        if end:
            ends.setdefault(end[1], []).append(at)
        at = pem.find(b"-----END ", at + 1)
    begin = _BEGIN.search(pem)
    while begin:
        kind, body_start = begin[1], begin.end()
        positions = ends.get(kind, [])
        index = bisect_left(positions, body_start)
        if index == len(positions):
            begin = _BEGIN.search(pem, begin.start() + 1)
            continue
        yield kind, pem[body_start : positions[index]]
        begin = _BEGIN.search(pem, positions[index] + len(b"-----END -----") + len(kind))


def certificate_problem(pem: bytes) -> str:
    """What is wrong with a CSR's status.certificate, in validation's words ("" if nothing):
    one or more PEM CERTIFICATE blocks, without headers, each a certificate."""
    blocks = list(_pem_blocks(pem))
    if not blocks:
        return "must contain at least one CERTIFICATE PEM block"
    for kind, body in blocks:
        if kind != b"CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{kind.decode()}"'
        if b":" in body.split(b"\n", 1)[0]:
            return "no PEM block headers are permitted"
    try:
        x509.load_pem_x509_certificates(pem)
    except ValueError as exc:
        return str(exc)
    return ""
