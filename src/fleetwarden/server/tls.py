"""Serving over TLS: the server's certificate, and client certificates verified against the
client CA during the handshake (optional: a request may carry a token instead). What the
verified certificate says reaches the app in the ASGI scope's TLS extension."""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass
from pathlib import Path

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


@dataclass(frozen=True)
class TLS:
    """kube-apiserver's --tls-cert-file, --tls-private-key-file and --client-ca-file."""

    cert_file: Path
    key_file: Path
    client_ca_file: Path | None = None

    def context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self.cert_file, self.key_file)
        context.set_alpn_protocols(["http/1.1"])
        if self.client_ca_file is not None:
            context.load_verify_locations(cafile=str(self.client_ca_file))
            context.verify_mode = ssl.CERT_OPTIONAL
        return context


class PeerCertificateProtocol(HttpToolsProtocol):
    """uvicorn's HTTP protocol, putting the connection's verified client certificate (as
    ssl's getpeercert() reads it) in every request's scope."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = transport.get_extra_info("peercert")
        self._tls: dict[object, object] | None = (
            {"client_cert_subject": peer or None}
            if transport.get_extra_info("ssl_object") is not None
            else None
        )

    def shutdown(self) -> None:
        """The server stops: an idle TLS connection is aborted. Closing it would wait for the
        client's close_notify, which an idle keep-alive client never sends, and uvicorn
        would wait out its graceful shutdown timeout for it."""
        idle = self.cycle is None or self.cycle.response_complete
        if idle and self._tls is not None:
            self.transport.abort()
        else:
            super().shutdown()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._tls is not None:
            self.scope["extensions"] = {"tls": self._tls}
