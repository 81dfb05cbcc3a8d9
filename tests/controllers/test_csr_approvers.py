"""The hub's answers to agents' CertificateSigningRequests: Karmada's agentcsrapproving and
OCM's CSR approving controller (each asking RBAC, as upstream asks a SubjectAccessReview),
the kube-apiserver-client signer, and the cleaner of expired bootstrap tokens. Ported from karmada's agent_csr_approving_test.go and
ocm's approve_reconciler tests: one reconcile over a seeded request, then what it wrote."""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.certificates import CSR
from fleetwarden.api.rbac import CLUSTER_ROLE_BINDING_KIND, ROLE_KIND
from fleetwarden.auth import pki
from fleetwarden.auth.authn import bootstrap_token_secret
from fleetwarden.auth.bootstrap import cluster_role, cluster_role_binding, group, rule, user
from fleetwarden.auth.rbac import RBAC
from fleetwarden.controllers.certificates import token_cleaner
from fleetwarden.controllers.certificates.signer import csr_signing_controller
from fleetwarden.controllers.karmada.agent_csr_approving import (
    agent_csr_approving_controller,
    static_policy,
)
from fleetwarden.controllers.ocm.csr import csr_approving_controller
from fleetwarden.runtime.clock import DEFAULT_EPOCH, VirtualClock
from fleetwarden.runtime.events import EventRecorder
from fleetwarden.runtime.informer import Cache
from fleetwarden.runtime.manager import DONE, Context, Result, requeue_after
from fleetwarden.runtime.settings import Settings
from fleetwarden.store import MemoryStore

Obj = dict[str, Any]
RBAC_GROUP = "rbac.authorization.k8s.io"
NOW = datetime(2025, 1, 1, tzinfo=UTC)


def request(cn: str, *organizations: str, sans: list[str] | None = None) -> str:
    key = pki.new_key()
    builder = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name(
            [x509.NameAttribute(x509.NameOID.ORGANIZATION_NAME, o) for o in organizations]
            + [x509.NameAttribute(x509.NameOID.COMMON_NAME, cn)]
        )
    )
    if sans:
        names = [x509.DNSName(s) for s in sans]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    pem = builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
    return base64.b64encode(pem).decode()


def csr(name: str, pem: str, requester: UserInfo, labels: dict[str, str] | None = None) -> Obj:
    return {
        "apiVersion": CSR.api_version,
        "kind": CSR.kind,
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "request": pem,
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["digital signature", "key encipherment", "client auth"],
            "username": requester.name,
            "groups": list(requester.groups),
        },
    }


def policy(*objects: Obj) -> RBAC:
    rbac = RBAC()
    for obj in objects:
        kind = {"ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings"}
        rbac.observe(f"{RBAC_GROUP}/{kind[obj['kind']]}", obj)
    return rbac


class Bench:
    """The objects in a store read by a synced cache; `run` reconciles one key."""

    def __init__(self, *objects: Obj) -> None:
        self.clock = VirtualClock()
        self.store = MemoryStore(now=self.clock.now)
        for obj in objects:
            self.store.create(obj)
        self.cache = Cache(self.store)
        self.cache.sync()
        self.store.subscribe(self.cache.handle)

    def run(self, reconcile: Callable[[str, Context], Result], key: str) -> Result:
        recorder = EventRecorder(self.store, self.clock, "test")
        return reconcile(key, Context(self.cache, self.store, self.clock, Settings(), recorder))


