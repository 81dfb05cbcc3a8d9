"""kube-controller-manager's tokencleaner: a bootstrap token's Secret (kube-system,
`bootstrap-token-<id>`, of the bootstrap token type) is deleted once its expiration
passes, so the tokens `fleetwarden up` and `fleetwarden token create` make do not pile up."""

from __future__ import annotations

import contextlib

from fleetwarden.api.errors import NotFound
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.auth.authn import BOOTSTRAP_SECRET_PREFIX, BOOTSTRAP_SECRET_TYPE, expiration_of
from fleetwarden.runtime.informer import object_key, split_key
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches, requeue_after

CONTROLLER = "tokencleaner"
SECRET = REGISTRY.info("v1", "Secret")
NAMESPACE = "kube-system"


def _token_secret(secret: Resource) -> list[str]:
    meta = secret.metadata
    is_token = meta.namespace == NAMESPACE and meta.name.startswith(BOOTSTRAP_SECRET_PREFIX)
    return [object_key(secret)] if is_token else []


def reconcile(key: str, ctx: Context) -> Result:
    namespace, name = split_key(key)
    secret = ctx.cache.informer(SECRET).get(name, namespace)
    if secret is None or secret.metadata.deletion_timestamp is not None:
        return DONE
    wire = secret.to_dict()
    expiration = expiration_of(wire)
    if wire.get("type") != BOOTSTRAP_SECRET_TYPE or expiration is None:
        return DONE
    left = expiration - ctx.clock.now()
    if left.total_seconds() > 0:
        return requeue_after(left)
    with contextlib.suppress(NotFound):  # deleted meanwhile
        ctx.store.delete(SECRET, name, namespace)
    return DONE


def token_cleaner_controller() -> Controller:
    return Controller(
        name=CONTROLLER, watches=[Watches(SECRET, _token_secret)], reconcile=reconcile
    )
