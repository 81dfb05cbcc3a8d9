"""What a request asks to do, in authorization's terms, read from its method and path alone
as kube-apiserver's RequestInfoFactory reads them (so a path that names nothing served is
refused for lack of rights before it is found missing):

    /api/v1[/watch]/namespaces/{ns}/{resource}[/{name}[/{subresource}]]
    /apis/{group}/{version}[/watch]/{resource}[/{name}[/{subresource}]]

Any other path (discovery, /healthz, /openapi/v2...) is a non-resource request: its verb is
the method's, lower-cased.

The verb is also what the server serves: a request is a watch exactly when its verb is
`watch` (a GET of a collection with watch=true, or any request on a /watch/ path, which
only a GET may make); a GET of one object with watch=true is a get, as upstream."""

from __future__ import annotations

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.authorization import Attributes
from fleetwarden.semantics.selectors import Operator, SelectorError, parse_field_selector
from fleetwarden.server.http import Request
from fleetwarden.server.routes import NAMESPACE_SUBRESOURCES, group_version

_WRITE_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def request_attributes(user: UserInfo, request: Request) -> Attributes:
    parsed = group_version(request.path)
    if parsed is None or not parsed[2]:
        return Attributes(user, request.method.lower(), path=request.path, resource_request=False)
    group, version, parts = parsed
    watch = parts[0] == "watch"
    if watch:
        parts = parts[1:]
    namespace = ""
    if parts and parts[0] == "namespaces" and len(parts) > 1:
        namespace = parts[1]
        if len(parts) > 2 and parts[2] not in NAMESPACE_SUBRESOURCES:
            parts = parts[2:]
    resource = parts[0] if parts else ""
    name = parts[1] if len(parts) > 1 else ""
    subresource = parts[2] if len(parts) > 2 else ""
    verb = "watch" if watch else _verb(request, bool(name))
    if not name and verb in ("list", "watch") and not watch:
        name = _name_selected(request.param("fieldSelector"))
    return Attributes(
        user, verb, resource, group, namespace, name, subresource, api_version=version
    )


def _verb(request: Request, named: bool) -> str:
    method = request.method
    if method in ("GET", "HEAD"):
        if named:
            return "get"
        return "watch" if request.flag("watch") else "list"
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    return _WRITE_VERBS.get(method, method.lower())


def _name_selected(field_selector: str | None) -> str:
    """A list or watch of one name (`metadata.name=x`) is authorized as that name."""
    if not field_selector:
        return ""
    try:
        selector = parse_field_selector(field_selector)
    except SelectorError:
        return ""
    names = [
        req.value
        for req in selector.requirements
        if req.field == "metadata.name" and req.operator is Operator.EQUALS
    ]
    return names[0] if len(names) == 1 else ""
