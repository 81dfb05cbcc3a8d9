"""KindInfo: what the kind registry knows of a kind (group, version, plural, scope...)."""

from __future__ import annotations

from dataclasses import dataclass, field

from fleetwarden.api.meta import Resource


@dataclass(frozen=True)
class KindInfo:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    model: type[Resource]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = field(default=())
    has_status: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def group_kind(self) -> str:
        """`Cluster.cluster.karmada.io`, as Kubernetes names a kind in errors."""
        return f"{self.kind}.{self.group}" if self.group else self.kind


def split_api_version(api_version: str) -> tuple[str, str]:
    """`apps/v1` -> ("apps", "v1"); `v1` -> ("", "v1")."""
    group, _, version = api_version.rpartition("/")
    return group, version
