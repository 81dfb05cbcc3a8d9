"""Admission for the built-in kinds the hub serves: each is decoded by its Go type, as
kube-apiserver decodes it (go_types), then defaulted and validated as its REST strategy does
(core, workloads). The RBAC kinds and CertificateSigningRequest have admission of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fleetwarden.admission.builtin import autoscaling, core, networking, quota, workloads
from fleetwarden.admission.builtin.go_types import decoder
from fleetwarden.admission.builtin.pods import Obj
from fleetwarden.admission.chain import Mutate, Plugin, Request, Validate
from fleetwarden.api.errors import ErrorList
from fleetwarden.api.kinds import split_api_version
from fleetwarden.semantics.validation import NameRule, is_dns1035_label

# A kind's rule on the object as it goes on the wire, and the stored one it replaces.
Check = Callable[[Obj, Obj | None], ErrorList]
Prepare = Callable[[Obj, Obj | None], None]


@dataclass(frozen=True)
class _Kind:
    api_version: str
    kind: str
    validate: Check | None = None
    prepare: Prepare | None = None  # what the strategy does before validation
    name_rule: NameRule | None = None  # if not a DNS subdomain
    model: str = ""  # the Python client's class for the Go type, if not V1<Kind>
    # The check of a write through /status, if the kind has one of its own; the status
    # strategy's. Without one, a status write is checked by `validate`.
    validate_status: Check | None = None


_KINDS = [
    _Kind("v1", "Namespace", name_rule="label"),
    _Kind("v1", "ConfigMap", core.validate_config_map),
    _Kind("v1", "Secret", core.validate_secret, core.prepare_secret),
    _Kind("v1", "Service", core.validate_service, name_rule=is_dns1035_label),
    _Kind("v1", "ServiceAccount"),
    _Kind("v1", "Pod", core.validate_pod),
    _Kind("v1", "PersistentVolumeClaim"),
    _Kind(
        "v1",
        "ResourceQuota",
        quota.validate_resource_quota,
        validate_status=quota.validate_resource_quota_status,
    ),
    _Kind("v1", "LimitRange", quota.validate_limit_range),
    _Kind("v1", "PersistentVolume"),
    _Kind("v1", "Node", core.validate_node),
    _Kind("v1", "Event", model="CoreV1Event"),
    _Kind("coordination.k8s.io/v1", "Lease"),
    _Kind("apps/v1", "Deployment", workloads.validate_deployment),
    _Kind("apps/v1", "ReplicaSet", workloads.validate_replica_set),
    _Kind("apps/v1", "StatefulSet", workloads.validate_stateful_set, name_rule="label"),
    _Kind("apps/v1", "DaemonSet", workloads.validate_daemon_set),
    _Kind("batch/v1", "Job", workloads.validate_job),
    _Kind("batch/v1", "CronJob", workloads.validate_cron_job),
    _Kind("networking.k8s.io/v1", "Ingress"),
    _Kind("networking.k8s.io/v1", "NetworkPolicy", networking.validate_network_policy),
    _Kind("policy/v1", "PodDisruptionBudget", workloads.validate_pod_disruption_budget),
    _Kind(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        autoscaling.validate_horizontal_pod_autoscaler,
    ),
    _Kind("storage.k8s.io/v1", "StorageClass"),
    _Kind("scheduling.k8s.io/v1", "PriorityClass"),
    _Kind("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
]


def _old(request: Request) -> Obj | None:
    return request.old.to_dict() if request.old is not None else None


def _mutate(prepare: Prepare) -> Mutate:
    def mutate(request: Request) -> None:
        obj = request.obj.to_dict()
        prepare(obj, _old(request))
        request.obj = type(request.obj).model_validate(obj)

    return mutate


def _validate(check: Check, status_check: Check | None) -> Validate:
    def validate(request: Request) -> ErrorList:
        chosen = status_check if status_check and request.subresource == "status" else check
        return chosen(request.obj.to_dict(), _old(request))

    return validate


def _plugin(kind: _Kind) -> Plugin:
    version = split_api_version(kind.api_version)[1]
    return Plugin(
        kind.api_version,
        kind.kind,
        mutate=_mutate(kind.prepare) if kind.prepare else None,
        validate=_validate(kind.validate, kind.validate_status) if kind.validate else None,
        name_rule=kind.name_rule,
        decode=decoder(kind.kind, version, kind.model or f"{version.capitalize()}{kind.kind}"),
    )


PLUGINS = [_plugin(kind) for kind in _KINDS]
