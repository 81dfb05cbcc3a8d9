"""Discovery: the resource types a server serves, and kubectl's way of naming them.

`clusters`, `cluster`, `Cluster`, `clusters.cluster.karmada.io`,
`clusters.v1alpha1.cluster.karmada.io` and a short name such as `mcl` or `deploy` all
name a resource type. Where two groups serve the same name, the group the server lists
first wins, and within a group its preferred version, as kubectl's RESTMapper decides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from fleetwarden.api.kinds import KindInfo
from fleetwarden.client.errors import KindNotFound, ResourceTypeNotFound

if TYPE_CHECKING:
    from fleetwarden.api.meta import Resource

GetJson = Callable[[str, str], Any]  # (path, Accept header) -> the JSON document
# As kubectl asks: the aggregated discovery documents, or the legacy ones.
AGGREGATED_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
)


class Discovery:
    """The server's resource types, read on first use; read again when a type is not found
    among them (one served since: a CRD's), as kubectl's deferred RESTMapper does."""

    def __init__(self, get_json: GetJson) -> None:
        self._get_json = get_json
        self._kinds: list[KindInfo] | None = None

    def kinds(self) -> list[KindInfo]:
        """Every resource type (subresources left out): preferred versions first."""
        if self._kinds is None:
            self._kinds = list(self._discover())
        return self._kinds

    def resolve(self, resource: str) -> KindInfo:
        """The resource type a user means by `resource`."""
        return self._found(lambda: self._resolve(resource))

    def for_kind(self, api_version: str, kind: str) -> KindInfo:
        """The resource type serving a manifest's apiVersion and kind."""
        return self._found(lambda: self._for_kind(api_version, kind))

    def _found(self, find: Callable[[], KindInfo]) -> KindInfo:
        read_before = self._kinds is not None
        try:
            return find()
        except (ResourceTypeNotFound, KindNotFound):
            if not read_before:
                raise
            self._kinds = None
            return find()

    def _resolve(self, resource: str) -> KindInfo:
        name = resource.lower()
        kinds = self.kinds()
        # kubectl's shortcut expander runs first: a short name wins over everything.
        for info in kinds:
            if name in info.short_names:
                return info
        for plural, version, group in _interpretations(name):
            for info in kinds:
                if (
                    plural in (info.plural, info.singular)
                    and group in ("", info.group)
                    and version in ("", info.version)
                ):
                    return info
        raise ResourceTypeNotFound(resource)

    def _for_kind(self, api_version: str, kind: str) -> KindInfo:
        for info in self.kinds():
            if info.api_version == api_version and info.kind == kind:
                return info
        raise KindNotFound(kind, api_version)

    def _discover(self) -> Iterator[KindInfo]:
        core = self._get_json("/api", AGGREGATED_ACCEPT)
        named = self._get_json("/apis", AGGREGATED_ACCEPT)
        if named.get("kind") == "APIGroupDiscoveryList":
            versions = [*_aggregated(core), *_aggregated(named)]
        else:
            versions = self._legacy(core, named)
        for preferred in (True, False):
            for is_preferred, kinds in versions:
                if is_preferred == preferred:
                    yield from kinds

    def _legacy(self, core: Mapping[str, Any], named: Mapping[str, Any]) -> list[_Versions]:
        """One APIResourceList per group version, as servers without aggregated
        discovery serve them."""
        listed = [("", v, i == 0) for i, v in enumerate(core.get("versions") or [])]
        for group in named.get("groups") or []:
            versions = [v["version"] for v in group.get("versions") or []]
            first = (group.get("preferredVersion") or {}).get("version") or versions[0]
            listed.extend((group["name"], v, v == first) for v in versions)
        return [
            (
                preferred,
                list(
                    _listed(
                        group, version, self._get_json(_path(group, version), "application/json")
                    )
                ),
            )
            for group, version, preferred in listed
        ]


# Whether a group version is its group's preferred one, and the kinds it serves.
_Versions = tuple[bool, list[KindInfo]]


def _path(group: str, version: str) -> str:
    return f"/apis/{group}/{version}" if group else f"/api/{version}"


def _interpretations(name: str) -> list[tuple[str, str, str]]:
    """schema.ParseResourceArg: (resource, version, group) readings, most specific first."""
    resource, _, rest = name.partition(".")
    if not rest:
        return [(resource, "", "")]
    readings = []
    version, _, group = rest.partition(".")
    if group:
        readings.append((resource, version, group))
    readings.append((resource, "", rest))
    return readings


def _aggregated(document: Mapping[str, Any]) -> Iterator[_Versions]:
    """apidiscovery.k8s.io/v2: every group's versions, preferred first, in one document."""
    for item in document.get("items") or []:
        group = (item.get("metadata") or {}).get("name", "")
        for index, version in enumerate(item.get("versions") or []):
            yield (
                index == 0,
                [
                    _kind_info(
                        group,
                        version["version"],
                        resource["responseKind"]["kind"],
                        resource["resource"],
                        resource.get("scope") == "Namespaced",
                        resource,
                        has_status=any(
                            sub.get("subresource") == "status"
                            for sub in resource.get("subresources") or []
                        ),
                    )
                    for resource in version.get("resources") or []
                ],
            )


def _listed(group: str, version: str, resource_list: Mapping[str, Any]) -> Iterator[KindInfo]:
    """The kinds of a legacy APIResourceList; its subresources are entries `plural/sub`."""
    entries = resource_list.get("resources") or []
    names = {entry.get("name", "") for entry in entries}
    for entry in entries:
        plural = entry.get("name", "")
        if "/" not in plural:
            yield _kind_info(
                group,
                version,
                entry["kind"],
                plural,
                bool(entry.get("namespaced")),
                entry,
                has_status=f"{plural}/status" in names,
            )


def _kind_info(
    group: str,
    version: str,
    kind: str,
    plural: str,
    namespaced: bool,
    entry: Mapping[str, Any],
    *,
    has_status: bool,
) -> KindInfo:
    """A served resource type, typed by the registry's model when we know the kind."""
    return KindInfo(
        group,
        version,
        kind,
        plural,
        namespaced,
        partial(_registry_model, f"{group}/{version}" if group else version, kind),
        tuple(entry.get("shortNames") or ()),
        tuple(entry.get("categories") or ()),
        has_status=has_status,
    )


def _registry_model(api_version: str, kind: str) -> type[Resource]:
    """The registry's model of a kind, or Unstructured: imported only when asked for."""
    from fleetwarden.api import core
    from fleetwarden.api.registry import REGISTRY

    known = REGISTRY.get(api_version, kind)
    return known.model if known else core.Unstructured