def approval(bench: Bench, name: str) -> Obj | None:
    conditions = bench.store.get(CSR, name).get("status", {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Approved"), None)


BOOTSTRAP = UserInfo.of(
    "system:bootstrap:abcdef",
    ["system:bootstrappers", "system:bootstrappers:karmada:default-cluster-token",
     "system:authenticated"],
)  # fmt: skip
AGENT_CN = "system:karmada:agent:member1"


def test_a_karmada_agent_request_from_a_bootstrap_token_is_approved_and_its_rights_granted() -> (
    None
):
    bench = Bench(csr("m1", request(AGENT_CN, "system:karmada:agents"), BOOTSTRAP))
    bench.run(agent_csr_approving_controller(policy(*static_policy())).reconcile, "m1")
    condition = approval(bench, "m1")
    assert condition is not None
    assert (condition["reason"], condition["message"]) == (
        "AutoApproved", "Auto approving karmada agent certificate after SubjectAccessReview."
    )  # fmt: skip
    role = bench.store.get(ROLE_KIND, "system:karmada:member1:agent-work", "karmada-es-member1")
    assert role["rules"][0]["resources"] == ["works"]
    binding = bench.store.get(CLUSTER_ROLE_BINDING_KIND, "system:karmada:member1:agent")
    assert binding["subjects"] == [user(AGENT_CN)]


@pytest.mark.parametrize(
    ("pem", "why"),
    [
        (lambda: request(AGENT_CN, "system:masters"), "another organization"),
        (lambda: request("system:karmada:other", "system:karmada:agents"), "not an agent's name"),
        (lambda: request(AGENT_CN, "system:karmada:agents", sans=["a.example"]), "a SAN"),
        (
            lambda: request("system:karmada:agent:Evil/../x", "system:karmada:agents"),
            "a cluster name no cluster may have",
        ),
    ],
)
def test_requests_that_are_no_agents_are_left_alone(pem: Any, why: str) -> None:
    bench = Bench(csr("m1", pem(), BOOTSTRAP))
    bench.run(agent_csr_approving_controller(policy(*static_policy())).reconcile, "m1")
    assert approval(bench, "m1") is None, why


def test_a_requester_without_the_clusteragent_right_is_not_approved() -> None:
    stranger = UserInfo.of("mallory", ["system:authenticated"])
    bench = Bench(csr("m1", request(AGENT_CN, "system:karmada:agents"), stranger))
    bench.run(agent_csr_approving_controller(policy(*static_policy())).reconcile, "m1")
    assert approval(bench, "m1") is None


OCM_CN = "system:open-cluster-management:cluster1:registration-agent"
OCM_GROUPS = (
    "system:open-cluster-management:cluster1",
    "system:open-cluster-management:managed-clusters",
)
RENEW = [
    cluster_role("renew", [rule(["register.open-cluster-management.io"],
                                ["managedclusters/clientcertificates"], ["renew"])]),
    cluster_role_binding("renew", [group("system:open-cluster-management:cluster1")], "renew"),
]  # fmt: skip
LABELS = {"open-cluster-management.io/cluster-name": "cluster1"}


def test_an_ocm_agent_renewing_its_own_certificate_is_approved() -> None:
    agent = UserInfo.of(OCM_CN, [*OCM_GROUPS, "system:authenticated"])
    bench = Bench(csr("c1", request(OCM_CN, *OCM_GROUPS), agent, LABELS))
    bench.run(csr_approving_controller(policy(*RENEW)).reconcile, "c1")
    condition = approval(bench, "c1")
    assert condition is not None
    assert condition["reason"] == "AutoApprovedByHubCSRApprovingController"


@pytest.mark.parametrize(
    ("requester", "labels", "why"),
    [
        (BOOTSTRAP, LABELS, "a first request waits for an administrator to accept the cluster"),
        (UserInfo.of(OCM_CN, OCM_GROUPS), {"open-cluster-management.io/cluster-name": "cluster2"},
         "the label names another cluster"),
        (UserInfo.of(OCM_CN, ["system:authenticated"]), LABELS, "no renew right"),
    ],
)  # fmt: skip
def test_other_ocm_requests_wait(requester: UserInfo, labels: dict[str, str], why: str) -> None:
    bench = Bench(csr("c1", request(OCM_CN, *OCM_GROUPS), requester, labels))
    bench.run(csr_approving_controller(policy(*RENEW)).reconcile, "c1")
    assert approval(bench, "c1") is None, why


def test_the_signer_signs_an_approved_client_request_and_fails_a_server_one() -> None:
    ca = pki.new_ca("ca", NOW)
    approved = {"type": "Approved", "status": "True", "reason": "Test"}
    good = csr("good", request("bob", "team"), BOOTSTRAP)
    bad = csr("bad", request("web"), BOOTSTRAP)
    bad["spec"]["usages"] = ["digital signature", "server auth"]
    bench = Bench(good, bad)
    for name in ("good", "bad"):
        stored = bench.store.get(CSR, name)
        bench.store.update({**stored, "status": {"conditions": [approved]}}, subresource="status")
    bench.cache.sync()
    signer = csr_signing_controller(ca)
    bench.run(signer.reconcile, "good")
    bench.run(signer.reconcile, "bad")
    issued = base64.b64decode(bench.store.get(CSR, "good")["status"]["certificate"])
    certificate = x509.load_pem_x509_certificate(issued)
    assert certificate.subject.rfc4514_string() == "CN=bob,O=team"
    assert certificate.issuer == ca.certificate.subject
    failed = bench.store.get(CSR, "bad")["status"]
    assert "certificate" not in failed
    assert failed["conditions"][-1]["type"] == "Failed"
    assert (
        failed["conditions"][-1]["message"] == "invalid usage for client certificate: server auth"
    )


def test_an_expired_bootstrap_token_is_removed_and_a_lasting_one_kept() -> None:
    start = DEFAULT_EPOCH
    expiring = bootstrap_token_secret("abcdef.0123456789abcdef", [], start + timedelta(hours=1))
    lasting = bootstrap_token_secret("ghijkl.0123456789abcdef", [], None)
    bench = Bench(expiring, lasting)
    bench.clock.set(start)
    assert bench.run(token_cleaner.reconcile, "kube-system/bootstrap-token-abcdef") == (
        requeue_after(timedelta(hours=1))
    )
    assert bench.run(token_cleaner.reconcile, "kube-system/bootstrap-token-ghijkl") == DONE
    bench.clock.set(start + timedelta(hours=1, seconds=1))
    bench.run(token_cleaner.reconcile, "kube-system/bootstrap-token-abcdef")
    bench.run(token_cleaner.reconcile, "kube-system/bootstrap-token-ghijkl")
    names = [s["metadata"]["name"] for s in bench.store.list(token_cleaner.SECRET).items]
    assert names == ["bootstrap-token-ghijkl"]
