"""The hub's view of members in real time (`fleetwarden up`): the Members of hub.py.

A Push cluster is probed where its spec.apiEndpoint points, as karmada-controller-manager's
cluster status controller probes a member's API server: `/readyz` (then `/healthz` when
there is no `/readyz`) answering 200 is healthy, any other answer is reachable but not
ready, no answer is not reachable. A reachable member's version, enabled APIs and
allocatable resources come from the member endpoint's report (members/endpoint.py),
fetched with the probe. The workload of a deleted Work is removed through that endpoint.

Every cluster is taken to have a member behind it, as upstream takes it: the health
monitors time out a Pull cluster or a ManagedCluster that stops reporting. A Pull cluster is
never probed: its agent reports for itself. The hub cannot call such a member, and its
execution controller leaves a Pull cluster's Works to the agent, which runs the execution
controller for its member (members/simulated.py).
"""

from __future__ import annotations

import logging
import threading

import httpx

from fleetwarden.api.karmada.cluster import SYNC_MODE_PUSH, Cluster
from fleetwarden.api.karmada.work import ReplicaRequirements, Work
from fleetwarden.members.endpoint import DELETE_WORKLOAD_PATH, REPORT_PATH, decode_report
from fleetwarden.runtime.informer import Informer
from fleetwarden.semantics.cluster_health import MemberReport, Probe

logger = logging.getLogger(__name__)

# Upstream's member client times out after 10 s (cluster-api-... defaults); a probe that
# slow would hold the status loop of every other Push cluster, so ours is shorter.
PROBE_TIMEOUT = 3.0
_OFFLINE = Probe(online=False, healthy=False)


class HttpMembers:
    """Members behind the Clusters of the hub's cache, reached over HTTP."""

    def __init__(
        self,
        clusters: Informer,
        *,
        timeout: float = PROBE_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._clusters = clusters
        self._http = httpx.Client(timeout=timeout, transport=transport)
        self._reports: dict[str, MemberReport] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self._http.close()

    def backs(self, name: str) -> bool:
        return True

    def estimate_replicas(self, name: str, requirements: ReplicaRequirements | None) -> None:
        """No scheduler-estimator runs beside a real member here: the general estimate only."""
        return None

    def probe(self, name: str) -> Probe | None:
        """None for a cluster that is not a Push cluster the hub knows."""
        endpoint = self._push_endpoint(name)
        if endpoint is None:
            return None
        probe, report = self._probe(endpoint) if endpoint else (_OFFLINE, None)
        with self._lock:
            if report is None:
                self._reports.pop(name, None)
            else:
                self._reports[name] = report
        return probe

    def report(self, name: str) -> MemberReport | None:
        """What the last probe of a reachable member fetched."""
        with self._lock:
            return self._reports.get(name)

    def delete_workload(self, name: str, work: Work) -> bool:
        """True once the workload is gone from a Push member; False when it did not answer,
        or is not a Push member (the hub has no way to reach it)."""
        endpoint = self._push_endpoint(name)
        if endpoint is None:
            return False
        try:
            response = self._http.post(endpoint + DELETE_WORKLOAD_PATH, json=work.to_dict())
        except httpx.HTTPError as exc:
            logger.info("deleting Work %s from cluster %s: %s", work.name, name, exc)
            return False
        return response.status_code == httpx.codes.OK

    def _push_endpoint(self, name: str) -> str | None:
        """A Push cluster's spec.apiEndpoint ("" when it has none); None for any other."""
        cluster = self._clusters.get(name)
        if not isinstance(cluster, Cluster) or cluster.spec.sync_mode != SYNC_MODE_PUSH:
            return None
        return (cluster.spec.api_endpoint or "").rstrip("/")

    def _probe(self, endpoint: str) -> tuple[Probe, MemberReport | None]:
        """healthEndpointCheck, /readyz first; the report of a member that answered."""
        try:
            status = self._http.get(endpoint + "/readyz").status_code
            if status == httpx.codes.NOT_FOUND:
                status = self._http.get(endpoint + "/healthz").status_code
            report = self._http.get(endpoint + REPORT_PATH)
        except httpx.HTTPError:
            return _OFFLINE, None
        probe = Probe(online=True, healthy=status == httpx.codes.OK)
        if report.status_code != httpx.codes.OK:
            return probe, None
        return probe, decode_report(report.json())
