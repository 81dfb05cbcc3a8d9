"""etcd v3 over gRPC: the few calls the etcd store makes.

etcd's own protocol (HTTP/2, protobuf), through grpcio's synchronous channels with the
etcd API's messages and stubs as `aetcd` ships them: one channel per endpoint, thread-safe,
each call releasing the GIL while it waits, so that the API's threads keep several
requests in flight on one connection. (aetcd's own client is asyncio, one endpoint and no
client certificates; etcd's JSON gateway, which the store used before, costs etcd and the
hub each about twice the CPU of a gRPC call.)

Several endpoints may be given (`--etcd-servers`); a request that cannot reach one goes to
the next. A write whose answer timed out (etcd's leader died in the middle of it, say) is
sent once more: a compare-and-swap applies at most once, and the second attempt tells
whether the first did. If that one times out too, its caller gets a 504, as kube-apiserver
answers when etcd does not.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import grpc
from aetcd import rpc  # etcd's v3 API: its protobuf messages and gRPC stubs

from fleetwarden.api.errors import StatusError

Kv = Any  # etcd's mvccpb.KeyValue: key, value (bytes), create/mod_revision, version
Event = Any  # etcd's mvccpb.Event: type (PUT, DELETE), kv, prev_kv
DELETE = rpc.Event.DELETE

# kube-apiserver's keepalive to etcd; a reconnection tried at least every second, so that a
# hub finds etcd again as soon as it is back; etcd's messages may be as large as it likes.
_CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.initial_reconnect_backoff_ms", 100),
    # gRPC's minimum connect timeout: a member that accepts but is still starting (or a
    # loaded machine) answers its HTTP/2 SETTINGS late; an attempt cut off before it fails
    # every call until the next one.
    ("grpc.min_reconnect_backoff_ms", 5_000),
    ("grpc.max_reconnect_backoff_ms", 1_000),
    ("grpc.max_receive_message_length", 2**31 - 1),
    ("grpc.max_send_message_length", 2**31 - 1),
    # etcd is reached directly: no proxy from the environment (http_proxy, grpc_proxy).
    ("grpc.enable_http_proxy", 0),
    # Connections of this channel's own: not those of another store in the process, which
    # may be waiting out a reconnection to a member that has been restarted since.
    ("grpc.use_local_subchannel_pool", 1),
]
# How long a call that failed at once waits for its channel to connect again (the longest
# reconnection backoff) before it takes the member to be gone.
_RECONNECT_WAIT = 1.0
# clientv3's WithRequireLeader: a member cut off from the others ends its watches.
_REQUIRE_LEADER = (("hasleader", "true"),)


class EtcdUnavailable(StatusError):
    """503: no etcd endpoint answers."""

    code = 503
    reason = "ServiceUnavailable"


class EtcdSlow(EtcdUnavailable):
    """503: every endpoint is there but none answered in time (none refused)."""


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


class _Endpoint:
    """One etcd member: its channel and the stubs on it."""

    def __init__(self, url: str, tls: EtcdTLS) -> None:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--etcd-servers: {url!r} is not an http(s)://host:port URL")
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        target = f"{host}:{parts.port or 2379}"
        self.url = f"{parts.scheme}://{target}"
        if parts.scheme == "https":
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read(tls.cafile),
                private_key=_read(tls.keyfile),
                certificate_chain=_read(tls.certfile),
            )
            self.channel = grpc.secure_channel(target, credentials, _CHANNEL_OPTIONS)
        else:
            self.channel = grpc.insecure_channel(target, _CHANNEL_OPTIONS)
        self.kv = rpc.KVStub(self.channel)
        self.watch = rpc.WatchStub(self.channel)


def _read(path: str | None) -> bytes | None:
    return Path(path).read_bytes() if path else None


class EtcdClient:
    """The KV calls and a watch stream, on one channel per endpoint."""

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
        self._endpoints = [_Endpoint(url, tls) for url in endpoints]
        self._current = 0
        self._lock = threading.Lock()
        self._timeout = timeout
        self._observe = observe or (lambda operation, seconds: None)

    @property
    def endpoints(self) -> list[str]:
        return [endpoint.url for endpoint in self._endpoints]

    def close(self) -> None:
        for endpoint in self._endpoints:
            endpoint.channel.close()

    def revision(self) -> int:
        """etcd's current revision, read through the quorum (a linearizable range)."""
        answer = self._call("range", "Range", rpc.RangeRequest(key=b"\0", count_only=True))
        return int(answer.header.revision)

    def range(
        self, start: str, end: str, *, revision: int = 0, limit: int = 0
    ) -> tuple[Sequence[Kv], int, bool]:
        """The keys in [start, end) at the revision (0: now): (kvs, revision, more)."""
        request = rpc.RangeRequest(
            key=start.encode(), range_end=end.encode(), revision=revision, limit=limit
        )
        answer = self._call("range", "Range", request, compacted=revision)
        return answer.kvs, int(answer.header.revision), bool(answer.more)

    def put_if(self, key: str, value: bytes | None, prior: int) -> int | None:
        """Put the value (delete the key for None) if the key's mod revision is `prior`
        (absent for 0): the new revision, or None when the key has moved on."""
        name = key.encode()
        if prior:
            compare = rpc.Compare(
                key=name, result=rpc.Compare.EQUAL, target=rpc.Compare.MOD, mod_revision=prior
            )
        else:
            compare = rpc.Compare(
                key=name, result=rpc.Compare.EQUAL, target=rpc.Compare.CREATE, create_revision=0
            )
        if value is None:
            op = rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=name))
        else:
            op = rpc.RequestOp(request_put=rpc.PutRequest(key=name, value=value))
        # On a failed compare, the key as it is: whether an earlier attempt put it there.
        current = rpc.RequestOp(request_range=rpc.RangeRequest(key=name))
        request = rpc.TxnRequest(compare=[compare], success=[op], failure=[current])
        try:
            answer = self._call("txn", "Txn", request, retry=False)
        except EtcdTimeout:
            # Its answer lost (etcd's leader died with it, say): sent once more, which is
            # safe for a compare-and-swap, since at most one of the two can apply.
            answer = self._call("txn", "Txn", request, retry=False)
            if not answer.succeeded:
                return _applied_before(answer, value)
        return int(answer.header.revision) if answer.succeeded else None

    def compact(self, revision: int) -> None:
        self._call("compact", "Compact", rpc.CompactionRequest(revision=revision))

    def watch(self, start_revision: int) -> Watching:
        """Every key's changes from the revision on; returns once etcd has created the
        watch."""
        endpoint = self._endpoint()
        try:
            return Watching(endpoint, start_revision, self._timeout)
        except EtcdUnavailable:
            self._next(endpoint)
            raise

    # --- internals -----------------------------------------------------------------------

    def _endpoint(self) -> _Endpoint:
        with self._lock:
            return self._endpoints[self._current]

    def _next(self, failed: _Endpoint) -> None:
        with self._lock:
            if self._endpoints[self._current] is failed:
                self._current = (self._current + 1) % len(self._endpoints)

    def _call(
        self, operation: str, method: str, request: Any, *, retry: bool = True, compacted: int = 0
    ) -> Any:
        """One request, to the next endpoint while one cannot serve it; a read that timed
        out is tried on the next one too, a write is not."""
        last, slow, reconnected = "", True, False
        attempts = len(self._endpoints)
        while attempts:
            attempts -= 1
            endpoint = self._endpoint()
            started = time.monotonic()
            try:
                answer = getattr(endpoint.kv, method)(request, timeout=self._timeout)
            except grpc.RpcError as err:
                code, details = err.code(), err.details() or ""
                if code == grpc.StatusCode.OUT_OF_RANGE and "compacted" in details:
                    raise Compacted(compacted) from None
                # The channel has no connection (refused, or cut off before it was made):
                # the call was never sent.
                unsent = code == grpc.StatusCode.UNAVAILABLE and "failed to connect" in details
                timed_out = code == grpc.StatusCode.DEADLINE_EXCEEDED or (
                    code == grpc.StatusCode.UNAVAILABLE and "timed out" in details
                )
                if timed_out and not unsent and not retry:
                    self._next(endpoint)
                    raise EtcdTimeout(f"etcd {endpoint.url}: {details or 'timed out'}") from None
                if not timed_out and code != grpc.StatusCode.UNAVAILABLE:
                    raise StatusError(f"etcd {endpoint.url}: {details or code}") from None
                last, slow = f"{endpoint.url}: {details or code}", slow and timed_out
                if unsent and not reconnected and _reconnects(endpoint):
                    # Failed at once while the channel waited out its reconnection backoff:
                    # the member is back, so it is asked again.
                    reconnected, attempts = True, attempts + 1
                    continue
            else:
                self._observe(operation, time.monotonic() - started)
                return answer
            self._next(endpoint)
        raise (EtcdSlow if slow else EtcdUnavailable)(f"etcd unavailable: {last}")


