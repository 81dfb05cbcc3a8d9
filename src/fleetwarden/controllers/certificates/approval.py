"""Approving a CertificateSigningRequest from a hub controller (an approver's UpdateApproval)."""

from __future__ import annotations

from fleetwarden.api.certificates import CertificateSigningRequest, with_approval
from fleetwarden.runtime.manager import Context


def approve(ctx: Context, csr: CertificateSigningRequest, reason: str, message: str) -> None:
    ctx.store.update(with_approval(csr, reason, message, ctx.clock.now()), subresource="status")
