"""Reading certificates and certificate requests: what a PEM CERTIFICATE REQUEST asks for
(its subject, checked against its own signature), and the certificates of a PEM bundle."""

from __future__ import annotations

from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import NameOID


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


def load_certificates(pem: bytes) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(pem)
