"""One audit event per request: who asked (and as whom), what the request info says, the
decision and the answer's code, written when the answer is complete."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.authorization import Attributes, Decision
from fleetwarden.auth.audit import AuditEvent, AuditLog
from fleetwarden.server.http import Request

Message = Mapping[str, Any]
Send = Callable[[Message], Awaitable[None]]


class RequestAudit:
    """A request's audit event, if the server keeps a log; a no-op otherwise."""

    def __init__(self, scope: Mapping[str, Any], request: Request, log: AuditLog | None) -> None:
        self.log, self.code = log, 0
        if log is None:
            self.event = None
            return
        client = scope.get("client") or ("", 0)
        query = scope.get("query_string", b"").decode("latin-1")
        self.event = AuditEvent(
            request_uri=request.path + (f"?{query}" if query else ""),
            verb=request.method.lower(),
            source_ip=str(client[0]),
            user_agent=request.headers.get("user-agent", ""),
            received=datetime.now(UTC),
        )

    def recording(self, send: Send) -> Send:
        """`send`, noting the answer's status code."""

        async def recorded(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.code = int(message["status"])
            await send(message)

        return recorded

    def authenticated(self, user: UserInfo, impersonator: UserInfo | None) -> UserInfo:
        if self.event is not None:
            self.event.user = impersonator or user
            self.event.impersonated = user if impersonator else None
        return user

    def authorized(self, attributes: Attributes, decision: Decision) -> None:
        if self.event is None:
            return
        self.event.attributes = attributes
        if attributes.resource_request:
            self.event.verb = attributes.verb
        self.event.annotations["authorization.k8s.io/decision"] = (
            "allow" if decision.allowed else "forbid"
        )
        self.event.annotations["authorization.k8s.io/reason"] = decision.reason

    def complete(self) -> None:
        if self.log is not None and self.event is not None:
            self.log.write(self.event.to_wire(self.code, datetime.now(UTC)))
