"""etcd v3 through its gRPC gateway (etcd3gw): the few calls the etcd store makes.

Several endpoints may be given (`--etcd-servers`); a request that cannot reach one goes to
the next. A write whose answer timed out is not sent again (it may have been applied):
its caller gets a 504, as kube-apiserver answers when etcd does not.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from etcd3gw import exceptions
from etcd3gw.client import Etcd3Client

from fleetwarden.api.errors import StatusError

Kv = dict[str, Any]


class EtcdUnavailable(StatusError):
    """503: no etcd endpoint answers."""

    code = 503
    reason = "ServiceUnavailable"


class EtcdTimeout(StatusError):
    """504: etcd did not answer in time; a write may or may not have been applied."""

    code = 504
    reason = "Timeout"


class Compacted(Exception):
    """The revision asked for is older than etcd's compaction."""

    def __init__(self, revision: int) -> None:
        super().__init__(f"etcd compacted past revision {revision}")
        self.revision = revision


@dataclass(frozen=True)
class EtcdTLS:
    """kube-apiserver's --etcd-cafile, --etcd-certfile and --etcd-keyfile."""

    cafile: str | None = None
    certfile: str | None = None
    keyfile: str | None = None


def encode(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def decode(text: str) -> bytes:
    return base64.b64decode(text)


class EtcdClient:
    """The KV calls and a watch stream, over etcd3gw's clients (one per endpoint)."""

    def __init__(
        self,
        endpoints: Sequence[str],
        tls: EtcdTLS | None = None,
        timeout: float = 5.0,
        observe: Callable[[str, float], None] | None = None,
    ) -> None:
        if not endpoints:
            raise ValueError("--etcd-servers: at least one URL is required")
        tls = tls or EtcdTLS()
        self._clients = [_client(url, tls, timeout) for url in endpoints]
        self._current = 0
        self._lock = threading.Lock()
        self._observe = observe or (lambda operation, seconds: None)

    @property
    def endpoints(self) -> list[str]:
        return [c.base_url for c in self._clients]

    def revision(self) -> int:
        """etcd's current revision, read through the quorum (a linearizable range)."""
        answer = self._post("range", "/kv/range", {"key": encode("\0"), "count_only": True})
        return int(answer["header"]["revision"])

    def range(
        self, start: str, end: str, *, revision: int = 0, limit: int = 0
    ) -> tuple[list[Kv], int, bool]:
        """The keys in [start, end) at the revision (0: now): (kvs, revision, more)."""
        body: dict[str, Any] = {"key": encode(start), "range_end": encode(end)}
        if revision:
            body["revision"] = revision
        if limit:
            body["limit"] = limit
        try:
            answer = self._post("range", "/kv/range", body)
        except exceptions.Etcd3Exception as err:
            if "compacted" in str(err):
                raise Compacted(revision) from None
            raise
        return answer.get("kvs", []), int(answer["header"]["revision"]), bool(answer.get("more"))

    def put_if(self, key: str, value: str | None, prior: int) -> int | None:
        """Put the value (delete the key for None) if the key's mod revision is `prior`
        (absent for 0): the new revision, or None when the key has moved on."""
        compare: dict[str, Any] = {"key": encode(key), "result": "EQUAL"}
        if prior:
            compare.update(target="MOD", mod_revision=prior)
        else:
            compare.update(target="CREATE", create_revision=0)
        op = (
            {"request_delete_range": {"key": encode(key)}}
            if value is None
            else {"request_put": {"key": encode(key), "value": encode(value)}}
        )
        body = {"compare": [compare], "success": [op]}
        answer = self._post("txn", "/kv/txn", body, retry=False)
        return int(answer["header"]["revision"]) if answer.get("succeeded") else None

    def compact(self, revision: int) -> None:
        self._post("compact", "/kv/compaction", {"revision": revision})

    def watch(self, start_revision: int) -> Watching:
        """Every key's changes from the revision on, with each deleted key's last value."""
        body: Any = {
            "create_request": {
                "key": encode("\0"),
                "range_end": encode("\0"),
                "start_revision": start_revision,
                "prev_kv": True,
            }
        }
        client = self._client()
        try:
            response = client.session.post(
                client.get_url("/watch"), json=body, stream=True, timeout=(client.timeout, None)
            )
        except requests.RequestException as err:
            self._next(client)
            raise EtcdUnavailable(f"etcd {client.base_url}: {err}") from None
        return Watching(response, start_revision)

    # --- internals -----------------------------------------------------------------------

    def _client(self) -> Etcd3Client:
        with self._lock:
            return self._clients[self._current]

    def _next(self, failed: Etcd3Client) -> None:
        with self._lock:
            if self._clients[self._current] is failed:
                self._current = (self._current + 1) % len(self._clients)

    def _post(self, operation: str, path: str, body: Any, *, retry: bool = True) -> Any:
        """One request, to the next endpoint while one refuses it; a read that timed out is
        tried on the next one too, a write is not."""
        last: object = None
        for _ in self._clients:
            client = self._client()
            started = time.monotonic()
            try:
                answer = client.post(client.get_url(path), json=body)
            except exceptions.ConnectionFailedError as err:
                last = err.detail_text or err
            except exceptions.ConnectionTimeoutError as err:
                if not retry:
                    raise EtcdTimeout(f"etcd {client.base_url}: request timed out") from None
                last = err.detail_text or err
            else:
                self._observe(operation, time.monotonic() - started)
                return answer
            self._next(client)
        raise EtcdUnavailable(f"etcd unavailable: {last}")


class Watching:
    """An open etcd watch: iterate for each response's events; close() from any thread."""

    def __init__(self, response: requests.Response, start_revision: int) -> None:
        self._response = response
        self._start = start_revision

    def __iter__(self) -> Iterator[list[Kv]]:
        buffer = b""
        try:
            for chunk in self._response.iter_content(chunk_size=None):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        events = self._events(json.loads(line))
                        if events:
                            yield events
        except (requests.RequestException, OSError, AttributeError, ValueError):
            return  # closed, or the connection broke: the caller watches again
        finally:
            self._response.close()

    def _events(self, message: dict[str, Any]) -> list[Kv]:
        if "error" in message:
            raise EtcdUnavailable(f"etcd watch: {message['error'].get('message', message)}")
        result = message.get("result", {})
        if int(result.get("compact_revision", 0)):
            raise Compacted(self._start)
        if result.get("canceled"):
            raise EtcdUnavailable(f"etcd watch canceled: {result.get('cancel_reason', '')}")
        events: list[Kv] = result.get("events", [])
        return events

    def close(self) -> None:
        """Shut the connection down under the reading thread, which then ends (closing the
        response itself would wait for that thread's read)."""
        try:
            fileno = self._response.raw.fileno()
            with socket.fromfd(fileno, socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.shutdown(socket.SHUT_RDWR)
        except (OSError, AttributeError, ValueError):
            pass  # closed already


def _client(url: str, tls: EtcdTLS, timeout: float) -> Etcd3Client:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--etcd-servers: {url!r} is not an http(s)://host:port URL")
    client = Etcd3Client(
        host=parts.hostname,
        port=parts.port or 2379,
        protocol=parts.scheme,
        ca_cert=tls.cafile,
        cert_key=tls.keyfile,
        cert_cert=tls.certfile,
        timeout=timeout,
        api_path="/v3/",  # etcd 3.4's gateway; spares a /version request
    )
    # Neither proxies nor a CA bundle from the environment (REQUESTS_CA_BUNDLE would
    # override --etcd-cafile): etcd is reached directly, trusting the CA given.
    client.session.trust_env = False
    return client
