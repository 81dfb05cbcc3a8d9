"""Approving a CertificateSigningRequest from a hub controller (an approver's UpdateApproval)."""

from __future__ import annotations

from fleetwarden.api.certificates import APPROVED, CertificateSigningRequest
from fleetwarden.api.meta import format_time
from fleetwarden.runtime.manager import Context


def approve(ctx: Context, csr: CertificateSigningRequest, reason: str, message: str) -> None:
    wire = csr.to_dict()
    status = wire.setdefault("status", {})
    approval = {
        "type": APPROVED, "status": "True", "reason": reason, "message": message,
        "lastUpdateTime": format_time(ctx.clock.now()),
    }  # fmt: skip
    status["conditions"] = [*status.get("conditions", []), approval]
    ctx.store.update(wire, subresource="status")
