"""The audit log (--audit-log-path): one audit.k8s.io/v1 Event per request, at the Metadata
level (who, what, on which object, the answer's code; no bodies), one JSON line each, as
kube-apiserver's log backend writes them."""

from __future__ import annotations

import json
import os
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.authorization import Attributes
from fleetwarden.api.meta import format_micro_time


@dataclass
class AuditEvent:
    """What one request leaves in the log; filled in as the request goes."""

    request_uri: str
    verb: str
    source_ip: str
    user_agent: str
    received: datetime
    audit_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    user: UserInfo | None = None
    impersonated: UserInfo | None = None
    attributes: Attributes | None = None
    annotations: dict[str, str] = field(default_factory=dict)

    def to_wire(
        self, code: int, completed: datetime, stage: str = "ResponseComplete"
    ) -> dict[str, Any]:
        event: dict[str, Any] = {
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "auditID": self.audit_id,
            "stage": stage,
            "requestURI": self.request_uri,
            "verb": self.verb,
            "user": self.user.to_wire() if self.user else {},
            "sourceIPs": [self.source_ip] if self.source_ip else [],
        }
        if self.impersonated is not None:
            event["impersonatedUser"] = self.impersonated.to_wire()
        if self.user_agent:
            event["userAgent"] = self.user_agent
        if self.attributes is not None and self.attributes.resource_request:
            event["objectRef"] = _object_ref(self.attributes)
        event["responseStatus"] = {"metadata": {}, "code": code}
        event["requestReceivedTimestamp"] = format_micro_time(self.received)
        event["stageTimestamp"] = format_micro_time(completed)
        if self.annotations:
            event["annotations"] = dict(self.annotations)
        return event


def _object_ref(attributes: Attributes) -> dict[str, str]:
    ref = {
        "resource": attributes.resource,
        "namespace": attributes.namespace,
        "name": attributes.name,
        "apiGroup": attributes.api_group,
        "apiVersion": attributes.api_version,
        "subresource": attributes.subresource,
    }
    return {key: value for key, value in ref.items() if value}


class AuditLog:
    """Appends events to a file, a line each, written whole under a lock (the file is made
    0600: it names every user and object)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._file = os.fdopen(fd, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, event: dict[str, Any]) -> None:
        line = json.dumps(event, separators=(",", ":"), ensure_ascii=False) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()
