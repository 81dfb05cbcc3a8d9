"""A real member cluster, reached through the official `kubernetes` client: what
karmada-agent's controllers, and OCM's klusterlet agents, do with their member
(`fleetwarden agent --member-kubeconfig`).

- probe: the cluster status controller's health check: `/readyz`, then `/healthz` where
  there is no `/readyz`; a member that does not answer at all is offline.
- report: the server's gitVersion, the enabled APIs from discovery without subresources
  (getAPIEnablements), and the nodes' allocatable resources summed (getClusterAllocatable).
- cluster claims: the member's ClusterClaims (cluster.open-cluster-management.io/v1alpha1)
  but those labelled `open-cluster-management.io/spoke-only`, for OCM's registration agent.
- apply: the execution controller's create-or-update through the objectwatcher. A
  manifest not on the member is created; one there is updated with the resourceVersion
  read, keeping what the member's side set (finalizers, owner references, and the labels
  and annotations Karmada does not manage: retainClusterFields), when the Work changed
  since it was last applied or the object's spec changed on the member (its generation
  moved); an object Karmada does not manage is left alone unless the manifest says
  `work.karmada.io/conflict-resolution: overwrite`. Every object is labelled
  `karmada.io/managed` and annotated with its Work's namespace and name. The objects are
  read back on every pass: their status and health (the default resource interpreter) are
  what the work status controller reports.
- delete: a Work's objects are deleted in the background (as objectwatcher.Delete does,
  for Jobs' pods), except those Karmada does not manage; so are the objects of a Work that
  is gone without that (its finalizer dropped by hand), unless it preserved them.
- spoke: the member's objects as OCM's work agent reads and writes them (KubeSpoke; the
  rules are members/work_agent.py's, the same as for a simulated member), once the
  AppliedManifestWork CRD is installed on it, as the klusterlet installs it.

Arbitrary kinds are found with the dynamic client's discovery. Nothing here is kept
across restarts, nor needs to be: a Work deleted while the agent was down keeps its
finalizer until the agent, back, has deleted the objects the Work lists.
"""

from __future__ import annotations

import contextlib
import json
import logging
import tempfile
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from http import HTTPStatus
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import urllib3
from kubernetes import client as k8s
from kubernetes import config as kubeconfig
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ConflictError, NotFoundError, ResourceNotFoundError

from fleetwarden.api.karmada.cluster import APIEnablement
from fleetwarden.api.karmada.well_known import (
    CONFLICT_RESOLUTION_ANNOTATION,
    CONFLICT_RESOLUTION_OVERWRITE,
    MANAGED_BY_KARMADA_LABEL,
    WORK_NAME_ANNOTATION,
    WORK_NAMESPACE_ANNOTATION,
)
from fleetwarden.api.karmada.work import (
    MANAGED_ANNOTATIONS_ANNOTATION,
    MANAGED_LABELS_ANNOTATION,
    Work,
)
from fleetwarden.api.ocm import work as workv1
from fleetwarden.members.simulated import AppliedWork, api_enablements
from fleetwarden.members.work_agent import APPLIED_MANIFEST_WORK, ObjectRef, Spoke, SpokeError
from fleetwarden.runtime.finalizers import CONFLICT_ATTEMPTS
from fleetwarden.semantics.cluster_health import MemberReport, Probe
from fleetwarden.semantics.quantity import binary_si, decimal_si, milli_value, parse_quantity

logger = logging.getLogger(__name__)

# Upstream's member clients time out after 10 s; so does every request here.
REQUEST_TIMEOUT = 10.0

# ClusterClaims that stay on the member (claim_reconcile.go's labelCustomizedOnly).
SPOKE_ONLY_LABEL = "open-cluster-management.io/spoke-only"

# What a member that cannot be reached, or refuses a request, raises.
_FAILURES = (ApiException, ResourceNotFoundError, urllib3.exceptions.HTTPError, ValueError)
_T = TypeVar("_T")


class _Ref(NamedTuple):
    """An object on the member, by its manifest's identity."""

    api_version: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"resource(kind={self.kind}, {where})"


@dataclass(frozen=True)
class _Applied:
    """What one Work put on the member, and whether it leaves it there when deleted."""

    refs: tuple[_Ref, ...]
    preserve: bool


class NotManaged(Exception):
    """objectwatcher.Update's refusal to take over an object Karmada did not create."""

    def __init__(self, ref: _Ref) -> None:
        super().__init__(
            f"{ref} already exists in the member cluster and the "
            f"{CONFLICT_RESOLUTION_ANNOTATION} strategy value is empty, "
            "Karmada will not manage this resource"
        )


