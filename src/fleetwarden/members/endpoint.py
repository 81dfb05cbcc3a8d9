"""The small HTTP endpoint a Push member serves for the hub (members/real.py calls it).

It stands where a Push cluster's spec.apiEndpoint points, in place of the member's API
server: `/readyz` and `/healthz` answer 200 `ok` while the member is healthy and 503
otherwise (a member that is not reachable does not answer at all); REPORT_PATH tells the
version, enabled APIs and allocatable resources the cluster status controller reports;
DELETE_WORKLOAD_PATH removes a deleted Work's workload, as the hub's execution
controller does on a Push member.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fleetwarden.api.codec import load_json
from fleetwarden.api.karmada.cluster import APIEnablement
from fleetwarden.api.karmada.work import Work
from fleetwarden.semantics.cluster_health import MemberReport, Probe

logger = logging.getLogger(__name__)

REPORT_PATH = "/fleetwarden/v1/report"
DELETE_WORKLOAD_PATH = "/fleetwarden/v1/delete-workload"
_HEALTH_PATHS = ("/readyz", "/healthz")


def encode_report(report: MemberReport) -> dict[str, Any]:
    return {
        "kubernetesVersion": report.kubernetes_version,
        "apiEnablements": [e.to_dict() for e in report.api_enablements],
        "allocatable": dict(report.allocatable),
    }


def decode_report(data: Mapping[str, Any]) -> MemberReport:
    return MemberReport(
        kubernetes_version=str(data.get("kubernetesVersion", "")),
        api_enablements=[APIEnablement.model_validate(e) for e in data.get("apiEnablements", [])],
        allocatable={str(k): str(v) for k, v in (data.get("allocatable") or {}).items()},
    )


@dataclass(frozen=True)
class Member:
    """What the endpoint asks of the member it serves."""

    probe: Callable[[], Probe]
    report: Callable[[], MemberReport]
    delete_workload: Callable[[Work], bool]


class MemberEndpoint:
    """The endpoint, served from a thread of its own on 127.0.0.1."""

    def __init__(self, member: Member, host: str = "127.0.0.1", port: int = 0) -> None:
        self._server = ThreadingHTTPServer((host, port), _handler(member))
        self._server.daemon_threads = True
        # Polled every 50 ms for shutdown: stop() waits for the next poll.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="member-endpoint", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(member: Member) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's naming
            if self.path in _HEALTH_PATHS:
                healthy = member.probe().healthy
                status = HTTPStatus.OK if healthy else HTTPStatus.SERVICE_UNAVAILABLE
                self._send(status, b"ok" if healthy else b"not ready", "text/plain")
            elif self.path == REPORT_PATH:
                body = json.dumps(encode_report(member.report())).encode()
                self._send(HTTPStatus.OK, body, "application/json")
            else:
                self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain")

        def do_POST(self) -> None:
            if self.path != DELETE_WORKLOAD_PATH:
                self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain")
                return
            length = int(self.headers.get("Content-Length") or 0)
            work = Work.model_validate(load_json(self.rfile.read(length)))
            gone = member.delete_workload(work)
            status = HTTPStatus.OK if gone else HTTPStatus.SERVICE_UNAVAILABLE
            self._send(status, b"", "text/plain")

        def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            logger.debug("member endpoint: " + format, *args)

    return Handler
