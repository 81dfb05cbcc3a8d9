"""The hub's certificates: a CA, the serving certificate, client certificates (CN the user,
O its groups) and CertificateSigningRequests signed by the CA, as kube-apiserver's and
kube-controller-manager's signers make them. ECDSA P-256 keys throughout: every client
fleetwarden supports (kubectl, client-go, the Python client, Node's TLS) takes them, and
their handshakes are cheaper than RSA's.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from fleetwarden.client.kubeconfig import write_private_file
from fleetwarden.semantics.certificates import CertificateRequest

PrivateKey = ec.EllipticCurvePrivateKey
CA_VALIDITY = timedelta(days=3650)
# kube-controller-manager's --cluster-signing-duration default, and kubeadm's for certs.
CERT_VALIDITY = timedelta(days=365)
# The signer backdates NotBefore, so a client whose clock is a little behind accepts it.
BACKDATE = timedelta(minutes=5)
LOCAL_SANS = ("127.0.0.1", "::1", "localhost")


@dataclass(frozen=True)
class KeyPair:
    certificate: x509.Certificate
    key: PrivateKey

    def certificate_pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def key_pem(self) -> bytes:
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def write(self, cert_file: Path, key_file: Path) -> None:
        write_private_file(cert_file, self.certificate_pem())
        write_private_file(key_file, self.key_pem())

    @classmethod
    def read(cls, cert_file: Path, key_file: Path) -> KeyPair:
        certificate = x509.load_pem_x509_certificate(cert_file.read_bytes())
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{key_file}: not an ECDSA private key")
        return cls(certificate, key)


def new_key() -> PrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def new_ca(common_name: str, now: datetime) -> KeyPair:
    key = new_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    certificate = (
        _builder(name, name, key.public_key(), now - BACKDATE, now + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .sign(key, hashes.SHA256())
    )
    return KeyPair(certificate, key)


def serving_certificate(ca: KeyPair, sans: Iterable[str], now: datetime) -> KeyPair:
    """A server certificate for these names and addresses (and the loopback ones)."""
    key = new_key()
    names = list(dict.fromkeys([*LOCAL_SANS, *sans]))
    subject = _subject("fleetwarden-apiserver", [])
    usages = [ExtendedKeyUsageOID.SERVER_AUTH]
    certificate = _issue(
        ca, key.public_key(), subject, usages, now, now + CERT_VALIDITY, sans=names
    )
    return KeyPair(certificate, key)


def client_certificate(ca: KeyPair, user: str, groups: Sequence[str], now: datetime) -> KeyPair:
    key = new_key()
    certificate = _issue(
        ca, key.public_key(), _subject(user, groups), [ExtendedKeyUsageOID.CLIENT_AUTH],
        now, now + CERT_VALIDITY,
    )  # fmt: skip
    return KeyPair(certificate, key)


def new_certificate_request(key: PrivateKey, user: str, groups: Sequence[str]) -> bytes:
    """A PEM CERTIFICATE REQUEST for a client certificate of this user and groups."""
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(_subject(user, groups))
        .sign(key, hashes.SHA256())
    )
    return request.public_bytes(serialization.Encoding.PEM)


# A certificate shorter-lived than this is not shortened by the backdating.
SHORT = timedelta(hours=8)


def sign_request(
    ca: KeyPair, request: CertificateRequest, now: datetime, duration: timedelta
) -> bytes:
    """A client certificate for the request, as kube-controller-manager's signer signs it:
    valid from BACKDATE ago for `duration` (less the backdating, unless short), never
    beyond the CA's own expiry; PEM."""
    not_after = now + duration if duration < SHORT else now + duration - BACKDATE
    not_after = min(not_after, ca.certificate.not_valid_after_utc)
    try:  # the signer copies the request's subjectAltNames, as upstream's does
        sans: Sequence[str] | x509.SubjectAlternativeName = (
            request.request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        )
    except x509.ExtensionNotFound:
        sans = ()
    certificate = _issue(
        ca, request.request.public_key(), request.request.subject,
        [ExtendedKeyUsageOID.CLIENT_AUTH], now, not_after, sans=sans,
    )  # fmt: skip
    return certificate.public_bytes(serialization.Encoding.PEM)


