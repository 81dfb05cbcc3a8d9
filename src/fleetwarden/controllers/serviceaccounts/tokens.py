"""kube-controller-manager's serviceaccount-token controller: a Secret of type
kubernetes.io/service-account-token, annotated with its account's name, is filled in with a
token of that account (the legacy kind: no expiry, valid while the Secret holds it), the
hub's CA and the namespace, and annotated with the account's uid; a token Secret whose
account is gone, or was made again since, is deleted. Tools that register a cluster by a
token Secret (Argo CD's `cluster add`) wait for this.
"""

from __future__ import annotations

import base64
import contextlib

from fleetwarden.api.errors import Conflict, NotFound
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.auth.serviceaccounts import TOKEN_SECRET_TYPE, ServiceAccountTokens
from fleetwarden.runtime.informer import split_key
from fleetwarden.runtime.manager import DONE, REQUEUE, Context, Controller, Result, Watches
from fleetwarden.store.interface import Obj

CONTROLLER = "serviceaccount-token-controller"
SECRET = REGISTRY.info("v1", "Secret")
SERVICE_ACCOUNT = REGISTRY.info("v1", "ServiceAccount")

# The annotations that name a token Secret's account, and the account it was filled for.
NAME = "kubernetes.io/service-account.name"
UID = "kubernetes.io/service-account.uid"
_BY_ACCOUNT = "TokenSecretsByServiceAccount"


def _account_of(secret: Resource) -> list[str]:
    """The key of the account a token Secret is for; none for another Secret."""
    wire = secret.to_dict()
    name = (secret.metadata.annotations or {}).get(NAME)
    if wire.get("type") != TOKEN_SECRET_TYPE or not name:
        return []
    return [f"{secret.metadata.namespace}/{name}"]


class TokensController:
    def __init__(self, tokens: ServiceAccountTokens, root_ca: bytes | None) -> None:
        self.tokens, self.root_ca = tokens, root_ca

    def controller(self) -> Controller:
        return Controller(
            name=CONTROLLER,
            watches=[Watches(SERVICE_ACCOUNT), Watches(SECRET, _account_of)],
            reconcile=self.reconcile,
            indexers={SECRET: {_BY_ACCOUNT: _account_of}},
        )

    def reconcile(self, key: str, ctx: Context) -> Result:
        namespace, name = split_key(key)
        account = self._account(ctx, namespace, name)
        secrets = ctx.cache.informer(SECRET).by_index(_BY_ACCOUNT, key)
        results = [self._sync(ctx, secret.to_dict(), account) for secret in secrets]
        return REQUEUE if REQUEUE in results else DONE

    def _account(self, ctx: Context, namespace: str, name: str) -> Obj | None:
        """The account, read live when the cache has none: a Secret made just after its
        account must not be taken for an orphan (upstream's fetchOnCacheMiss)."""
        cached = ctx.cache.informer(SERVICE_ACCOUNT).get(name, namespace)
        if cached is not None:
            return cached.to_dict()
        try:
            return ctx.store.get(SERVICE_ACCOUNT, name, namespace)
        except NotFound:
            return None

    def _sync(self, ctx: Context, secret: Obj, account: Obj | None) -> Result:
        meta = secret["metadata"]
        if meta.get("deletionTimestamp"):
            return DONE
        wanted_uid = (meta.get("annotations") or {}).get(UID)
        if account is None or (wanted_uid and wanted_uid != account["metadata"].get("uid")):
            with contextlib.suppress(NotFound):  # its account is gone: so is its token
                ctx.store.delete(SECRET, meta["name"], meta["namespace"])
            return DONE
        filled = self._filled(secret, account)
        if filled == secret:
            return DONE
        try:
            ctx.store.update(filled)
        except (Conflict, NotFound):
            return REQUEUE  # changed meanwhile: look again
        return DONE

    def _filled(self, secret: Obj, account: Obj) -> Obj:
        """The Secret with a token, the CA and the namespace where missing, and the uid."""
        meta = secret["metadata"]
        data = dict(secret.get("data") or {})
        if not data.get("token"):
            data["token"] = _encoded(self.tokens.legacy_token(account, meta["name"]))
        if self.root_ca is not None:
            data["ca.crt"] = base64.b64encode(self.root_ca).decode()
        data["namespace"] = _encoded(meta["namespace"])
        annotations = {**(meta.get("annotations") or {}), UID: account["metadata"]["uid"]}
        return {**secret, "metadata": {**meta, "annotations": annotations}, "data": data}


def _encoded(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def tokens_controller(tokens: ServiceAccountTokens, root_ca: bytes | None) -> Controller:
    return TokensController(tokens, root_ca).controller()
