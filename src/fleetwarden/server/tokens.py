"""The TokenRequest API: POST .../serviceaccounts/{name}/token, as kube-apiserver's TokenREST
answers it (`kubectl create token`). Nothing is stored: the answer carries a token signed
for the account (auth/serviceaccounts), and its expiry.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from fleetwarden.admission.builtin.go_types import decoder
from fleetwarden.api.errors import BadRequest, Conflict, Invalid, Path
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import format_time
from fleetwarden.api.registry import REGISTRY
from fleetwarden.auth.serviceaccounts import BOUND_KINDS, ServiceAccountTokens
from fleetwarden.store.interface import Obj, Store

GROUP, KIND = "authentication.k8s.io", "TokenRequest"
SERVICE_ACCOUNT = REGISTRY.info("v1", "ServiceAccount")
DEFAULT_SECONDS = 3600  # SetDefaults_TokenRequestSpec
MIN_SECONDS, MAX_SECONDS = 10 * 60, 1 << 32
_decode = decoder(KIND, "v1", "AuthenticationV1TokenRequest")


def token_request(
    tokens: ServiceAccountTokens, store: Store, namespace: str, name: str, body: Any
) -> Obj:
    """The TokenRequest answered: its spec defaulted, its status the token."""
    if not isinstance(body, dict):
        raise BadRequest(f"the body of the request must be a {KIND} object")
    request, _pruned = _decode(body)
    meta = request.get("metadata") or {}
    _check_address(meta, name, namespace)
    account = store.get(SERVICE_ACCOUNT, name, namespace)
    spec = dict(request.get("spec") or {})
    spec["audiences"] = spec.get("audiences") or list(tokens.audiences)
    spec.setdefault("expirationSeconds", DEFAULT_SECONDS)
    _check_expiration(spec["expirationSeconds"])
    bound = _bound(store, namespace, name, spec.get("boundObjectRef"))
    seconds = spec["expirationSeconds"]
    token, expiry = tokens.issue(account, spec["audiences"], seconds, bound)
    issued = expiry - timedelta(seconds=seconds)  # the token's iat: one reading of the clock
    return {
        "kind": KIND,
        "apiVersion": f"{GROUP}/v1",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": format_time(issued),
        },
        "spec": spec,
        "status": {"token": token, "expirationTimestamp": format_time(expiry)},
    }


def _check_address(meta: Mapping[str, Any], name: str, namespace: str) -> None:
    """A name or namespace given in the body must be the URL's."""
    for field, wanted, noun in (("name", name, "name"), ("namespace", namespace, "namespace")):
        given = meta.get(field)
        if given and given != wanted:
            detail = f"must match the service account {noun} if specified"
            raise Invalid(KIND, GROUP, name, [Path("metadata").child(field).invalid(given, detail)])


def _check_expiration(seconds: int) -> None:
    """ValidateTokenRequest (whose refusal names no object)."""
    path = Path("spec.expirationSeconds")
    if seconds < MIN_SECONDS:
        error = path.invalid(seconds, "may not specify a duration less than 10 minutes")
        raise Invalid(KIND, GROUP, "", [error])
    if seconds > MAX_SECONDS:
        error = path.invalid(seconds, "may not specify a duration larger than 2^32 seconds")
        raise Invalid(KIND, GROUP, "", [error])


def _bound(
    store: Store, namespace: str, account: str, ref: Mapping[str, Any] | None
) -> tuple[str, Obj] | None:
    """The object a token is bound to (a Secret, a Pod of the account, a Node), as it is
    now; the uid the reference gives must be its."""
    if not ref:
        return None
    api_version, kind, name = ref.get("apiVersion", ""), ref.get("kind", ""), ref.get("name", "")
    if api_version != "v1" or kind not in BOUND_KINDS:
        group, _, version = api_version.rpartition("/")
        raise BadRequest(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
    info: KindInfo = REGISTRY.info("v1", kind)
    obj = store.get(info, name, namespace if info.namespaced else "")
    if kind == "Pod" and (obj.get("spec") or {}).get("serviceAccountName") != account:
        raise BadRequest(
            f'cannot bind token for serviceaccount "{account}" to pod running with different '
            "serviceaccount name."
        )
    uid = ref.get("uid")
    if uid and uid != obj["metadata"].get("uid"):
        raise Conflict(
            kind, "", name,
            f"the UID in the bound object reference ({uid}) does not match the UID in record. "
            "The object might have been deleted and then recreated",
        )  # fmt: skip
    return kind, obj
