"""apiextensions.k8s.io/v1: CustomResourceDefinition, and the kinds a definition serves.

A CRD's kind is served, in each version it marks `served`, under the names its status
accepted (the naming controller's `status.acceptedNames`), once its names are accepted or
it is established, as apiextensions-apiserver's handler serves it; `served_kinds` says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from fleetwarden.api.core import Unstructured
from fleetwarden.api.kinds import CustomResource, KindInfo, PrinterColumn, Scale, version_priority
from fleetwarden.api.meta import Condition, Model, Resource, find_condition

GROUP = "apiextensions.k8s.io"
VERSION = "v1"

# spec.scope.
NAMESPACE_SCOPED = "Namespaced"
CLUSTER_SCOPED = "Cluster"

# Condition types.
ESTABLISHED = "Established"
NAMES_ACCEPTED = "NamesAccepted"
TERMINATING = "Terminating"

# What the API server puts on a CRD being deleted, and the CRD finalizer takes off once
# the custom resources are gone.
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


class CustomResourceDefinitionNames(Model):
    plural: str = ""
    singular: str | None = None
    short_names: list[str] | None = None
    kind: str = ""
    list_kind: str | None = None
    categories: list[str] | None = None


class CustomResourceValidation(Model):
    open_api_v3_schema: dict[str, Any] | None = Field(default=None, alias="openAPIV3Schema")


class CustomResourceSubresources(Model):
    status: dict[str, Any] | None = None
    scale: dict[str, Any] | None = None


class CustomResourceColumnDefinition(Model):
    name: str = ""
    type: str = ""
    format: str | None = None
    description: str | None = None
    priority: int | None = None
    json_path: str = Field(default="", alias="jsonPath")


class CustomResourceDefinitionVersion(Model):
    name: str = ""
    served: bool = False
    storage: bool = False
    deprecated: bool | None = None
    deprecation_warning: str | None = None
    # `schema` would shadow pydantic's own attribute.
    schema_: CustomResourceValidation | None = Field(default=None, alias="schema")
    subresources: CustomResourceSubresources | None = None
    additional_printer_columns: list[CustomResourceColumnDefinition] | None = None


class CustomResourceDefinitionSpec(Model):
    group: str = ""
    names: CustomResourceDefinitionNames = Field(default_factory=CustomResourceDefinitionNames)
    scope: str = ""
    versions: list[CustomResourceDefinitionVersion] = Field(default_factory=list)
    conversion: dict[str, Any] | None = None
    preserve_unknown_fields: bool | None = None


class CustomResourceDefinitionStatus(Model):
    conditions: list[Condition] | None = None
    accepted_names: CustomResourceDefinitionNames | None = None
    stored_versions: list[str] | None = None


class CustomResourceDefinition(Resource):
    spec: CustomResourceDefinitionSpec = Field(default_factory=CustomResourceDefinitionSpec)
    status: CustomResourceDefinitionStatus = Field(default_factory=CustomResourceDefinitionStatus)


KIND = KindInfo(
    GROUP,
    VERSION,
    "CustomResourceDefinition",
    "customresourcedefinitions",
    False,
    CustomResourceDefinition,
    ("crd", "crds"),
    ("api-extensions",),
)


def condition_true(crd: CustomResourceDefinition, type_: str) -> bool:
    condition = find_condition(crd.status.conditions, type_)
    return condition is not None and condition.status == "True"


def terminating(crd: CustomResourceDefinition) -> bool:
    return crd.metadata.deletion_timestamp is not None or condition_true(crd, TERMINATING)


def served_kinds(crd: CustomResourceDefinition) -> list[KindInfo]:
    """The kind in each version the CRD serves, preferred version first; none until its
    names are accepted (or it is established)."""
    names = crd.status.accepted_names
    if names is None or not (
        condition_true(crd, NAMES_ACCEPTED) or condition_true(crd, ESTABLISHED)
    ):
        return []
    return _kinds(crd, names)


def defined_kinds(crd: CustomResourceDefinition) -> list[KindInfo]:
    """The kinds served_kinds gives once the CRD's names, as its spec has them, are
    accepted."""
    return _kinds(crd, crd.spec.names)


def _kinds(crd: CustomResourceDefinition, names: CustomResourceDefinitionNames) -> list[KindInfo]:
    versions = sorted(
        (v for v in crd.spec.versions if v.served), key=lambda v: version_priority(v.name)
    )
    return [_kind(crd, names, version) for version in versions]


def storage_kind(crd: CustomResourceDefinition) -> KindInfo | None:
    """Where the CRD's objects are stored: its kind in its storage version, by the names
    accepted (else those asked for), served or not; None without a storage version."""
    names = crd.status.accepted_names or crd.spec.names
    storage = next((v for v in crd.spec.versions if v.storage), None)
    return _kind(crd, names, storage) if storage is not None and names.plural else None


def _kind(
    crd: CustomResourceDefinition,
    names: CustomResourceDefinitionNames,
    version: CustomResourceDefinitionVersion,
) -> KindInfo:
    subresources = version.subresources
    custom = CustomResource(
        singular=names.singular or names.kind.lower(),
        list_kind=names.list_kind or f"{names.kind}List",
        schema=version.schema_.open_api_v3_schema if version.schema_ else None,
        printer_columns=tuple(_column(c) for c in version.additional_printer_columns or ()),
        terminating=terminating(crd),
    )
    return KindInfo(
        crd.spec.group,
        version.name,
        names.kind,
        names.plural,
        crd.spec.scope == NAMESPACE_SCOPED,
        Unstructured,
        tuple(names.short_names or ()),
        tuple(names.categories or ()),
        has_status=subresources is not None and subresources.status is not None,
        scale=_scale(subresources.scale) if subresources and subresources.scale else None,
        custom=custom,
    )


def _scale(scale: Mapping[str, Any]) -> Scale:
    """CustomResourceSubresourceScale's paths (admission has checked them)."""
    return Scale(
        str(scale.get("specReplicasPath") or ""),
        str(scale.get("statusReplicasPath") or ""),
        str(scale.get("labelSelectorPath") or ""),
    )


def _column(column: CustomResourceColumnDefinition) -> PrinterColumn:
    return PrinterColumn(
        column.name,
        column.type,
        column.json_path,
        column.description or "",
        column.format or "",
        column.priority or 0,
    )
