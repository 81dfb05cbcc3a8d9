"""Authentication and authorization over a hub's store: the RBAC authorizer kept up to date
with every committed write (a RoleBinding created is in force for the very next request),
and bootstrap tokens checked against kube-system's Secrets as they are committed (a token
costs no store read, however many a client makes up). The API server and the simulator's
`as` share them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from fleetwarden.api import rbac
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY
from fleetwarden.auth.authn import BOOTSTRAP_SECRET_PREFIX, BootstrapTokens
from fleetwarden.auth.rbac import RBAC
from fleetwarden.runtime.clock import Clock
from fleetwarden.store.interface import EventType, Obj, Store, WatchEvent, collection_of

SECRET = REGISTRY.info("v1", "Secret")
KUBE_SYSTEM = "kube-system"

# What a follower is handed: the collection, the object, and whether it was deleted.
Take = Callable[[str, Obj, bool], None]


def follow(store: Store, kinds: Sequence[KindInfo], take: Take, namespace: str = "") -> None:
    """Hand `take` the objects of these kinds (in the namespace, if one is given) now in the
    store, then every change to them in commit order, as an informer does: subscribed
    before listing, so no change is missed, and a change the list already holds is skipped.
    Changes wait while the list is taken, so none is overwritten by an older listed state."""
    lock = threading.Lock()
    listed: dict[str, int] = {}  # each collection's list resourceVersion

    def handle(event: WatchEvent) -> None:
        if event.collection not in collections:
            return
        if namespace and event.object["metadata"].get("namespace") != namespace:
            return
        with lock:
            if event.resource_version > listed[event.collection]:
                take(event.collection, event.object, event.type is EventType.DELETED)

    collections = {collection_of(info) for info in kinds}
    with lock:
        store.subscribe(handle)
        for info in kinds:
            result = store.list(info, namespace or None)
            listed[collection_of(info)] = int(result.resource_version)
            for item in result.items:
                take(collection_of(info), item, False)


def rbac_authorizer(store: Store) -> RBAC:
    """An RBAC authorizer over the store's Roles and bindings, from now on."""
    authorizer = RBAC()
    follow(store, rbac.KINDS, authorizer.observe)
    return authorizer


def bootstrap_tokens(store: Store, clock: Clock) -> BootstrapTokens:
    """The bootstrap token authenticator over kube-system's token Secrets, from now on."""
    secrets: dict[str, Obj] = {}

    def take(collection: str, obj: Obj, deleted: bool) -> None:
        name = obj["metadata"]["name"]
        if not name.startswith(BOOTSTRAP_SECRET_PREFIX):
            return
        if deleted:
            secrets.pop(name, None)
        else:
            secrets[name] = obj

    follow(store, [SECRET], take, KUBE_SYSTEM)
    return BootstrapTokens(secrets.get, clock.now)
