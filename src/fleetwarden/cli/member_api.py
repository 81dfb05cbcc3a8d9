"""A simulated member's own Kubernetes API (`fleetwarden agent --member-api-dir DIR`), as
`fleetwarden up --members N` serves one per member for `kubectl --context memberN`.

The hub's API server (fleetwarden.server) over the member's store (members/inside/api_store.py),
serving Kubernetes' kinds only, on 127.0.0.1 over TLS: DIR/apiserver.crt and .key its
certificate, and client certificates verified against DIR/ca.crt (`up` puts the hub's CA
there, so the administrator's certificate of the hub's kubeconfig is the member's
administrator too); authorized by RBAC over the member's own Roles and bindings (none but
system:masters may do anything at first). A request without a client certificate is
refused (401). The URL is written to DIR/server once it serves; a restarted agent serves on
the same port again when it can.
"""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import urlsplit

from fleetwarden.admission import default_chain
from fleetwarden.auth.authn import Authenticator
from fleetwarden.client.kubeconfig import write_private_file
from fleetwarden.members.inside.api_store import MEMBER_REGISTRY, MemberApiStore
from fleetwarden.runtime.access import rbac_authorizer
from fleetwarden.runtime.clock import RealClock
from fleetwarden.server import Server, create_app
from fleetwarden.server.security import Security
from fleetwarden.server.tls import TLS

logger = logging.getLogger(__name__)

SERVING_CERT = "apiserver.crt"
SERVING_KEY = "apiserver.key"
CLIENT_CA = "ca.crt"
SERVER_FILE = "server"
HOST = "127.0.0.1"


class MemberApiServer:
    """The member's API server; start() serves and writes DIR/server, stop() ends it."""

    def __init__(self, directory: Path, api: MemberApiStore) -> None:
        self.dir = directory
        security = Security(Authenticator(), rbac_authorizer(api.store))
        app = create_app(api.store, default_chain(MEMBER_REGISTRY), RealClock(), security=security)
        tls = TLS(directory / SERVING_CERT, directory / SERVING_KEY, directory / CLIENT_CA)
        self.server = Server(app, HOST, _kept_port(directory / SERVER_FILE), tls)

    def start(self) -> None:
        try:
            self.server.start()
        except OSError as exc:  # its last port is taken: any free one
            logger.info("%s; serving the member's API on another port", exc)
            self.server.port = 0
            self.server.start()
        write_private_file(self.dir / SERVER_FILE, f"{self.server.url}\n".encode())

    @property
    def url(self) -> str:
        return self.server.url

    def stop(self) -> None:
        self.server.stop()


def _kept_port(server_file: Path) -> int:
    """The port of the URL served last, or 0 (any free one)."""
    try:
        return urlsplit(server_file.read_text().strip()).port or 0
    except (OSError, ValueError):
        return 0