class KubeCluster:
    """A real member cluster behind an ApiClient. The agent's loop and the Push endpoint's
    requests call it at once: its workload operations run one at a time."""

    reaches_hub = True  # a real agent finds out otherwise by writing to the hub

    def __init__(self, api: k8s.ApiClient, *, timeout: float = REQUEST_TIMEOUT) -> None:
        self.api, self.timeout = api, timeout
        # The dynamic client keeps its discovery in a file; a private one, so that another
        # server that once had this address cannot answer for this one.
        self._discovery = tempfile.TemporaryDirectory(prefix="fleetwarden-discovery-")
        self._dynamic: DynamicClient | None = None
        self._lock = threading.RLock()
        self._applied: dict[str, _Applied] = {}  # by Work uid
        # objectwatcher's version record: the Work uid and generation an object was last
        # applied from, and the object's generation then.
        self._synced: dict[_Ref, tuple[str, int, int]] = {}
        self._applied_manifest_works_served = False

    @classmethod
    def from_kubeconfig(cls, path: str, context: str | None = None) -> KubeCluster:
        """The cluster of a kubeconfig file (its current context unless one is named)."""
        configuration = k8s.Configuration()
        kubeconfig.load_kube_config(  # type: ignore[no-untyped-call]  # the client's gap
            config_file=path, context=context, client_configuration=configuration,
            persist_config=False,
        )  # fmt: skip
        configuration.retries = False  # the agent's loop retries; a probe must fail fast
        return cls(k8s.ApiClient(configuration))

    def close(self) -> None:
        self.api.close()  # type: ignore[no-untyped-call]  # the client's gap
        self._discovery.cleanup()

    # the cluster status controller ------------------------------------------------------

    def probe(self) -> Probe:
        """getClusterHealthStatus."""
        try:
            status = self._get("/readyz")[0]
            if status == HTTPStatus.NOT_FOUND:
                status = self._get("/healthz")[0]
        except _FAILURES as exc:
            logger.info("member health check: %s", exc)
            return Probe(online=False, healthy=False)
        return Probe(online=True, healthy=status == HTTPStatus.OK)

    def report(self) -> MemberReport:
        """What is read is reported, what fails is reported empty (and logged)."""
        return MemberReport(
            kubernetes_version=_tolerant("version", self._version, ""),
            api_enablements=_tolerant("enabled APIs", self._api_enablements, []),
            allocatable=_tolerant("nodes' allocatable resources", self._allocatable, {}),
        )

    def cluster_claims(self) -> dict[str, str]:
        """The ClusterClaims the registration agent exposes; none where the kind is not served."""
        return _tolerant("cluster claims", self._cluster_claims, {})

    def _cluster_claims(self) -> dict[str, str]:
        with self._lock:
            try:
                resource = self._resource(_CLUSTER_CLAIMS.api_version, kind=_CLUSTER_CLAIMS.kind)
            except ResourceNotFoundError:
                return {}
            listed = self._call(resource.get)
        return {
            str(item["metadata"]["name"]): str((item.get("spec") or {}).get("value", ""))
            for item in listed.get("items") or []
            if SPOKE_ONLY_LABEL not in (item["metadata"].get("labels") or {})
        }

    def _version(self) -> str:
        return str(self._get_json("/version").get("gitVersion", ""))

    def _api_enablements(self) -> list[APIEnablement]:
        """ServerGroupsAndResources: every version of every group, subresources left out."""
        paths = [f"/api/{version}" for version in self._get_json("/api").get("versions", [])]
        paths += [
            f"/apis/{version['groupVersion']}"
            for group in self._get_json("/apis").get("groups", [])
            for version in group.get("versions", [])
        ]
        resources = []
        for path in paths:
            listed = self._get_json(path)
            resources += [
                (str(listed.get("groupVersion", "")), r["name"], r["kind"])
                for r in listed.get("resources") or []
                if "/" not in r["name"]
            ]
        return api_enablements(resources)

    def _allocatable(self) -> dict[str, str]:
        nodes = self._get_json("/api/v1/nodes").get("items") or []
        return sum_quantities((node.get("status") or {}).get("allocatable") or {} for node in nodes)

    def _get(self, path: str) -> tuple[int, bytes]:
        """A GET of a path outside the resource APIs: its status and body."""
        request = self.api.param_serialize(
            "GET", path, header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )  # fmt: skip
        response = self.api.call_api(*request, _request_timeout=self.timeout)
        body: bytes = response.read()  # type: ignore[no-untyped-call]  # the client's gap
        return response.status, body

    def _get_json(self, path: str) -> dict[str, Any]:
        status, body = self._get(path)
        if not 200 <= status < 300:
            raise ApiException(
                status=status, reason=f"GET {path}", body=body.decode(errors="replace")
            )
        document = json.loads(body)
        if not isinstance(document, dict):
            raise ValueError(f"GET {path}: not a JSON object")
        return document

    # the execution and work status controllers ----------------------------------------------

    def apply(self, work: Work, now: datetime) -> AppliedWork:
        """syncToClusters: every manifest created or updated, and read back."""
        objects: list[dict[str, Any] | None] = []
        failures: list[str] = []
        refs = []
        with self._lock:
            for manifest in work.spec.workload.manifests or []:
                desired = _desired(manifest, work)
                refs.append(ref := _ref(desired))
                try:
                    objects.append(self._create_or_update(ref, desired, work))
                except (NotManaged, *_FAILURES) as exc:
                    objects.append(None)
                    failures.append(_failure(ref, exc))
            preserve = bool(work.spec.preserve_resources_on_deletion)
            self._applied[work.metadata.uid or ""] = _Applied(tuple(refs), preserve)
        versions = tuple(_resource_version(obj) for obj in objects)
        return AppliedWork(objects, observed=(versions, tuple(failures)), failures=failures)

    def settled_by(self) -> None:
        """None: its workloads change with nothing on the hub changing."""
        return None

    def delete_workload(self, work: Work) -> bool:
        """tryDeleteWorkload: True once every object of the Work is gone."""
        with self._lock:
            manifests = work.spec.workload.manifests or []
            gone = all(self._delete(_ref(manifest)) for manifest in manifests)
            if gone:
                self._applied.pop(work.metadata.uid or "", None)
            return gone

    def prune_workloads(self, live: Collection[str]) -> None:
        """The objects of Works gone from the hub, deleted; not those a live Work lists."""
        with self._lock:
            wanted = {ref for uid, a in self._applied.items() if uid in live for ref in a.refs}
            gone = {uid: a for uid, a in self._applied.items() if uid not in live}
            for uid, applied in gone.items():
                refs = [ref for ref in applied.refs if ref not in wanted]
                if applied.preserve or all(self._delete(ref) for ref in refs):
                    del self._applied[uid]

    def _create_or_update(self, ref: _Ref, desired: dict[str, Any], work: Work) -> dict[str, Any]:
        """tryCreateOrUpdateWorkload, again on a conflict (someone wrote in between)."""
        attempts = CONFLICT_ATTEMPTS
        while True:
            try:
                return self._sync(ref, desired, work)
            except ConflictError:
                attempts -= 1
                if not attempts:
                    raise

    def _sync(self, ref: _Ref, desired: dict[str, Any], work: Work) -> dict[str, Any]:
        resource = self._resource(ref.api_version, kind=ref.kind)
        namespace = ref.namespace if resource.namespaced else None
        try:
            current = self._call(resource.get, name=ref.name, namespace=namespace)
        except NotFoundError:
            created = self._call(resource.create, body=desired, namespace=namespace)
            return self._record(ref, work, created)
        if not _managed(current) and not _overwrite(desired):
            raise NotManaged(ref)
        if self._synced.get(ref) == _version_record(work, current):
            return current
        updated = self._call(resource.replace, body=_retain(desired, current), namespace=namespace)
        return self._record(ref, work, updated)

    def _delete(self, ref: _Ref) -> bool:
        """objectwatcher.Delete: True once the object is gone or is not Karmada's."""
        try:
            resource = self._resource(ref.api_version, kind=ref.kind)
            namespace = ref.namespace if resource.namespaced else None
            if _managed(self._call(resource.get, name=ref.name, namespace=namespace)):
                self._call(resource.delete, name=ref.name, namespace=namespace, body=_BACKGROUND)
        except (NotFoundError, ResourceNotFoundError):
            pass
        except _FAILURES as exc:
            logger.warning("deleting %s from the member: %s", ref, _message(exc))
            return False
        self._synced.pop(ref, None)
        return True

    def _record(self, ref: _Ref, work: Work, obj: dict[str, Any]) -> dict[str, Any]:
        self._synced[ref] = _version_record(work, obj)
        return obj

    def _resource(self, api_version: str, **which: str) -> Any:
        """An API resource, by its kind or its (plural) name; found by discovery, which is
        read again when it does not know it."""
        if self._dynamic is None:
            cache = Path(self._discovery.name) / "discovery.json"
            self._dynamic = DynamicClient(  # type: ignore[no-untyped-call]  # the client's gap
                self.api, cache_file=str(cache)
            )
        return self._dynamic.resources.get(api_version=api_version, **which)

    def _call(self, method: Callable[..., Any], **kwargs: Any) -> dict[str, Any]:
        """A dynamic client call, its answer as a plain dict."""
        answer: dict[str, Any] = method(**kwargs, serializer=_plain, _request_timeout=self.timeout)
        return answer

    # OCM's work agent ---------------------------------------------------------------------

    def spoke(self, now: datetime) -> Spoke:
        """The member's API as OCM's work agent uses it. The AppliedManifestWork CRD is
        installed first where the member lacks it, as the klusterlet installs it."""
        if not self._applied_manifest_works_served:
            self._applied_manifest_works_served = _tolerant(
                "AppliedManifestWork CRD", self._install_applied_manifest_works, False
            )
        return KubeSpoke(self)

    def _install_applied_manifest_works(self) -> bool:
        """True once the member serves AppliedManifestWorks (a new CRD: on a later look)."""
        with self._lock:
            try:
                self._resource(f"{workv1.GROUP}/{workv1.VERSION}", kind=APPLIED_MANIFEST_WORK)
            except ResourceNotFoundError:
                crds = self._resource("apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
                with contextlib.suppress(ConflictError):  # another agent created it
                    self._call(crds.create, body=APPLIED_MANIFEST_WORK_CRD)
                return False
        return True


class KubeSpoke:
    """A real member's API as OCM's work agent uses it (work_agent.Spoke), through the
    KubeCluster's dynamic client, one request at a time. What the member refuses, or does
    not answer, raises SpokeError with its message."""

    def __init__(self, cluster: KubeCluster) -> None:
        self.cluster = cluster

    def get(self, ref: ObjectRef) -> dict[str, Any] | None:
        try:
            return self._request(ref, "get")
        except (NotFoundError, ResourceNotFoundError):
            return None

    def create(self, ref: ObjectRef, obj: dict[str, Any]) -> dict[str, Any]:
        try:
            return self._request(ref, "create", body=obj)
        except ResourceNotFoundError as exc:
            raise SpokeError(_failure(_ref(obj), exc)) from None

    def update(self, ref: ObjectRef, obj: dict[str, Any]) -> dict[str, Any]:
        return self._request(ref, "replace", body=obj)

    def update_status(self, ref: ObjectRef, obj: dict[str, Any]) -> dict[str, Any]:
        return self._request(ref, "replace", body=obj, subresource="status")

    def delete(self, ref: ObjectRef) -> None:
        with contextlib.suppress(NotFoundError, ResourceNotFoundError):
            self._request(ref, "delete", body=_BACKGROUND)

    def _request(
        self, ref: ObjectRef, verb: str, subresource: str = "", **kwargs: Any
    ) -> dict[str, Any]:
        """The verb on the object, or on its subresource. Not found (the object, or its
        kind) passes through; anything else the member says is a SpokeError."""
        api_version = f"{ref.group}/{ref.version}" if ref.group else ref.version
        with self.cluster._lock:
            try:
                resource = self.cluster._resource(api_version, name=ref.resource)
                if resource.namespaced and not ref.namespace:
                    # Go's dynamic client asks for the cluster-scoped path, which is not there.
                    raise SpokeError("the server could not find the requested resource")
                namespace = ref.namespace if resource.namespaced else None
                target = resource.subresources[subresource] if subresource else resource
                method = getattr(target, verb)
                if verb in ("get", "delete"):
                    kwargs["name"] = ref.name
                return self.cluster._call(method, namespace=namespace, **kwargs)
            except (NotFoundError, ResourceNotFoundError):
                raise
            except _FAILURES as exc:
                raise SpokeError(_message(exc)) from None


# What the klusterlet installs on its member for the work agent's bookkeeping: upstream's
# CRD (work/v1/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml), its
# schema kept open.
_OPEN = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
APPLIED_MANIFEST_WORK_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"appliedmanifestworks.{workv1.GROUP}"},
    "spec": {
        "group": workv1.GROUP,
        "names": {"kind": APPLIED_MANIFEST_WORK, "listKind": "AppliedManifestWorkList",
                  "plural": "appliedmanifestworks", "singular": "appliedmanifestwork"},
        "scope": "Cluster",
        "versions": [{
            "name": workv1.VERSION, "served": True, "storage": True, "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {"type": "object",
                                           "properties": {"spec": _OPEN, "status": _OPEN}}},
        }],
    },
}  # fmt: skip
_CLUSTER_CLAIMS = _Ref("cluster.open-cluster-management.io/v1alpha1", "ClusterClaim", "", "")
_BACKGROUND = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}