def _subject(user: str, groups: Sequence[str]) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
    return x509.Name([*attributes, x509.NameAttribute(NameOID.COMMON_NAME, user)])


def _issue(
    ca: KeyPair,
    public_key: object,
    subject: x509.Name,
    usages: list[x509.ObjectIdentifier],
    now: datetime,
    not_after: datetime,
    *,
    sans: Sequence[str] | x509.SubjectAlternativeName = (),
) -> x509.Certificate:
    if not isinstance(public_key, ec.EllipticCurvePublicKey | rsa.RSAPublicKey):
        raise ValueError("the request's public key is neither ECDSA nor RSA")
    builder = (
        _builder(subject, ca.certificate.subject, public_key, now - BACKDATE, not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), False
        )
    )
    if isinstance(sans, x509.SubjectAlternativeName):
        builder = builder.add_extension(sans, False)
    elif sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(_general_names(sans)), False)
    return builder.sign(ca.key, hashes.SHA256())


def _builder(
    subject: x509.Name,
    issuer: x509.Name,
    public_key: object,
    not_before: datetime,
    not_after: datetime,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)  # type: ignore[arg-type]  # checked by the caller
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before.astimezone(UTC))
        .not_valid_after(not_after.astimezone(UTC))
    )


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=True,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )


def _general_names(sans: Sequence[str]) -> list[x509.GeneralName]:
    return [
        x509.IPAddress(ipaddress.ip_address(san)) if _is_ip(san) else x509.DNSName(san)
        for san in sans
    ]


class HubPKI:
    """The hub's own CA and serving certificate, kept in a directory as kubeadm keeps
    /etc/kubernetes/pki: made on first start, the serving certificate made again when it
    lacks a name asked for or nears its end."""

    RENEW_BEFORE = timedelta(days=30)

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.ca_cert, self.ca_key = directory / "ca.crt", directory / "ca.key"
        self.serving_cert = directory / "apiserver.crt"
        self.serving_key = directory / "apiserver.key"

    def ensure(self, sans: Sequence[str], now: datetime) -> None:
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not (self.ca_cert.exists() and self.ca_key.exists()):
            new_ca("fleetwarden-ca", now).write(self.ca_cert, self.ca_key)
        if self._serving_needed(sans, now):
            serving_certificate(self.ca(), sans, now).write(self.serving_cert, self.serving_key)

    def ca(self) -> KeyPair:
        return KeyPair.read(self.ca_cert, self.ca_key)

    def client(self, name: str, user: str, groups: Sequence[str], now: datetime) -> KeyPair:
        """A client certificate kept as <name>.crt/.key, made again when missing or near
        its end."""
        cert_file, key_file = self.dir / f"{name}.crt", self.dir / f"{name}.key"
        if cert_file.exists() and key_file.exists():
            kept = KeyPair.read(cert_file, key_file)
            if kept.certificate.not_valid_after_utc - now >= self.RENEW_BEFORE:
                return kept
        pair = client_certificate(self.ca(), user, groups, now)
        pair.write(cert_file, key_file)
        return pair

    def _serving_needed(self, sans: Sequence[str], now: datetime) -> bool:
        if not (self.serving_cert.exists() and self.serving_key.exists()):
            return True
        certificate = x509.load_pem_x509_certificate(self.serving_cert.read_bytes())
        if certificate.not_valid_after_utc - now < self.RENEW_BEFORE:
            return True
        try:
            names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        except x509.ExtensionNotFound:
            return True
        have = {str(n) for n in names.value.get_values_for_type(x509.DNSName)}
        have |= {str(ip) for ip in names.value.get_values_for_type(x509.IPAddress)}
        wanted = {str(ipaddress.ip_address(s)) if _is_ip(s) else s for s in [*LOCAL_SANS, *sans]}
        return not wanted <= have


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
