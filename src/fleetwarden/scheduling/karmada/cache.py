"""The scheduler's view of the clusters (pkg/scheduler/cache): a Snapshot rebuilt only after a
cluster changed, each ClusterInfo worked out again only for a cluster that changed."""

from __future__ import annotations

import threading

from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.runtime.informer import Informer
from fleetwarden.scheduling.karmada.framework import ClusterInfo, Snapshot


class ClusterCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version = 0
        self._snapshot: Snapshot | None = None
        self._infos: dict[str, ClusterInfo] = {}

    def invalidate(self) -> None:
        """A cluster was added, changed or deleted."""
        with self._lock:
            self._version += 1

    def snapshot(self, clusters: Informer) -> Snapshot:
        with self._lock:
            version = self._version
            if self._snapshot is not None and self._snapshot.version == version:
                return self._snapshot
        infos = [self._info(c) for c in clusters.list() if isinstance(c, Cluster)]
        snapshot = Snapshot.of(infos, version)
        with self._lock:
            self._infos = {info.name: info for info in infos}
            # A cluster that changed meanwhile leaves this snapshot out of date: not kept.
            if version == self._version:
                self._snapshot = snapshot
        return snapshot

    def _info(self, cluster: Cluster) -> ClusterInfo:
        # The informer replaces an object on every change, so the same object is the same
        # resourceVersion.
        info = self._infos.get(cluster.metadata.name)
        if info is None or info.cluster is not cluster:
            info = ClusterInfo.of(cluster)
        return info
