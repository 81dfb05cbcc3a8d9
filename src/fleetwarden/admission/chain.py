"""One admission chain for the API server and the simulator: decode, default, validate.

First the object is decoded as the API server decodes it: a built-in kind by its plugin's
`decode` (its Go type), any other typed kind by its model; either way the fields its type
does not declare are dropped, and recorded on the request for field validation to report.

A plugin belongs to one kind and has a mutating half (upstream's defaulting and mutating
webhooks) and a validating half (the CRD schema's enums, patterns and ranges, and
upstream's validating webhooks). Every refusal is a 422 Invalid naming the fields at fault:
validation returns field errors; a mutating webhook that denies raises the request's
Invalid, ending admission there as upstream's denial does. The chain never changes what it
was given: it works on a copy, and a refused object leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

from fleetwarden.admission.undeclared import prune_undeclared
from fleetwarden.api.authentication import ADMIN, UserInfo
from fleetwarden.api.authorization import Attributes, Authorizer
from fleetwarden.api.errors import ErrorList, Invalid, NotFound
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY, Registry
from fleetwarden.semantics.validation import NameRule, validate_object_meta

DEFAULT_NAMESPACE = "default"

_M = TypeVar("_M", bound=Resource)


@dataclass(frozen=True)
class AdmissionConfig:
    """The hub settings admission reads (karmada-webhook's flags, the seeds' older ones)."""

    allow_no_execute_taint_policy: bool = False
    # Karmada <= v1.13 added 300 s NoExecute tolerations to every policy; off unless given.
    default_not_ready_toleration_seconds: int | None = None
    default_unreachable_toleration_seconds: int | None = None
    # OCM hub feature gate DefaultClusterSet (on by default): label unlabelled ManagedClusters.
    default_cluster_set: bool = True


class Operation(StrEnum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"


@dataclass
class Request:
    """What a plugin sees: the object being admitted (its own copy), the stored one on update."""

    obj: Any
    old: Any | None
    info: KindInfo
    now: datetime
    config: AdmissionConfig
    # The fields decoding (or a custom kind's schema) dropped from the object as given
    # (`spec.foo`), for field validation to report.
    pruned: list[str] = field(default_factory=list)
    # Who sends it, and what may decide what they may do (webhooks that ask, as OCM's do).
    user: UserInfo = ADMIN
    authorizer: Authorizer | None = None
    # The subresource an update is written through (status, approval), if any.
    subresource: str | None = None
    # What a webhook reads of the hub (upstream's read through its kube client).
    lookup: Lookup | None = None

    def stored(self, info: KindInfo, name: str, namespace: str = "") -> Mapping[str, Any] | None:
        """The stored object of that kind and name, None when there is none or nothing to
        read it from (the chain run without a store)."""
        return self.lookup(info, name, namespace) if self.lookup else None

    def allowed(self, attributes: Attributes) -> bool:
        """Whether the sender may do this too (a SubjectAccessReview, as a webhook asks);
        with no authorizer to ask, the sender may do anything."""
        return self.authorizer is None or self.authorizer.authorize(attributes).allowed

    @property
    def operation(self) -> Operation:
        return Operation.CREATE if self.old is None else Operation.UPDATE

    def of(self, model: type[_M]) -> _M:
        """The object, typed as the model its plugin was registered for."""
        assert isinstance(self.obj, model)
        return self.obj

    def invalid(self, errors: ErrorList) -> Invalid:
        """The 422 naming this object; a mutating webhook raises it to deny the request."""
        return Invalid(self.info.kind, self.info.group, self.obj.metadata.name, errors)


# A stored object by kind, name and namespace; None when there is none.
Lookup = Callable[[KindInfo, str, str], Mapping[str, Any] | None]


def lookup_in(get: Callable[[KindInfo, str, str], Mapping[str, Any]]) -> Lookup:
    """The Lookup of a store's `get`, which raises NotFound."""

    def lookup(info: KindInfo, name: str, namespace: str) -> Mapping[str, Any] | None:
        try:
            return get(info, name, namespace)
        except NotFound:
            return None

    return lookup


