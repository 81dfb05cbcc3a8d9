"""The hub's certificates: its CA, serving and client certificates, certificate requests and
their signing as kube-controller-manager's signer signs them (/work/research/k8s-api.md §6.5),
and the PKI directory kept across starts."""

from __future__ import annotations

import ipaddress
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from fleetwarden.auth.pki import (
    BACKDATE,
    CA_VALIDITY,
    CERT_VALIDITY,
    HubPKI,
    KeyPair,
    client_certificate,
    new_ca,
    new_certificate_request,
    new_key,
    serving_certificate,
    sign_request,
)
from fleetwarden.semantics.certificates import parse_certificate_request

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def ca() -> KeyPair:
    return new_ca("fleetwarden-ca", NOW)


def subject(
    certificate: x509.Certificate | x509.CertificateSigningRequest,
) -> tuple[str, list[str]]:
    name = certificate.subject
    common_name = str(name.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value)
    return common_name, [
        str(o.value) for o in name.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    ]


def usages(certificate: x509.Certificate) -> list[x509.ObjectIdentifier]:
    return list(certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)


def alternative_names(certificate: x509.Certificate) -> set[str]:
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    found = {str(n) for n in names.get_values_for_type(x509.DNSName)}
    return found | {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}


def test_ca_is_self_signed_and_may_sign(ca: KeyPair) -> None:
    certificate = ca.certificate
    assert certificate.subject == certificate.issuer
    certificate.verify_directly_issued_by(certificate)
    constraints = certificate.extensions.get_extension_for_class(x509.BasicConstraints).value
    assert constraints.ca
    assert certificate.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign
    assert certificate.not_valid_before_utc == NOW - BACKDATE
    assert certificate.not_valid_after_utc == NOW + CA_VALIDITY


def test_client_certificate_names_user_and_groups(ca: KeyPair) -> None:
    pair = client_certificate(ca, "admin", ["system:masters", "ops"], NOW)
    certificate = pair.certificate
    certificate.verify_directly_issued_by(ca.certificate)
    assert subject(certificate) == ("admin", ["system:masters", "ops"])
    assert usages(certificate) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    assert not certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert certificate.not_valid_after_utc == NOW + CERT_VALIDITY
    assert pair.key.public_key().public_numbers() == certificate.public_key().public_numbers()  # type: ignore[union-attr]


def test_serving_certificate_names_loopback_and_the_names_asked(ca: KeyPair) -> None:
    pair = serving_certificate(ca, ["hub.example.com", "10.0.0.7", "localhost"], NOW)
    certificate = pair.certificate
    certificate.verify_directly_issued_by(ca.certificate)
    assert alternative_names(certificate) == {
        "127.0.0.1",
        "::1",
        "localhost",
        "hub.example.com",
        "10.0.0.7",
    }
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("10.0.0.7") in names.get_values_for_type(x509.IPAddress)
    assert usages(certificate) == [ExtendedKeyUsageOID.SERVER_AUTH]


# --- certificate requests ------------------------------------------------------------------------


def test_certificate_request_round_trip() -> None:
    pem = new_certificate_request(
        new_key(), "system:open-cluster-management:c1:agent", ["system:open-cluster-management:c1"]
    )
    assert pem.startswith(b"-----BEGIN CERTIFICATE REQUEST-----")
    request = parse_certificate_request(pem)
    assert request.common_name == "system:open-cluster-management:c1:agent"
    assert request.organizations == ("system:open-cluster-management:c1",)
    assert not request.has_alternative_names


def request_for_bob_with_a_dns_name() -> bytes:
    return (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bob")]))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("bob.example.com")]), False)
        .sign(new_key(), hashes.SHA256())
        .public_bytes(serialization.Encoding.PEM)
    )


def test_a_request_with_alternative_names_says_so() -> None:
    pem = request_for_bob_with_a_dns_name()
    assert parse_certificate_request(pem).has_alternative_names


@pytest.mark.parametrize(
    "pem",
    [
        b"",
        b"invalid data",
        b"-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n",
    ],
)
def test_what_is_no_request_is_refused(pem: bytes) -> None:
    with pytest.raises(ValueError):
        parse_certificate_request(pem)


def test_a_request_whose_signature_does_not_match_is_refused() -> None:
    key, other = new_key(), new_key()
    builder = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bob")])
    )
    der = bytearray(builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.DER))
    # swap in another key's public key: the signature no longer matches
    old_key = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    new_public = other.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    start = der.index(old_key)
    der[start : start + len(old_key)] = new_public
    tampered = x509.load_der_x509_csr(bytes(der)).public_bytes(serialization.Encoding.PEM)
    with pytest.raises(ValueError, match="signature is invalid"):
        parse_certificate_request(tampered)


# --- signing -------------------------------------------------------------------------------------


def signed(ca: KeyPair, duration: timedelta, pem: bytes | None = None) -> x509.Certificate:
    request = parse_certificate_request(pem or new_certificate_request(new_key(), "bob", ["dev"]))
    certificates = x509.load_pem_x509_certificates(sign_request(ca, request, NOW, duration))
    assert len(certificates) == 1
    return certificates[0]


