"""Authentication and authorization over a hub's store: the RBAC authorizer kept up to date
with every committed write (a RoleBinding created is in force for the very next request),
and bootstrap tokens read from kube-system's Secrets. The API server and the simulator's
`as` share them."""

from __future__ import annotations

from fleetwarden.api import rbac
from fleetwarden.api.errors import NotFound
from fleetwarden.api.registry import REGISTRY
from fleetwarden.auth.authn import BootstrapTokens
from fleetwarden.auth.rbac import RBAC
from fleetwarden.runtime.clock import Clock
from fleetwarden.store.interface import EventType, Obj, Store, WatchEvent, collection_of

SECRET = REGISTRY.info("v1", "Secret")
KUBE_SYSTEM = "kube-system"
_RBAC_COLLECTIONS = {collection_of(info) for info in rbac.KINDS}


def rbac_authorizer(store: Store) -> RBAC:
    """An RBAC authorizer over the store's Roles and bindings, from now on."""
    authorizer = RBAC()

    def observe(event: WatchEvent) -> None:
        if event.collection in _RBAC_COLLECTIONS:
            authorizer.observe(event.collection, event.object, event.type is EventType.DELETED)

    store.subscribe(observe)  # first: a change made while listing is not missed
    for info in rbac.KINDS:
        for item in store.list(info).items:
            authorizer.observe(collection_of(info), item)
    return authorizer


def bootstrap_tokens(store: Store, clock: Clock) -> BootstrapTokens:
    def secret(name: str) -> Obj | None:
        try:
            return store.get(SECRET, name, KUBE_SYSTEM)
        except NotFound:
            return None

    return BootstrapTokens(secret, clock.now)
