"""Which server and credentials a kubeconfig gives, as kubectl reads it."""

from __future__ import annotations

import base64
import ssl
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetwarden.client import KubeConfigError, load_kubeconfig
from fleetwarden.client.kubeconfig import write_private_file

# A self-signed certificate and its key, made for these tests only.
CERT = """\
-----BEGIN CERTIFICATE-----
MIIBkzCCATmgAwIBAgIUUVTtgOtVBkBsVaCn58f69XnsQXgwCgYIKoZIzj0EAwIw
HjEcMBoGA1UEAwwTZmxlZXR3YXJkZW4tdGVzdC1jYTAgFw0yNjExMjEwMzQ2NDla
GA8yMTI2MTAyODAzNDY0OVowHjEcMBoGA1UEAwwTZmxlZXR3YXJkZW4tdGVzdC1j
YTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABFCFBJfH4C56gjQL/z5ugfP+hySg
HAtnwJFAAtuP0AUa9cacwRYrex5XThajGJoIvLiDXbSA/jMfOTX7DzvCB8qjUzBR
MB0GA1UdDgQWBBRkLciH4ZA7UqNV1S/Zt1gI8iUmazAfBgNVHSMEGDAWgBRkLciH
4ZA7UqNV1S/Zt1gI8iUmazAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gA
MEUCIEIXqeSMQ5aySkOOkGabWDX6+ZWSO2X8WznfyzTFAryUAiEA7Ud1/D78JEiP
FFSRrM+FBFSoH89RN3s6bKgajpiZ/6o=
-----END CERTIFICATE-----
"""
KEY = """\
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgSqpcBRtmnaLP1Pra
QUQvfOrNNcj+rpuvfKDFdKsUE2WhRANCAARQhQSXx+AueoI0C/8+boHz/ockoBwL
Z8CRQALbj9AFGvXGnMEWK3seV04WoxiaCLy4g120gP4zHzk1+w87wgfK
-----END PRIVATE KEY-----
"""


def write(path: Path, **config: Any) -> Path:
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", **config}))
    return path


def hub_config(path: Path, server: str = "http://127.0.0.1:6443", **user: Any) -> Path:
    return write(
        path,
        clusters=[{"name": "hub", "cluster": {"server": server}}],
        users=[{"name": "admin", "user": user}],
        contexts=[
            {"name": "hub", "context": {"cluster": "hub", "user": "admin"}},
            {"name": "hub-ns1", "context": {"cluster": "hub", "user": "admin", "namespace": "ns1"}},
        ],
        **{"current-context": "hub"},
    )


def test_the_current_context_gives_server_namespace_and_token(tmp_path: Path) -> None:
    config = load_kubeconfig(str(hub_config(tmp_path / "config", token="s3cret")))
    assert (config.server, config.namespace, config.context, config.token) == (
        "http://127.0.0.1:6443",
        "default",
        "hub",
        "s3cret",
    )


def test_a_named_context_and_an_explicit_namespace(tmp_path: Path) -> None:
    path = str(hub_config(tmp_path / "config"))
    assert load_kubeconfig(path, context="hub-ns1").namespace == "ns1"
    assert load_kubeconfig(path, context="hub-ns1", namespace="ns2").namespace == "ns2"


def test_kubeconfig_files_merge_with_the_first_definition_winning(tmp_path: Path) -> None:
    first = write(
        tmp_path / "first",
        clusters=[{"name": "hub", "cluster": {"server": "http://first:1"}}],
        **{"current-context": "hub"},
    )
    second = hub_config(tmp_path / "second", server="http://second:2")
    missing = tmp_path / "missing"
    env = {"KUBECONFIG": f"{missing}:{first}:{second}"}
    config = load_kubeconfig(env=env)
    assert (config.server, config.context) == ("http://first:1", "hub")


def test_home_kube_config_is_the_default(tmp_path: Path) -> None:
    (tmp_path / ".kube").mkdir()
    hub_config(tmp_path / ".kube" / "config", server="http://home:3")
    assert load_kubeconfig(env={"HOME": str(tmp_path)}).server == "http://home:3"


def test_token_file_and_certificate_paths_are_relative_to_the_kubeconfig(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("from-file\n")
    config = load_kubeconfig(str(hub_config(tmp_path / "config", tokenFile="token")))
    assert config.token == "from-file"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_certificate_data_make_a_verifying_ssl_context_with_our_client_cert(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        clusters=[
            {
                "name": "hub",
                "cluster": {"server": "https://hub:6443", "certificate-authority-data": b64(CERT)},
            }
        ],
        users=[
            {
                "name": "me",
                "user": {"client-certificate-data": b64(CERT), "client-key-data": b64(KEY)},
            }
        ],
        contexts=[{"name": "hub", "context": {"cluster": "hub", "user": "me"}}],
        **{"current-context": "hub"},
    )
    context = load_kubeconfig(str(path)).ssl_context()
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert [c["subject"] for c in context.get_ca_certs()] == [
        ((("commonName", "fleetwarden-test-ca"),),)
    ]


def test_insecure_skip_tls_verify_turns_verification_off(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        clusters=[
            {"name": "hub", "cluster": {"server": "https://hub", "insecure-skip-tls-verify": True}}
        ],
        contexts=[{"name": "hub", "context": {"cluster": "hub"}}],
        **{"current-context": "hub"},
    )
    assert load_kubeconfig(str(path)).ssl_context() is False


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ("nowhere", "context was not found for specified context: nowhere"),
        (None, "no configuration has been provided"),
    ],
)
def test_what_cannot_be_used_is_said(tmp_path: Path, context: str | None, message: str) -> None:
    path = hub_config(tmp_path / "config") if context else write(tmp_path / "config")
    with pytest.raises(KubeConfigError, match=message):
        load_kubeconfig(str(path), context=context)


def test_a_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(KubeConfigError, match="error loading config file"):
        load_kubeconfig(str(tmp_path / "absent"))


def test_a_private_file_is_its_owners_whatever_was_planted_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "kubeconfig"
    elsewhere = tmp_path / "elsewhere"
    # what the old writer wrote through: its fixed temporary name, planted as a link
    (tmp_path / ".kubeconfig.tmp").symlink_to(elsewhere)
    write_private_file(target, b"secret")
    write_private_file(target, b"newer")
    assert target.read_bytes() == b"newer"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert not elsewhere.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".kubeconfig.tmp", "kubeconfig"]
