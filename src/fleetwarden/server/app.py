"""The hub's Kubernetes-compatible API server, as a plain ASGI application.

`create_app(store, chain, clock)` serves every registered kind the way kube-apiserver
serves it: discovery, CRUD with admission, the status subresource, watch, Tables for
kubectl and OpenAPI documents, health and metrics; and with a chain over a hub's own
registry, the custom kinds its CustomResourceDefinitions serve, as they come and go. At `/`
it serves the dashboard's page (fleetwarden.dashboard.pages).
Blocking work (admission, the store) runs on a small thread pool; the event loop only
moves bytes, so a watch that waits costs no thread of the pool.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import uvicorn

from fleetwarden.admission.chain import AdmissionChain, AdmissionConfig
from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.authorization import Attributes
from fleetwarden.api.errors import BadRequest, StatusError
from fleetwarden.api.kinds import KindInfo, served
from fleetwarden.api.registry import Registry
from fleetwarden.auth import reviews
from fleetwarden.auth.bootstrap import JWKS, OPENID_CONFIGURATION
from fleetwarden.auth.refusals import forbidden
from fleetwarden.auth.serviceaccounts import ServiceAccountTokens
from fleetwarden.dashboard import pages
from fleetwarden.runtime.clock import Clock
from fleetwarden.server import discovery, openapi, output, protobuf
from fleetwarden.server.auditing import RequestAudit
from fleetwarden.server.delete_options import delete_options
from fleetwarden.server.http import (
    AGGREGATED_DISCOVERY,
    PLAIN_JSON,
    PLAIN_YAML,
    TABLE,
    MediaType,
    Request,
    Response,
    encode,
    read_body,
    respond,
    status_response,
    text,
)
from fleetwarden.server.namespaces import ensure_system_namespaces
from fleetwarden.server.patches import patch_type_of
from fleetwarden.server.requestinfo import request_attributes
from fleetwarden.server.resources import (
    ListOptions,
    Resources,
    WriteOptions,
    Written,
    addressed,
)
from fleetwarden.server.routes import PathNotFound, ResourcePath, group_version, resource_path
from fleetwarden.server.scale import SCALE
from fleetwarden.server.security import Security
from fleetwarden.server.tls import TLS, PeerCertificateProtocol
from fleetwarden.server.tokens import token_request
from fleetwarden.server.validation import FieldValidation
from fleetwarden.server.watch import WatchOptions, WatchSession
from fleetwarden.store.interface import Obj, Store

Scope = Mapping[str, Any]
Message = Mapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Metrics = Callable[[], bytes]
_T = TypeVar("_T")

log = logging.getLogger(__name__)

# How often a watch that asked for bookmarks gets one (kube-apiserver: about a minute).
BOOKMARK_INTERVAL = 60.0
# The threads that serve requests' blocking work (store reads and writes).
WORKERS = 4
_READ_OFFERS = (PLAIN_JSON, TABLE, PLAIN_YAML)
_OPENAPI_V2_OFFERS = (
    PLAIN_JSON,
    MediaType(protobuf.OPENAPI_V2),
    MediaType(protobuf.OPENAPI_V2_ACCEPTED),
)
_WRITE_OFFERS = (PLAIN_JSON, PLAIN_YAML)
_PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8"


class MethodNotAllowed(StatusError):
    code = 405
    reason = "MethodNotAllowed"

    def __init__(self) -> None:
        super().__init__("the server does not allow this method on the requested resource")


class App:
    """The ASGI application; see create_app."""

    def __init__(
        self,
        store: Store,
        chain: AdmissionChain,
        clock: Clock,
        *,
        ready: Callable[[], bool] | None = None,
        metrics: Metrics | None = None,
        admission: AdmissionConfig | None = None,
        bookmark_interval: float = BOOKMARK_INTERVAL,
        security: Security | None = None,
        service_accounts: ServiceAccountTokens | None = None,
    ) -> None:
        self.store, self.clock, self.registry = store, clock, chain.registry
        self.security = security or Security()
        self.service_accounts = service_accounts
        # Where the service account issuer's keys are announced (set once the hub's address
        # is known); no OIDC discovery without.
        self.jwks_uri: str | None = None
        self.resources = Resources(store, chain, clock, admission or AdmissionConfig())
        # The discovery documents, and the generation of the registry's custom kinds.
        self._discovery_of: tuple[int, discovery.Discovery] | None = None
        self.ready = ready or (lambda: True)
        self.metrics = metrics
        self.bookmark_interval = bookmark_interval
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="fleetwarden-api")
        self._watches: set[WatchSession] = set()
        self._closed = False
        ensure_system_namespaces(store)

    def close(self) -> None:
        """End every watch and refuse new ones; thread-safe. Requests under way finish."""
        self._closed = True
        for session in list(self._watches):
            session.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            # Who asks and whether they may come from the scope and headers alone: the body
            # is read only for a request allowed, so a stranger's costs nothing to refuse.
            request = Request.from_scope(scope)
            if pages.is_page_request(request.method, request.path):
                # The dashboard carries no data: it asks the API with the user's credentials.
                await _send(send, pages.page_response(request.path))
                return
            audit = RequestAudit(scope, request, self.security.audit)
            send = audit.recording(send)
            unread = _announces_body(request)
            try:
                user = audit.authenticated(*self.security.user_of(scope, request))
                attributes = self._authorize(request, user, audit)
                request.body = await read_body(scope, receive)
                unread = False
                await self._serve(request, attributes, user, receive, send)
            except StatusError as exc:
                await _send(send, _unread(status_response(exc), unread))
            except Exception as exc:
                log.exception("%s %s", request.method, request.path)
                error = StatusError(f"Internal error occurred: {exc}")
                await _send(send, _unread(status_response(error), unread))
            finally:
                audit.complete()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.close()
                self._pool.shutdown(wait=False, cancel_futures=True)
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _authorize(self, request: Request, user: UserInfo, audit: RequestAudit) -> Attributes:
        """What the request asks, if the user may; 403 otherwise."""
        attributes = request_attributes(user, request)
        decision = self.security.authorizer.authorize(attributes)
        audit.authorized(attributes, decision)
        if not decision.allowed:
            raise forbidden(attributes, decision.reason)
        return attributes

    async def _serve(
        self,
        request: Request,
        attributes: Attributes,
        user: UserInfo,
        receive: Receive,
        send: Send,
    ) -> None:
        parsed = group_version(request.path)
        if parsed is None:
            await _send(send, self._plain(request))
            return
        group, version, segments = parsed
        if not segments:
            await _send(send, self._group_version(group, version))
            return
        target = resource_path(group, version, segments, self.registry)
        # One decision of what a watch is, the one authorized: a GET of a collection with
        # watch=true, or any request on a legacy /watch/ path. A named GET with watch=true
        # is a get, as kube-apiserver serves it.
        if attributes.verb == "watch":
            await self._watch(request, target, receive, send)
            return
        await _send(send, await self._run(lambda: self._resource(request, target, user)))

    @property
    def discovery(self) -> discovery.Discovery:
        """The documents for the kinds served now; rebuilt after the custom kinds change."""
        generation = self.registry.generation
        built = self._discovery_of
        if built is None or built[0] != generation:
            built = self._discovery_of = (generation, discovery.build(self.registry))
        return built[1]

    async def _run(self, call: Callable[[], _T]) -> _T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    # non-resource paths ------------------------------------------------------------------

    def _plain(self, request: Request) -> Response:
        path = request.path.rstrip("/") or "/"
        if path in ("/healthz", "/livez"):
            return text(200, "ok")
        if path == "/readyz":
            return text(200, "ok") if self.ready() else text(500, "readyz check failed")
        if path == "/version":
            return respond(200, discovery.version_info())
        if path == "/metrics" and self.metrics is not None:
            return Response(200, self.metrics(), _PROMETHEUS)
        if path in (OPENID_CONFIGURATION, JWKS) and self.service_accounts is not None:
            return self._issuer_discovery(path)
        documents = self.discovery
        if path == "/apis":
            return self._discovery(request, documents.group_list, documents.aggregated_groups)
        if path == "/api":
            return self._discovery(request, documents.api_versions, documents.aggregated_core)
        if path == "/openapi/v2":
            if request.accept(_OPENAPI_V2_OFFERS) is PLAIN_JSON:
                return respond(200, openapi.openapi_v2(self.registry))
            return Response(200, openapi.openapi_v2_protobuf(self.registry), protobuf.OPENAPI_V2)
        if path.startswith("/openapi/"):
            request.accept((PLAIN_JSON,))
            document = _openapi(path, self.registry)
            if document is not None:
                return respond(200, document)
        if path.startswith("/apis/") and path.count("/") == 2:
            group = documents.groups.get(path.removeprefix("/apis/"))
            if group is not None:
                return respond(200, group)
        raise PathNotFound()

    def _issuer_discovery(self, path: str) -> Response:
        """The service account issuer's OIDC discovery document and its keys, at `jwks_uri`
        (where the hub is reached: never from a request's Host, which a shared cache would
        keep for everyone)."""
        assert self.service_accounts is not None
        configuration = None
        if self.jwks_uri is not None:
            configuration = self.service_accounts.openid_configuration(self.jwks_uri)
        if configuration is None:
            raise PathNotFound()
        cached = [("cache-control", "public, max-age=3600")]
        if path == JWKS:
            keys = encode({"keys": [self.service_accounts.key.jwk()]})
            return Response(200, keys, "application/jwk-set+json", cached)
        return Response(200, encode(configuration), "application/json", cached)

    def _discovery(
        self, request: Request, legacy: dict[str, Any], aggregated: dict[str, Any]
    ) -> Response:
        media = request.accept((PLAIN_JSON, AGGREGATED_DISCOVERY))
        return respond(200, aggregated if media is AGGREGATED_DISCOVERY else legacy, media)

    def _group_version(self, group: str, version: str) -> Response:
        resources = self.discovery.resource_lists.get((group, version))
        if resources is None:
            raise PathNotFound()
        return respond(200, resources)

    # resources ---------------------------------------------------------------------------

    def _resource(self, request: Request, target: ResourcePath, user: UserInfo) -> Response:
        info, namespace, name = target.info, target.namespace, target.name
        method = request.method
        if not info.stored:
            return self._review(request, target, user)
        if target.subresource == "token":
            return self._token(request, target)
        resources = self.resources.as_user(user, self.security.authorizer)
        if method == "GET":
            media = request.accept(_READ_OFFERS)
            if name is None:
                listed = self.resources.list(info, namespace, _list_options(request))
                return output.respond_list(info, listed, media, request, self.clock.now())
            obj = self.resources.get(info, namespace, name, target.subresource)
            shown = SCALE if target.subresource == "scale" else info
            return output.respond_object(shown, obj, media, request, self.clock.now())
        media = request.accept(_WRITE_OFFERS)
        if method == "POST" and name is None:
            if info.namespaced and namespace is None:
                raise MethodNotAllowed()
            written = resources.create(info, namespace, request.document(), _write(request))
            return _written(201, written, media)
        if method == "PUT" and name is not None:
            written = resources.update(
                info, namespace, name, target.subresource, request.document(), _write(request)
            )
            return _written(200, written, media)
        if method == "PATCH" and name is not None:
            patch_type = patch_type_of(request.content_type)
            written = resources.patch(
                info, namespace, name, target.subresource, request.body, patch_type,
                _write(request),
            )  # fmt: skip
            return _written(200, written, media)
        if method == "DELETE" and target.subresource is None:
            options = delete_options(request)
            if name is None:
                deleted = resources.delete_collection(
                    info, namespace, _list_options(request), options
                )
            else:
                deleted = resources.delete(info, namespace, name, options)
            return respond(200, deleted, media)
        raise MethodNotAllowed()

    def _token(self, request: Request, target: ResourcePath) -> Response:
        """A TokenRequest: created, answered with a token, never stored."""
        if self.service_accounts is None:
            raise PathNotFound()  # no signing key: kube-apiserver serves no token either
        if request.method != "POST" or target.name is None or target.namespace is None:
            raise MethodNotAllowed()
        media = request.accept(_WRITE_OFFERS)
        answer = token_request(
            self.service_accounts, self.store, target.namespace, target.name, request.document()
        )
        return respond(201, answer, media)

    def _review(self, request: Request, target: ResourcePath, user: UserInfo) -> Response:
        """An access review: created, answered, never stored."""
        if request.method != "POST" or target.name is not None:
            raise MethodNotAllowed()
        media = request.accept(_WRITE_OFFERS)
        body = addressed(target.info, target.namespace, None, request.document())
        review = self.registry.decode(body)
        return respond(
            201,
            reviews.answer(
                target.info, review, user, self.security.authorizer, self.security.authenticator
            ),
            media,
        )

    async def _watch(
        self, request: Request, target: ResourcePath, receive: Receive, send: Send
    ) -> None:
        # Only a GET watches; there is no watch of a subresource, nor of a kind never stored.
        if request.method != "GET" or target.subresource is not None or not target.info.stored:
            raise MethodNotAllowed()
        if self._closed:
            raise StatusError("the server is shutting down")
        media = request.accept(_READ_OFFERS)
        render = output.renderer(target.info, media, request, self.clock.now)
        if target.info.conversion is not None:
            render = _converting(target.info, render)
        options = _watch_options(request, target)
        session = await self._run(
            lambda: WatchSession(self.store, target.info, target.namespace, options)
        )
        self._watches.add(session)
        try:
            if self._closed:
                session.close()
            headers = [(b"content-type", str(media).encode()), (b"cache-control", b"no-cache")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await session.stream(send, receive, encode, render, self.bookmark_interval)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass  # the client went away mid-write
        except Exception:
            # The status line is sent: all that is left is to end the stream.
            log.exception("watch %s", request.path)
        finally:
            session.close()
            self._watches.discard(session)


def _converting(info: KindInfo, render: Callable[[Obj], Any]) -> Callable[[Obj], Any]:
    """A watch of a converted version: each stored object converted before it is sent."""
    return lambda obj: render(served(info, obj))


def _openapi(path: str, registry: Registry) -> dict[str, Any] | None:
    """/openapi/v3, /openapi/v3/api/v1, /openapi/v3/apis/{group}/{version}."""
    if path == "/openapi/v3":
        return openapi.openapi_v3_index(registry)
    parsed = group_version(path.removeprefix("/openapi/v3"))
    if parsed is None or parsed[2]:
        return None
    return openapi.openapi_v3(parsed[0], parsed[1], registry)


def create_app(
    store: Store,
    chain: AdmissionChain,
    clock: Clock,
    *,
    ready: Callable[[], bool] | None = None,
    metrics: Metrics | None = None,
    admission: AdmissionConfig | None = None,
    bookmark_interval: float = BOOKMARK_INTERVAL,
    security: Security | None = None,
    service_accounts: ServiceAccountTokens | None = None,
) -> App:
    """The API server over the store: requests authenticated and authorized by `security`
    (default: the insecure port's, every request an administrator's), admitted by `chain`
    (with `admission`'s settings) at `clock`'s time; `/readyz` asks `ready`, `/metrics`
    serves `metrics()`; ServiceAccounts' tokens are issued by `service_accounts` (the
    TokenRequest API is not served without). The kinds served are those of the chain's
    registry (the store's should be the same). Creates the system namespaces (default,
    kube-system, kube-public) if missing."""
    return App(
        store,
        chain,
        clock,
        ready=ready,
        metrics=metrics,
        admission=admission,
        bookmark_interval=bookmark_interval,
        security=security,
        service_accounts=service_accounts,
    )


# request parsing -------------------------------------------------------------------------


def _list_options(request: Request) -> ListOptions:
    return ListOptions(
        label_selector=request.param("labelSelector") or None,
        field_selector=request.param("fieldSelector") or None,
        limit=request.integer("limit"),
        continue_=request.param("continue") or None,
    )


def _watch_options(request: Request, target: ResourcePath) -> WatchOptions:
    field_selector = request.param("fieldSelector") or None
    if target.name is not None:  # a watch of one object is a watch of its name
        by_name = f"metadata.name={target.name}"
        field_selector = f"{field_selector},{by_name}" if field_selector else by_name
    timeout = request.integer("timeoutSeconds")
    return WatchOptions(
        resource_version=request.param("resourceVersion"),
        label_selector=request.param("labelSelector") or None,
        field_selector=field_selector,
        timeout=float(timeout) if timeout is not None else None,
        bookmarks=request.flag("allowWatchBookmarks"),
    )


def _write(request: Request) -> WriteOptions:
    return WriteOptions(
        dry_run=_dry_run(request),
        field_validation=FieldValidation.parse(request.param("fieldValidation")),
    )


def _dry_run(request: Request) -> bool:
    values = request.params("dryRun")
    for value in values:
        if value != "All":
            raise BadRequest(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return bool(values)


def _written(status: int, written: Written, media: MediaType) -> Response:
    response = respond(status, written.object, media)
    response.headers += [("warning", _warning(w)) for w in written.warnings]
    return response


def _warning(message: str) -> str:
    """An RFC 7234 warning header value, as the API server sends field warnings."""
    escaped = message.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def _announces_body(request: Request) -> bool:
    length = request.headers.get("content-length")
    return "transfer-encoding" in request.headers or (length is not None and length != "0")


def _unread(response: Response, unread: bool) -> Response:
    """The response, closing the connection if the request's body goes unread: nothing
    more is read from a client refused (or sent too much) before its body was."""
    if unread:
        response.headers.append(("connection", "close"))
    return response


async def _send(send: Send, response: Response) -> None:
    await send(
        {"type": "http.response.start", "status": response.status,
         "headers": response.raw_headers()}
    )  # fmt: skip
    await send({"type": "http.response.body", "body": response.body})


class Server:
    """The app served by uvicorn on a thread of its own, on `host` and `port` (0: a free
    one), over TLS when given; for tests and `fleetwarden up`. stop() ends every watch,
    then the server."""

    def __init__(
        self, app: App, host: str = "127.0.0.1", port: int = 0, tls: TLS | None = None
    ) -> None:
        self.app, self.host, self.port, self.tls = app, host, port, tls
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, timeout_graceful_shutdown=5,
            http=PeerCertificateProtocol,
            ssl_context_factory=(lambda _config, _default: tls.context()) if tls else None,
        )  # fmt: skip
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> str:
        """host:port, an IPv6 host in brackets."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.address}"

    def start(self, timeout: float = 10.0) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            # The address, and why in Go's words: "address already in use".
            reason = (exc.strerror or str(exc)).lower()
            raise OSError(exc.errno, f"failed to listen on {self.address}: {reason}") from None
        self.port = sock.getsockname()[1]
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[sock])),
            name="fleetwarden-api-server",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the API server did not start on {self.url}")
            time.sleep(0.01)

    def stop(self, timeout: float = 10.0) -> None:
        self.app.close()
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