def _reconnects(endpoint: _Endpoint) -> bool:
    """Whether the endpoint's channel is ready within a reconnection backoff."""
    ready = grpc.channel_ready_future(endpoint.channel)
    try:
        ready.result(timeout=_RECONNECT_WAIT)
    except grpc.FutureTimeoutError:
        ready.cancel()  # else it stays subscribed to the channel's state until it connects
        return False
    return True


def _applied_before(answer: Any, value: bytes | None) -> int | None:
    """The revision of a write whose first attempt timed out and whose second found the key
    moved on: the first attempt's, if the key holds what it wrote (an object's value is its
    own: its uid and its fields), or is gone for a removal; else None."""
    kvs = answer.responses[0].response_range.kvs
    if value is None:
        return None if kvs else int(answer.header.revision)
    return int(kvs[0].mod_revision) if kvs and kvs[0].value == value else None


class Watching:
    """An open etcd watch: iterate for each response's events; close() from any thread."""

    def __init__(self, endpoint: _Endpoint, start_revision: int, timeout: float) -> None:
        self._start = start_revision
        self._closed = False
        self._requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        create = rpc.WatchCreateRequest(key=b"\0", range_end=b"\0", start_revision=start_revision)
        self._requests.put(rpc.WatchRequest(create_request=create))
        self._call = endpoint.watch.Watch(iter(self._requests.get, None), metadata=_REQUIRE_LEADER)
        # The created response first; an endpoint that cannot be reached fails at once, one
        # that does not answer is given up after the timeout.
        timer = threading.Timer(timeout, self._call.cancel)
        timer.start()
        try:
            created = next(self._call)
        except (grpc.RpcError, StopIteration) as err:
            self.close()
            detail = err.details() if isinstance(err, grpc.RpcError) else "ended"
            raise EtcdUnavailable(f"etcd {endpoint.url} watch: {detail}") from None
        finally:
            timer.cancel()
        self._check(created)

    def __iter__(self) -> Iterator[Sequence[Event]]:
        try:
            for response in self._call:
                self._check(response)
                if response.events:
                    yield response.events
        except grpc.RpcError as err:
            if not self._closed:
                raise EtcdUnavailable(f"etcd watch: {err.details() or err.code()}") from None

    def _check(self, response: Any) -> None:
        if response.compact_revision:
            self.close()
            raise Compacted(self._start)
        if response.canceled:
            self.close()
            raise EtcdUnavailable(f"etcd watch canceled: {response.cancel_reason}")

    def close(self) -> None:
        """End the stream; the thread iterating it then stops."""
        self._closed = True
        self._requests.put(None)
        self._call.cancel()
