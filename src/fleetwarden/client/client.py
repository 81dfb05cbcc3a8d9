"""A small client for a Kubernetes-style API server (the hub's, or any other).

Objects are wire dicts; a collection is named by its KindInfo, as the Store names it, so
code written against the store reads the same against a server. Errors are the
`fleetwarden.api.errors` exceptions, built from the server's Status bodies.

The one seam is httpx's transport: tests hand in their own (`httpx.MockTransport`, or
a transport into an in-process app).
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import quote

import httpx

from fleetwarden import __version__
from fleetwarden.api.errors import Conflict
from fleetwarden.api.kinds import KindInfo
from fleetwarden.client.discovery import Discovery
from fleetwarden.client.errors import (
    ClientError,
    ServerError,
    ServerUnreachable,
    error_for_response,
    status_error,
)
from fleetwarden.client.kubeconfig import DEFAULT_NAMESPACE, KubeConfig

Obj = dict[str, Any]
PatchType = Literal["merge", "json", "strategic"]

_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}
# As kubectl asks: a server-side Table when the server can, the objects otherwise.
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

T = TypeVar("T")


@dataclass(frozen=True)
class WatchEvent:
    """One line of a watch: ADDED, MODIFIED, DELETED or BOOKMARK, and the object."""

    type: str
    object: Obj


class Watch:
    """A watch stream: iterate it for events; close() ends it. Errors in the stream
    (a 410 Expired, say) are raised as the api error they are."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        # A socket closed while another thread reads it frees its descriptor for the next
        # connection, which that read would then steal from: close() only shuts a socket
        # down while a read is under way, and the reading thread closes it.
        self._lock = threading.Lock()
        self._closed = self._reading = self._released = False

    def __iter__(self) -> Iterator[WatchEvent]:
        lines = self._response.iter_lines()
        try:
            while (line := self._read(lines)) is not None:
                if not line.strip():
                    continue
                event = json.loads(line)
                if event.get("type") == "ERROR":
                    raise status_error(event.get("object") or {})
                yield WatchEvent(str(event.get("type")), event.get("object") or {})
        except httpx.HTTPError as exc:
            if not self._closed:
                raise ClientError(f"the watch stream broke: {exc}") from None
        finally:
            self._release()

    def _read(self, lines: Iterator[str]) -> str | None:
        with self._lock:
            if self._closed:
                return None
            self._reading = True
        try:
            return next(lines, None)
        finally:
            with self._lock:
                self._reading = False

    def close(self) -> None:
        """End the stream; safe from another thread while one iterates it."""
        with self._lock:
            self._closed = True
            if self._reading:  # closing a socket would not wake the reader; this does
                stream = self._response.extensions.get("network_stream")
                sock = stream.get_extra_info("socket") if stream is not None else None
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
                return
        self._release()

    def _release(self) -> None:
        with self._lock:
            if not self._released:
                self._released = True
                self._response.close()

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Client:
    """get, list, create, update, patch, delete and watch over KindInfos; discovery
    to turn what a user types into a KindInfo."""

    def __init__(
        self,
        server: str,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        token: str | None = None,
        auth: tuple[str, str] | None = None,
        verify: ssl.SSLContext | bool = True,
        transport: httpx.BaseTransport | None = None,
        timeout: float | None = 30.0,
    ) -> None:
        headers = {"User-Agent": f"fleetwarden/{__version__}", "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._identity = (token, auth, verify)
        self.server = server.rstrip("/")
        self.namespace = namespace
        self.timeout = timeout
        self._http = httpx.Client(
            base_url=self.server,
            headers=headers,
            auth=auth,
            verify=verify,
            transport=transport,
            timeout=timeout,
        )
        self.discovery = Discovery(self.get_json)

    @classmethod
    def from_kubeconfig(
        cls,
        config: KubeConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float | None = 30.0,
    ) -> Client:
        auth = (config.username, config.password or "") if config.username else None
        return cls(
            config.server,
            namespace=config.namespace,
            token=config.token,
            auth=auth,
            verify=config.ssl_context(),
            transport=transport,
            timeout=timeout,
        )

    def copy(self) -> Client:
        """Another client of the same server, as the same user, with connections of its own
        (one per agent, say)."""
        token, auth, verify = self._identity
        return Client(
            self.server, namespace=self.namespace, token=token, auth=auth, verify=verify,
            timeout=self.timeout,
        )  # fmt: skip

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # resource types

    def resolve(self, resource: str) -> KindInfo:
        """What a user means by `clusters`, `mcl`, `deploy`, `clusters.cluster.karmada.io`."""
        return self.discovery.resolve(resource)

    def info_for(self, obj: Mapping[str, Any]) -> KindInfo:
        """The resource type of a manifest, by its apiVersion and kind."""
        return self.discovery.for_kind(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))

    # verbs

    def get(self, info: KindInfo, name: str, namespace: str = "") -> Obj:
        obj: Obj = self.get_json(self.path(info, namespace, name))
        return obj

    def list(
        self,
        info: KindInfo,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> Obj:
        """The List: `items`, and `metadata.resourceVersion` to watch from.
        namespace None lists every namespace."""
        params = _params(
            labelSelector=label_selector,
            fieldSelector=field_selector,
            limit=limit,
            **{"continue": continue_},
        )
        listed: Obj = self._send("GET", self._collection(info, namespace), params=params)
        return listed

    def table(
        self,
        info: KindInfo,
        namespace: str | None = None,
        *,
        name: str = "",
        label_selector: str | None = None,
    ) -> Obj:
        """The server's Table of a collection or of one object (a plain object or List
        from a server that makes no tables)."""
        path = self.path(info, namespace or "", name) if name else self._collection(info, namespace)
        params = _params(labelSelector=label_selector)
        table: Obj = self._send("GET", path, params=params, headers={"Accept": TABLE_ACCEPT})
        return table

    def create(self, obj: Mapping[str, Any], *, info: KindInfo | None = None) -> Obj:
        info = info or self.info_for(obj)
        body = self.with_default_namespace(info, obj)
        created: Obj = self._send("POST", self.path(info, _namespace_of(body)), json=body)
        return created

    def update(
        self,
        obj: Mapping[str, Any],
        *,
        info: KindInfo | None = None,
        subresource: str | None = None,
    ) -> Obj:
        """Replace an object; a metadata.resourceVersion given must be the stored one."""
        info = info or self.info_for(obj)
        body = self.with_default_namespace(info, obj)
        path = self.path(info, _namespace_of(body), body["metadata"]["name"], subresource)
        updated: Obj = self._send("PUT", path, json=body)
        return updated

    def patch(
        self,
        info: KindInfo,
        name: str,
        namespace: str,
        patch: Any,
        *,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
    ) -> Obj:
        headers = {"Content-Type": _PATCH_CONTENT_TYPES[patch_type]}
        path = self.path(info, namespace, name, subresource)
        patched: Obj = self._send("PATCH", path, content=json.dumps(patch), headers=headers)
        return patched

    def delete(
        self, info: KindInfo, name: str, namespace: str = "", *, propagation_policy: str = ""
    ) -> Obj:
        """The object as it was deleted (or, with finalizers left, as it now terminates),
        or the server's success Status. `propagation_policy`: DeleteOptions' (Background,
        Orphan, Foreground), else the server's default."""
        path = self.path(info, namespace, name)
        if not propagation_policy:
            deleted: Obj = self._send("DELETE", path)
            return deleted
        options = {"kind": "DeleteOptions", "apiVersion": "v1"}
        options["propagationPolicy"] = propagation_policy
        deleted = self._send("DELETE", path, json=options)
        return deleted

    def watch(
        self,
        info: KindInfo,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        table: bool = False,
    ) -> Watch:
        """Changes after resource_version (from now when None), as newline-delimited JSON
        events. With `table`, each object is a Table of its row."""
        params = _params(
            watch="true",
            resourceVersion=resource_version,
            labelSelector=label_selector,
            fieldSelector=field_selector,
            timeoutSeconds=timeout_seconds,
        )
        request = self._http.build_request(
            "GET",
            self._collection(info, namespace),
            params=params,
            headers={"Accept": TABLE_ACCEPT} if table else None,
            timeout=httpx.Timeout(self.timeout, read=None),
        )
        response = self._transmit(lambda: self._http.send(request, stream=True))
        if response.is_error:
            response.read()
            raise _error(response)
        return Watch(response)

    # plumbing

    def path(
        self, info: KindInfo, namespace: str = "", name: str = "", subresource: str | None = None
    ) -> str:
        """The URL path of an object (or, without a name, of its collection)."""
        path = self._collection(info, (namespace or self.namespace) if info.namespaced else None)
        if name:
            path += "/" + quote(name, safe="")
        if subresource:
            path += "/" + subresource
        return path

    def get_json(self, path: str, accept: str = "application/json") -> Any:
        return self._send("GET", path, headers={"Accept": accept})

    def get_raw(self, path: str) -> httpx.Response:
        """A non-resource path's answer (/readyz, /metrics) as it came."""
        response = self._transmit(lambda: self._http.get(path, headers={"Accept": "*/*"}))
        if response.is_error:
            raise _error(response)
        return response

    def _collection(self, info: KindInfo, namespace: str | None) -> str:
        root = f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"
        if info.namespaced and namespace:
            root += "/namespaces/" + quote(namespace, safe="")
        return f"{root}/{info.plural}"

    def with_default_namespace(self, info: KindInfo, obj: Mapping[str, Any]) -> Obj:
        """A shallow copy of obj; a namespaced one without a namespace gets ours."""
        body = dict(obj)
        metadata = dict(body.get("metadata") or {})
        if info.namespaced and not metadata.get("namespace"):
            metadata["namespace"] = self.namespace
        body["metadata"] = metadata
        return body

    def _send(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._transmit(lambda: self._http.request(method, path, **kwargs))
        if response.is_error:
            raise _error(response)
        return response.json()

    def _transmit(self, send: Callable[[], httpx.Response]) -> httpx.Response:
        try:
            return send()
        except httpx.TransportError as exc:
            raise _unreachable(self.server, exc) from None


def retry_on_conflict(update: Callable[[], T], *, attempts: int = 5, backoff: float = 0.01) -> T:
    """client-go's retry.RetryOnConflict: run `update` (which must read afresh) again
    while the server answers 409 Conflict, up to `attempts` times."""
    for _ in range(attempts - 1):
        try:
            return update()
        except Conflict:
            time.sleep(backoff)
    return update()


def _namespace_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def _params(**values: Any) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def _error(response: httpx.Response) -> ServerError:
    try:
        body = response.json()
    except ValueError:
        body = None
    return error_for_response(response.status_code, body, response.text)


def _unreachable(server: str, exc: httpx.TransportError) -> ServerUnreachable:
    """kubectl's wording for a server that does not answer."""
    if "refused" in str(exc).lower():
        host = httpx.URL(server).netloc.decode()
        return ServerUnreachable(
            f"The connection to the server {host} was refused - "
            "did you specify the right host or port?"
        )
    return ServerUnreachable(f"Unable to connect to the server: {exc}")
