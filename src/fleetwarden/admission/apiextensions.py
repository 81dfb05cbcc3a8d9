"""CustomResourceDefinition: what apiextensions-apiserver's defaulting, REST strategy and
validation (pkg/apis/apiextensions/validation) do to one before it is stored.

The essential rules are checked, with upstream's wording: the name is `<plural>.<group>`,
the group a domain, the scope known, each version named as a DNS-1035 label with a schema,
exactly one storage version, the names present and well formed, the printer columns typed,
and on update the group and plural (and, once established, the scope and kind) unchanged.
The schemas themselves are taken as given: structural-schema, CEL and defaulting rules are
not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fleetwarden.admission.chain import Plugin, Request
from fleetwarden.api import apiextensions as crdv1
from fleetwarden.api.apiextensions import (
    CustomResourceColumnDefinition,
    CustomResourceDefinition,
    CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec,
)
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.semantics.validation import is_dns1035_label, is_dns1123_subdomain

_SCOPES = (crdv1.CLUSTER_SCOPED, crdv1.NAMESPACE_SCOPED)
_COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
_COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")
_IMMUTABLE = "field is immutable"


def _mutate(request: Request) -> None:
    """SetDefaults_CustomResourceDefinitionSpec. (The status a CRD is created with, its
    storage version in storedVersions, is the naming controller's first write here: the
    store takes no status on create.)"""
    crd = request.of(CustomResourceDefinition)
    names = crd.spec.names
    if not names.singular:
        names.singular = names.kind.lower()
    if not names.list_kind and names.kind:
        names.list_kind = f"{names.kind}List"
    if crd.spec.conversion is None:
        crd.spec.conversion = {"strategy": "None"}


def _validate(request: Request) -> ErrorList:
    crd = request.of(CustomResourceDefinition)
    spec = crd.spec
    errs: ErrorList = []
    if crd.metadata.name and crd.metadata.name != f"{spec.names.plural}.{spec.group}":
        errs.append(
            Path("metadata.name").invalid(
                crd.metadata.name, 'must be spec.names.plural+"."+spec.group'
            )
        )
    old = request.old
    errs += _spec_errors(spec, Path("spec"), require_schemas=old is None or _all_have_schemas(old))
    if isinstance(old, CustomResourceDefinition):
        errs += _update_errors(spec, old.spec, crdv1.condition_true(old, crdv1.ESTABLISHED))
    return errs


def _all_have_schemas(old: CustomResourceDefinition) -> bool:
    """requireOpenAPISchema on update: only if every stored version has one already."""
    return all(v.schema_ and v.schema_.open_api_v3_schema for v in old.spec.versions)


def _spec_errors(
    spec: CustomResourceDefinitionSpec, path: Path, *, require_schemas: bool
) -> ErrorList:
    errs = _group_errors(spec.group, path.child("group"))
    if not spec.scope:
        errs.append(path.child("scope").required())
    elif spec.scope not in _SCOPES:
        errs.append(path.child("scope").not_supported(spec.scope, _SCOPES))
    errs += _versions_errors(spec, path.child("versions"), require_schemas)
    names = path.child("names")
    for field in ("plural", "singular", "kind", "listKind"):
        if not spec.names.to_dict().get(field):
            errs.append(names.child(field).required())
    return errs + _names_errors(spec.names, names)


def _group_errors(group: str, path: Path) -> ErrorList:
    if not group:
        return [path.required()]
    problems = is_dns1123_subdomain(group)
    if problems:
        return [path.invalid(group, ",".join(problems))]
    if "." not in group:
        return [path.invalid(group, "should be a domain with at least one dot")]
    return []


def _versions_errors(
    spec: CustomResourceDefinitionSpec, path: Path, require_schemas: bool
) -> ErrorList:
    errs: ErrorList = []
    for i, version in enumerate(spec.versions):
        at = path.index(i)
        problems = is_dns1035_label(version.name)
        if problems:
            errs.append(at.child("name").invalid(version.name, ",".join(problems)))
        if require_schemas and not (version.schema_ and version.schema_.open_api_v3_schema):
            errs.append(at.child("schema", "openAPIV3Schema").required())
        for j, column in enumerate(version.additional_printer_columns or ()):
            errs += _column_errors(column, at.child("additionalPrinterColumns").index(j))
        if version.subresources is not None and version.subresources.scale is not None:
            errs += _scale_errors(version.subresources.scale, at.child("subresources", "scale"))
    listed = [v.to_dict() for v in spec.versions]
    if len({v.name for v in spec.versions}) != len(spec.versions):
        errs.append(path.invalid(listed, "must contain unique version names"))
    if sum(v.storage for v in spec.versions) != 1:
        errs.append(path.invalid(listed, "must have exactly one version marked as storage version"))
    return errs


# CustomResourceSubresourceScale's paths, and the part of the object each must be under.
_SCALE_PATHS = (
    ("specReplicasPath", (".spec.",), "should be a json path under .spec"),
    ("statusReplicasPath", (".status.",), "should be a json path under .status"),
    (
        "labelSelectorPath",
        (".spec.", ".status."),
        "should be a json path under either .spec or .status",
    ),
)


def _scale_errors(scale: Mapping[str, Any], path: Path) -> ErrorList:
    """validateCustomResourceDefinitionSubresources' rules for the scale subresource: JSON
    paths in dot notation under the parts of the object they name."""
    errs: ErrorList = []
    for field, prefixes, detail in _SCALE_PATHS:
        value, at = scale.get(field), path.child(field)
        if not value:
            if field != "labelSelectorPath":  # the only optional one
                errs.append(at.required())
            continue
        if not isinstance(value, str) or not value.startswith("."):
            errs.append(at.invalid(value, "must be a simple json path starting with ."))
        elif not value.startswith(prefixes):
            errs.append(at.invalid(value, detail))
    return errs


def _names_errors(names: CustomResourceDefinitionNames, path: Path) -> ErrorList:
    """ValidateCustomResourceDefinitionNames."""
    errs: ErrorList = []
    for field, value, mixed_case in (
        ("plural", names.plural, False),
        ("singular", names.singular, False),
        ("kind", names.kind, True),
        ("listKind", names.list_kind, True),
    ):
        problems = is_dns1035_label(value.lower() if mixed_case else value) if value else []
        if problems:
            prefix = "may have mixed case, but should otherwise match: " if mixed_case else ""
            errs.append(path.child(field).invalid(value, prefix + ",".join(problems)))
    for field, values in (("shortNames", names.short_names), ("categories", names.categories)):
        for i, value in enumerate(values or ()):
            problems = is_dns1035_label(value)
            if problems:
                errs.append(path.child(field).index(i).invalid(value, ",".join(problems)))
    if names.kind and names.kind == names.list_kind:
        errs.append(
            path.child("listKind").invalid(names.list_kind, "kind and listKind may not be the same")
        )
    return errs


def _column_errors(column: CustomResourceColumnDefinition, path: Path) -> ErrorList:
    """ValidateCustomResourceColumnDefinition."""
    errs: ErrorList = []
    types = f"must be one of {','.join(_COLUMN_TYPES)}"
    if not column.name:
        errs.append(path.child("name").required())
    if not column.type:
        errs.append(path.child("type").required(types))
    elif column.type not in _COLUMN_TYPES:
        errs.append(path.child("type").invalid(column.type, types))
    if column.format and column.format not in _COLUMN_FORMATS:
        formats = f"must be one of {','.join(_COLUMN_FORMATS)}"
        errs.append(path.child("format").invalid(column.format, formats))
    json_path = path.child("JSONPath")
    if not column.json_path:
        errs.append(json_path.required())
    elif not column.json_path.startswith("."):
        errs.append(
            json_path.invalid(column.json_path, "must be a simple json path starting with .")
        )
    return errs


def _update_errors(
    spec: CustomResourceDefinitionSpec, old: CustomResourceDefinitionSpec, established: bool
) -> ErrorList:
    """validateCustomResourceDefinitionSpecUpdate: what names the storage stays put."""
    path = Path("spec")
    unchanged = [
        ("group", spec.group, old.group),
        ("names.plural", spec.names.plural, old.names.plural),
    ]
    if established:
        unchanged = [
            ("scope", spec.scope, old.scope),
            ("names.kind", spec.names.kind, old.names.kind),
            *unchanged,
        ]
    return [path.child(f).invalid(new, _IMMUTABLE) for f, new, was in unchanged if new != was]


PLUGIN = Plugin(crdv1.GROUP + "/" + crdv1.VERSION, "CustomResourceDefinition", _mutate, _validate)
