"""certificates.k8s.io/v1 CertificateSigningRequest: how an agent asks the hub for a client
certificate of its own identity."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Model, Resource, Time, format_time

GROUP = "certificates.k8s.io"
VERSION = "v1"

KUBE_APISERVER_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
APPROVED = "Approved"
DENIED = "Denied"
FAILED = "Failed"

# Every KeyUsage the API takes, sorted as its validation lists them.
KEY_USAGES = sorted([
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
    "server auth", "client auth", "code signing", "email protection", "s/mime",
    "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc",
])  # fmt: skip
CLIENT_USAGES = ("digital signature", "key encipherment", "client auth")


class CertificateSigningRequestSpec(Model):
    request: str = ""  # base64 of a PEM CERTIFICATE REQUEST
    signer_name: str = ""
    expiration_seconds: int | None = None
    usages: list[str] | None = None
    username: str | None = None
    uid: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None


class CertificateSigningRequestCondition(Model):
    type: str = ""
    status: str = ""
    reason: str | None = None
    message: str | None = None
    last_update_time: Time | None = None
    last_transition_time: Time | None = None


class CertificateSigningRequestStatus(Model):
    conditions: list[CertificateSigningRequestCondition] | None = None
    certificate: str | None = None  # base64 of PEM CERTIFICATE blocks


class CertificateSigningRequest(Resource):
    spec: CertificateSigningRequestSpec = Field(default_factory=CertificateSigningRequestSpec)
    status: CertificateSigningRequestStatus = Field(default_factory=CertificateSigningRequestStatus)

    def has_condition(self, type_: str) -> bool:
        return any(
            c.type == type_ and c.status in ("True", "") for c in self.status.conditions or []
        )

    @property
    def requester(self) -> UserInfo:
        """Who asked: the identity the API server wrote into the spec."""
        spec = self.spec
        return UserInfo.of(spec.username or "", spec.groups or [], spec.uid or "", spec.extra)

    @property
    def approved(self) -> bool:
        """IsCertificateRequestApproved: Approved and not Denied."""
        return self.has_condition(APPROVED) and not self.has_condition(DENIED)


CSR = KindInfo(
    GROUP, VERSION, "CertificateSigningRequest", "certificatesigningrequests", False,
    CertificateSigningRequest, ("csr",), more_subresources=("approval",),
)  # fmt: skip
KINDS = [CSR]


def with_approval(
    csr: CertificateSigningRequest, reason: str, message: str, now: datetime
) -> dict[str, Any]:
    """The request's wire form with an Approved condition added: what an approver sends to
    the approval subresource."""
    wire = csr.to_dict()
    status = wire.setdefault("status", {})
    approval = {
        "type": APPROVED, "status": "True", "reason": reason, "message": message,
        "lastUpdateTime": format_time(now),
    }  # fmt: skip
    status["conditions"] = [*status.get("conditions", []), approval]
    return wire
