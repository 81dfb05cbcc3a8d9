"""An agent's own kubeconfig (members.bootstrap.joined_kubeconfig): asked for with the
bootstrap token, kept while it is this hub's and valid, asked for again otherwise."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from cryptography import x509

from fleetwarden.auth.pki import client_certificate, new_ca
from fleetwarden.client.kubeconfig import KubeConfig, load_kubeconfig, write_kubeconfig
from fleetwarden.members.bootstrap import joined_kubeconfig, karmada_identity

from .conftest import JoiningHub

AGENT = karmada_identity("member1")


def join(hub: JoiningHub, own: Path) -> KubeConfig:
    joined_kubeconfig(load_kubeconfig(str(hub.bootstrap)), AGENT, own, timeout=30)
    return load_kubeconfig(str(own))


def issuer(config: KubeConfig) -> x509.Name:
    assert config.client_certificate is not None
    return x509.load_pem_x509_certificate(config.client_certificate).issuer


def test_a_joined_agent_keeps_its_certificate(joining_hub: JoiningHub, tmp_path: Path) -> None:
    own = tmp_path / "member1.kubeconfig"
    first = join(joining_hub, own)
    assert join(joining_hub, own).client_certificate == first.client_certificate


def test_a_certificate_from_another_hubs_ca_is_asked_for_again(
    joining_hub: JoiningHub, tmp_path: Path
) -> None:
    own = tmp_path / "member1.kubeconfig"
    bootstrap = load_kubeconfig(str(joining_hub.bootstrap))
    old_ca = new_ca("an earlier hub", datetime.now(UTC))
    old = client_certificate(old_ca, AGENT.user, AGENT.groups, datetime.now(UTC))
    write_kubeconfig(
        own, bootstrap.server, ca=old_ca.certificate_pem(),
        certificate=old.certificate_pem(), key=old.key_pem(),
    )  # fmt: skip
    joined = join(joining_hub, own)
    assert joined.certificate_authority == bootstrap.certificate_authority
    assert issuer(joined) != old_ca.certificate.subject


def test_a_kept_kubeconfig_without_a_certificate_in_it_is_asked_for_again(
    joining_hub: JoiningHub, tmp_path: Path
) -> None:
    own = tmp_path / "member1.kubeconfig"
    bootstrap = load_kubeconfig(str(joining_hub.bootstrap))
    write_kubeconfig(
        own, bootstrap.server, ca=bootstrap.certificate_authority,
        certificate=b"not a certificate", key=b"not a key",
    )  # fmt: skip
    assert issuer(join(joining_hub, own)).rfc4514_string()
