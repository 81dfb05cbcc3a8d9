"""A refused request, in kube-apiserver's words (its responsewriters.Forbidden)."""

from __future__ import annotations

import json

from fleetwarden.api.authorization import Attributes
from fleetwarden.api.errors import Forbidden


def forbidden(attributes: Attributes, reason: str) -> Forbidden:
    """responsewriters.Forbidden: `User "x" cannot get resource "y" in API group "" in the
    namespace "z"`, then the authorizer's reason if it gave one."""
    message = _forbidden_message(attributes)
    message = message.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if reason:
        message = f"{message}: {reason}"
    return Forbidden(attributes.resource, attributes.api_group, attributes.name, message)


def _forbidden_message(attributes: Attributes) -> str:
    user = json.dumps(attributes.user.name)
    if not attributes.resource_request:
        return f"User {user} cannot {attributes.verb} path {json.dumps(attributes.path)}"
    resource = attributes.resource
    if attributes.subresource:
        resource = f"{resource}/{attributes.subresource}"
    where = (
        f"in the namespace {json.dumps(attributes.namespace)}"
        if attributes.namespace
        else "at the cluster scope"
    )
    return (
        f"User {user} cannot {attributes.verb} resource {json.dumps(resource)} in API group "
        f"{json.dumps(attributes.api_group)} {where}"
    )
