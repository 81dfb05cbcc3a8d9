"""Who a request is and whether it may: the API server's authentication, impersonation and
authorization filters, in kube-apiserver's order, and their refusals in its words.

Without an authenticator of its own the server is the old insecure port: a request with no
credentials is the cluster administrator (tests, and `fleetwarden up --insecure-serving` on
the loopback). Credentials, impersonation and RBAC apply all the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fleetwarden.api.authentication import SYSTEM_MASTERS, UserInfo
from fleetwarden.api.authorization import Attributes, Authorizer, BoundRules, Decision
from fleetwarden.api.rbac import PolicyRule
from fleetwarden.auth.audit import AuditLog
from fleetwarden.auth.authn import Authenticator
from fleetwarden.auth.impersonation import impersonate, requested
from fleetwarden.server.http import Request

# The old insecure port's user: no credentials, every right.
INSECURE_USER = UserInfo("system:unsecured", (SYSTEM_MASTERS, "system:authenticated"))


class AllowAll:
    """An authorizer that allows everything, for a server with no RBAC of its own."""

    def authorize(self, attributes: Attributes) -> Decision:
        return Decision(True)

    def rules_for(self, user: UserInfo, namespace: str) -> BoundRules:
        everything = [
            PolicyRule(verbs=["*"], api_groups=["*"], resources=["*"]),
            PolicyRule(verbs=["*"], non_resource_urls=["*"]),
        ]
        return BoundRules(everything, [])

    def role_rules(self, kind: str, name: str, namespace: str) -> list[PolicyRule] | None:
        return []


@dataclass
class Security:
    authenticator: Authenticator = field(
        default_factory=lambda: Authenticator(default=INSECURE_USER)
    )
    authorizer: Authorizer = field(default_factory=AllowAll)
    audit: AuditLog | None = None

    def user_of(
        self, scope: Mapping[str, Any], request: Request
    ) -> tuple[UserInfo, UserInfo | None]:
        """(the user the request runs as, the authenticated one when it impersonates)."""
        tls = (scope.get("extensions") or {}).get("tls") or {}
        user = self.authenticator.authenticate(
            tls.get("client_cert_subject"), request.headers.get("authorization")
        )
        if not requested(request.raw_headers):
            return user, None
        return impersonate(user, request.raw_headers, self.authorizer.authorize), user