def test_signed_certificate_is_the_requests_subject_for_client_auth(ca: KeyPair) -> None:
    certificate = signed(ca, timedelta(days=365))
    certificate.verify_directly_issued_by(ca.certificate)
    assert subject(certificate) == ("bob", ["dev"])
    assert usages(certificate) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    assert certificate.issuer == ca.certificate.subject


def test_a_long_certificate_loses_the_backdating_at_its_end(ca: KeyPair) -> None:
    certificate = signed(ca, timedelta(hours=24))
    assert certificate.not_valid_before_utc == NOW - BACKDATE
    assert certificate.not_valid_after_utc == NOW + timedelta(hours=24) - BACKDATE


def test_a_short_certificate_keeps_its_full_duration(ca: KeyPair) -> None:
    certificate = signed(ca, timedelta(hours=1))
    assert certificate.not_valid_before_utc == NOW - BACKDATE
    assert certificate.not_valid_after_utc == NOW + timedelta(hours=1)


def test_eight_hours_is_not_short(ca: KeyPair) -> None:
    certificate = signed(ca, timedelta(hours=8))
    assert certificate.not_valid_after_utc == NOW + timedelta(hours=8) - BACKDATE


def test_no_certificate_outlives_its_ca(ca: KeyPair) -> None:
    certificate = signed(ca, timedelta(days=365 * 20))
    assert certificate.not_valid_after_utc == ca.certificate.not_valid_after_utc


def test_an_rsa_request_is_signed_too(ca: KeyPair) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "rsa-user")]))
        .sign(key, hashes.SHA256())
        .public_bytes(serialization.Encoding.PEM)
    )
    assert subject(signed(ca, timedelta(days=1), pem)) == ("rsa-user", [])


def test_the_requests_alternative_names_are_signed_in(ca: KeyPair) -> None:
    pem = request_for_bob_with_a_dns_name()
    assert alternative_names(signed(ca, timedelta(days=1), pem)) == {"bob.example.com"}


# --- keeping them in a directory -----------------------------------------------------------------


def test_key_pair_round_trip_with_private_files(tmp_path: Path, ca: KeyPair) -> None:
    cert_file, key_file = tmp_path / "ca.crt", tmp_path / "ca.key"
    ca.write(cert_file, key_file)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    read = KeyPair.read(cert_file, key_file)
    assert read.certificate == ca.certificate
    assert read.key_pem() == ca.key_pem()


def test_an_rsa_key_file_is_refused(tmp_path: Path, ca: KeyPair) -> None:
    cert_file, key_file = tmp_path / "x.crt", tmp_path / "x.key"
    cert_file.write_bytes(ca.certificate_pem())
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_file.write_bytes(
        rsa_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    with pytest.raises(ValueError, match="not an ECDSA private key"):
        KeyPair.read(cert_file, key_file)


def test_hub_pki_is_made_once(tmp_path: Path) -> None:
    pki = HubPKI(tmp_path / "pki")
    pki.ensure(["hub.example.com"], NOW)
    ca_pem, serving_pem = pki.ca_cert.read_bytes(), pki.serving_cert.read_bytes()
    assert stat.S_IMODE(pki.dir.stat().st_mode) == 0o700
    pki.ensure(["hub.example.com"], NOW + timedelta(days=1))
    assert pki.ca_cert.read_bytes() == ca_pem
    assert pki.serving_cert.read_bytes() == serving_pem
    serving = x509.load_pem_x509_certificate(serving_pem)
    serving.verify_directly_issued_by(pki.ca().certificate)


def test_hub_pki_serving_certificate_is_remade_for_a_new_name(tmp_path: Path) -> None:
    pki = HubPKI(tmp_path)
    pki.ensure(["hub.example.com"], NOW)
    ca_pem = pki.ca_cert.read_bytes()
    pki.ensure(["hub.example.com", "192.168.1.10"], NOW)
    serving = x509.load_pem_x509_certificate(pki.serving_cert.read_bytes())
    assert {"hub.example.com", "192.168.1.10"} <= alternative_names(serving)
    assert pki.ca_cert.read_bytes() == ca_pem


def test_hub_pki_serving_certificate_is_remade_near_its_end(tmp_path: Path) -> None:
    pki = HubPKI(tmp_path)
    pki.ensure([], NOW)
    before = pki.serving_cert.read_bytes()
    pki.ensure([], NOW + CERT_VALIDITY - timedelta(days=40))
    assert pki.serving_cert.read_bytes() == before
    pki.ensure([], NOW + CERT_VALIDITY - timedelta(days=20))
    assert pki.serving_cert.read_bytes() != before


def test_hub_pki_client_certificates_are_kept_until_near_their_end(tmp_path: Path) -> None:
    pki = HubPKI(tmp_path)
    pki.ensure([], NOW)
    first = pki.client("admin", "admin", ["system:masters"], NOW)
    assert (tmp_path / "admin.crt").exists() and (tmp_path / "admin.key").exists()
    kept = pki.client("admin", "admin", ["system:masters"], NOW + timedelta(days=300))
    assert kept.certificate == first.certificate
    renewed = pki.client("admin", "admin", ["system:masters"], NOW + timedelta(days=340))
    assert renewed.certificate != first.certificate
    assert subject(renewed.certificate) == ("admin", ["system:masters"])