Mutate = Callable[[Request], None]
Validate = Callable[[Request], ErrorList]
# A validating webhook that asks what the sender may do: it raises the webhook's denial.
Authorize = Callable[[Request], None]
# The wire object as its Go type holds it, and the paths of the fields the type dropped;
# raises DecodeError for a value of the wrong type.
Decode = Callable[[Mapping[str, Any]], tuple[dict[str, Any], list[str]]]


@dataclass(frozen=True)
class Plugin:
    api_version: str
    kind: str
    mutate: Mutate | None = None
    validate: Validate | None = None
    # The kind's own metadata.name rule (its REST strategy's nameFn), if not a DNS subdomain.
    name_rule: NameRule | None = None
    # Checks of the sender's rights, made once the object is valid (the webhooks that send
    # SubjectAccessReviews, as OCM's registration webhooks do).
    authorize: Authorize | None = None
    decode: Decode | None = None


@dataclass
class AdmissionChain:
    registry: Registry = field(default_factory=lambda: REGISTRY)
    plugins: dict[tuple[str, str], list[Plugin]] = field(default_factory=dict)
    # Those of every kind a CustomResourceDefinition serves that has none of its own.
    custom: list[Plugin] = field(default_factory=list)

    def register(self, plugins: Iterable[Plugin]) -> None:
        for plugin in plugins:
            self.plugins.setdefault((plugin.api_version, plugin.kind), []).append(plugin)

    def admit(
        self,
        obj: Resource | Mapping[str, Any],
        old: Resource | None = None,
        *,
        now: datetime,
        config: AdmissionConfig | None = None,
        user: UserInfo = ADMIN,
        authorizer: Authorizer | None = None,
        lookup: Lookup | None = None,
    ) -> Resource:
        """The object as it would be stored, or Invalid naming every broken rule."""
        request = self.review(
            obj, old, now=now, config=config, user=user, authorizer=authorizer, lookup=lookup
        )
        admitted: Resource = request.obj
        return admitted

    def review(
        self,
        obj: Resource | Mapping[str, Any],
        old: Resource | None = None,
        *,
        now: datetime,
        config: AdmissionConfig | None = None,
        user: UserInfo = ADMIN,
        authorizer: Authorizer | None = None,
        subresource: str | None = None,
        lookup: Lookup | None = None,
    ) -> Request:
        """`admit`, handing back the request as admission left it: its `obj` the object as
        it would be stored (a mutating plugin may have replaced it), and what else the
        plugins recorded on it. Raises Invalid naming every broken rule, DecodeError (400)
        for a value its kind's type cannot hold, or a plugin's Forbidden for what the sender
        may not do."""
        data = obj if isinstance(obj, Mapping) else obj.to_dict()
        plugins = self._plugins(data)
        decode = next((p.decode for p in plugins if p.decode), None)
        pruned: list[str] = []
        if decode is not None:
            data, pruned = decode(data)
        typed = self.registry.decode(data)
        if decode is None:
            pruned = prune_undeclared(typed)
        info = self.registry.info(typed.api_version, typed.kind)
        if info.namespaced and not typed.metadata.namespace:
            typed.metadata.namespace = DEFAULT_NAMESPACE
        request = Request(
            typed, old, info, now, config or AdmissionConfig(), pruned,
            user=user, authorizer=authorizer, subresource=subresource, lookup=lookup,
        )  # fmt: skip
        for plugin in plugins:
            if plugin.mutate:
                plugin.mutate(request)
        name_rule = next((p.name_rule for p in plugins if p.name_rule), "subdomain")
        errors = validate_object_meta(
            request.obj.metadata, namespaced=info.namespaced, name_rule=name_rule
        )
        for plugin in plugins:
            if plugin.validate:
                errors += plugin.validate(request)
        if errors:
            raise request.invalid(errors)
        for plugin in plugins:
            if plugin.authorize:
                plugin.authorize(request)
        return request

    def _plugins(self, data: Mapping[str, Any]) -> list[Plugin]:
        """The plugins of the object's kind; none if it names no kind (decoding says so)."""
        api_version, kind = data.get("apiVersion"), data.get("kind")
        if not (isinstance(api_version, str) and api_version and isinstance(kind, str) and kind):
            return []
        info = self.registry.info(api_version, kind)
        return self.plugins.get((info.api_version, info.kind)) or (
            self.custom if info.custom is not None else []
        )
