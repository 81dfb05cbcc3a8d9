"""API discovery: what kubectl and client libraries read to map kinds to URLs.

Both forms are served: the legacy one (`/api`, `/apis`, then one APIResourceList per
group version) and the aggregated one (apidiscovery.k8s.io/v2: every group's resources in
one answer to `/api` and one to `/apis`), which kubectl asks for first. Every document is
built from the kind registry, again whenever the custom kinds it serves change.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fleetwarden import __version__
from fleetwarden.api.kinds import KindInfo, version_priority
from fleetwarden.api.registry import REGISTRY, Registry

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
# A custom resource whose definition is being deleted: no new objects, no changes.
TERMINATING_VERBS = ["delete", "deletecollection", "get", "list", "watch"]
STATUS_VERBS = ["get", "patch", "update"]
# The Kubernetes release whose API this server speaks (kubectl warns past one minor of skew).
KUBE_VERSION = (1, 32, 0)


@dataclass(frozen=True)
class Discovery:
    """Every discovery document, keyed the way the server looks them up."""

    api_versions: dict[str, Any]
    group_list: dict[str, Any]
    groups: dict[str, dict[str, Any]]
    resource_lists: dict[tuple[str, str], dict[str, Any]]
    aggregated_core: dict[str, Any]
    aggregated_groups: dict[str, Any]


def build(registry: Registry = REGISTRY) -> Discovery:
    by_group: dict[str, dict[str, list[KindInfo]]] = {}
    for info in sorted(registry.kinds(), key=lambda i: i.plural):
        by_group.setdefault(info.group, {}).setdefault(info.version, []).append(info)
    versions = {
        group: sorted(kinds_by_version, key=version_priority)
        for group, kinds_by_version in by_group.items()
    }
    named = sorted(g for g in by_group if g)
    groups = {g: _api_group(g, versions[g]) for g in named}
    return Discovery(
        api_versions={"kind": "APIVersions", "versions": versions.get("", [])},
        group_list={"kind": "APIGroupList", "apiVersion": "v1", "groups": list(groups.values())},
        groups=groups,
        resource_lists={
            (g, v): _resource_list(g, v, kinds)
            for g, kinds_by_version in by_group.items()
            for v, kinds in kinds_by_version.items()
        },
        aggregated_core=_aggregated([""] if "" in by_group else [], by_group, versions),
        aggregated_groups=_aggregated(named, by_group, versions),
    )


def version_info() -> dict[str, str]:
    """/version: a Kubernetes release kubectl accepts, marked as this server's build."""
    major, minor, patch = KUBE_VERSION
    return {
        "major": str(major),
        "minor": str(minor),
        "gitVersion": f"v{major}.{minor}.{patch}+fleetwarden-{__version__}",
        "gitCommit": "",
        "gitTreeState": "",
        "buildDate": "",
        "goVersion": "",
        "compiler": "",
        "platform": "linux/amd64",
    }


def _group_version(group: str, version: str) -> dict[str, str]:
    return {"groupVersion": f"{group}/{version}" if group else version, "version": version}


def _api_group(group: str, versions: list[str]) -> dict[str, Any]:
    listed = [_group_version(group, v) for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": listed,
        "preferredVersion": listed[0],
    }


def _resource_list(group: str, version: str, kinds: Iterable[KindInfo]) -> dict[str, Any]:
    resources: list[dict[str, Any]] = []
    for info in kinds:
        resource: dict[str, Any] = {
            "name": info.plural,
            "singularName": info.singular,
            "namespaced": info.namespaced,
            "kind": info.kind,
            "verbs": _verbs(info),
        }
        if info.short_names:
            resource["shortNames"] = list(info.short_names)
        if info.categories:
            resource["categories"] = list(info.categories)
        resources.append(resource)
        resources += [
            {
                "name": f"{info.plural}/{subresource}",
                "singularName": "",
                "namespaced": info.namespaced,
                **_answered(info, subresource),
            }
            for subresource in info.subresources
        ]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": _group_version(group, version)["groupVersion"],
        "resources": resources,
    }


def _aggregated(
    groups: list[str],
    by_group: dict[str, dict[str, list[KindInfo]]],
    versions: dict[str, list[str]],
) -> dict[str, Any]:
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": [
            {
                "metadata": {"name": group} if group else {},
                "versions": [
                    {
                        "version": v,
                        "resources": [_discovered(i) for i in by_group[group][v]],
                        "freshness": "Current",
                    }
                    for v in versions[group]
                ],
            }
            for group in groups
        ],
    }


def _verbs(info: KindInfo) -> list[str]:
    if info.verbs is not None:
        return list(info.verbs)
    return TERMINATING_VERBS if info.custom is not None and info.custom.terminating else VERBS


def _discovered(info: KindInfo) -> dict[str, Any]:
    kind = {"group": info.group, "version": info.version, "kind": info.kind}
    resource: dict[str, Any] = {
        "resource": info.plural,
        "responseKind": kind,
        "scope": "Namespaced" if info.namespaced else "Cluster",
        "singularResource": info.singular,
        "verbs": _verbs(info),
    }
    if info.short_names:
        resource["shortNames"] = list(info.short_names)
    if info.categories:
        resource["categories"] = list(info.categories)
    if info.subresources:
        resource["subresources"] = []
        for subresource in info.subresources:
            answered, verbs = SUBRESOURCES.get(subresource, (kind, STATUS_VERBS))
            resource["subresources"].append(
                {"subresource": subresource, "responseKind": answered, "verbs": verbs}
            )
    return resource


# What the subresources that answer another kind answer, and their verbs (kubectl's scale
# client finds the Scale kind here); the others answer their resource's kind, as status does.
SUBRESOURCES: dict[str, tuple[dict[str, str], list[str]]] = {
    "scale": ({"group": "autoscaling", "version": "v1", "kind": "Scale"}, STATUS_VERBS),
    "token": (
        {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"},
        ["create"],
    ),
}


def _answered(info: KindInfo, subresource: str) -> dict[str, Any]:
    """The kind a subresource answers and its verbs, as a legacy APIResource names them
    (group and version only where they are not the resource's own)."""
    kind, verbs = SUBRESOURCES.get(subresource, ({"kind": info.kind}, STATUS_VERBS))
    return {**kind, "verbs": verbs}