def _plain(client: DynamicClient, document: dict[str, Any]) -> dict[str, Any]:
    return document


def _tolerant(what: str, read: Callable[[], _T], empty: _T) -> _T:
    try:
        return read()
    except _FAILURES as exc:
        logger.warning("reading the member's %s: %s", what, _message(exc))
        return empty


def sum_quantities(lists: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """getClusterAllocatable: each resource summed, written as Quantity.Add leaves it (in
    its first addend's format: binary for `Ki`-style amounts, else decimal)."""
    sums: dict[str, Fraction] = {}
    binary: dict[str, bool] = {}
    for resources in lists:
        for name, text in resources.items():
            sums[name] = sums.get(name, Fraction(0)) + parse_quantity(text)
            binary.setdefault(name, str(text).rstrip("0123456789").endswith("i"))
    return {
        name: binary_si(int(total))
        if binary[name] and total.denominator == 1
        else decimal_si(milli_value(total), -3)
        for name, total in sums.items()
    }


def _ref(obj: Mapping[str, Any]) -> _Ref:
    metadata = obj.get("metadata") or {}
    return _Ref(
        str(obj.get("apiVersion", "")),
        str(obj.get("kind", "")),
        str(metadata.get("namespace") or ""),
        str(metadata.get("name") or ""),
    )


def _desired(manifest: Mapping[str, Any], work: Work) -> dict[str, Any]:
    """The manifest as Karmada puts it on a member: managed, and pointing at its Work."""
    metadata = dict(manifest.get("metadata") or {})
    metadata["labels"] = {**(metadata.get("labels") or {}), MANAGED_BY_KARMADA_LABEL: "true"}
    metadata["annotations"] = {
        **(metadata.get("annotations") or {}),
        WORK_NAMESPACE_ANNOTATION: work.namespace,
        WORK_NAME_ANNOTATION: work.name,
    }
    return {**manifest, "metadata": metadata}


def _retain(desired: dict[str, Any], observed: Mapping[str, Any]) -> dict[str, Any]:
    """retainClusterFields: the update carries the resourceVersion read, and keeps what
    the member's controllers and users set on their copy."""
    metadata, seen = dict(desired["metadata"]), observed.get("metadata") or {}
    metadata["resourceVersion"] = seen.get("resourceVersion")
    for kept in ("finalizers", "ownerReferences"):
        metadata.pop(kept, None)
        if seen.get(kept):
            metadata[kept] = seen[kept]
    records = seen.get("annotations") or {}
    for key, record in (("labels", MANAGED_LABELS_ANNOTATION),
                        ("annotations", MANAGED_ANNOTATIONS_ANNOTATION)):  # fmt: skip
        metadata[key] = _retained(metadata.get(key) or {}, seen.get(key) or {}, records.get(record))
    return {**desired, "metadata": metadata}


def _retained(
    wanted: Mapping[str, str], seen: Mapping[str, str], record: str | None
) -> dict[str, str]:
    """RetainLabels / RetainAnnotations: the member's own keys stay; those Karmada managed
    before (its record) and no longer wants go."""
    dropped = set((record or "").split(",")) - wanted.keys()
    return {**{k: v for k, v in seen.items() if k not in dropped}, **wanted}


def _managed(obj: Mapping[str, Any]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return bool(labels.get(MANAGED_BY_KARMADA_LABEL) == "true")


def _overwrite(obj: Mapping[str, Any]) -> bool:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return bool(annotations.get(CONFLICT_RESOLUTION_ANNOTATION) == CONFLICT_RESOLUTION_OVERWRITE)


def _version_record(work: Work, obj: Mapping[str, Any]) -> tuple[str, int, int]:
    generation = (obj.get("metadata") or {}).get("generation") or 0
    return work.metadata.uid or "", work.metadata.generation or 0, int(generation)


def _resource_version(obj: Mapping[str, Any] | None) -> str | None:
    return None if obj is None else (obj.get("metadata") or {}).get("resourceVersion")


def _failure(ref: _Ref, exc: Exception) -> str:
    """What the Applied condition says of a manifest that could not be applied."""
    if isinstance(exc, ResourceNotFoundError):
        return f'no matches for kind "{ref.kind}" in version "{ref.api_version}"'
    return _message(exc)


def _message(exc: Exception) -> str:
    """An API error's own message (a Status names the object and the rule); else the
    exception's text."""
    if isinstance(exc, ApiException) and exc.body:
        try:
            status = json.loads(exc.body)
        except ValueError:
            return str(exc.body)
        if isinstance(status, dict) and status.get("message"):
            return str(status["message"])
    if isinstance(exc, ApiException):
        return f"{exc.status} {exc.reason}"
    return str(exc)
