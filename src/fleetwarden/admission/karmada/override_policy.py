"""OverridePolicy and ClusterOverridePolicy: their CRD schema and karmada-webhook's handlers.

Upstream: charts/karmada/_crds/bases/policy, pkg/webhook/{overridepolicy,
clusteroverridepolicy}, pkg/util/validation/validation.go (ValidateOverrideSpec).
"""

from __future__ import annotations

from typing import Any

from fleetwarden.admission.chain import Plugin, Request
from fleetwarden.admission.golang import wire
from fleetwarden.admission.karmada.propagation_policy import (
    CLUSTER_AFFINITY,
    foreign_selector_errors,
    validate_cluster_affinity,
)
from fleetwarden.admission.karmada.webhook import CREATE_UPDATE, through_webhook
from fleetwarden.admission.schema import SELECTOR, Array, Map, Object, String, validation
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.karmada import policy as policyv1
from fleetwarden.semantics.validation import validate_annotations, validate_labels

# --- CRD schema -------------------------------------------------------------------------------

_OPERATORS = String(
    enum=(policyv1.OVERRIDER_OP_ADD, policyv1.OVERRIDER_OP_REMOVE, policyv1.OVERRIDER_OP_REPLACE)
)
_COMMAND_ARGS = Array(
    items=Object(
        properties={
            "operator": String(enum=(policyv1.OVERRIDER_OP_ADD, policyv1.OVERRIDER_OP_REMOVE))
        },
        required=("containerName", "operator"),
    )
)
_LABELS_ANNOTATIONS = Array(
    items=Object(
        properties={"operator": _OPERATORS, "value": Map(values=String())},
        required=("operator", "value"),
    )
)
_PATCH_OPERATIONS = Array(
    items=Object(properties={"operator": _OPERATORS}, required=("operator", "subPath"))
)
_OVERRIDERS = Object(
    properties={
        "annotationsOverrider": _LABELS_ANNOTATIONS,
        "argsOverrider": _COMMAND_ARGS,
        "commandOverrider": _COMMAND_ARGS,
        "fieldOverrider": Array(
            items=Object(
                properties={"json": _PATCH_OPERATIONS, "yaml": _PATCH_OPERATIONS},
                required=("fieldPath",),
            )
        ),
        "imageOverrider": Array(
            items=Object(
                properties={
                    "component": String(
                        enum=(
                            policyv1.IMAGE_REGISTRY,
                            policyv1.IMAGE_REPOSITORY,
                            policyv1.IMAGE_TAG,
                        )
                    ),
                    "operator": _OPERATORS,
                    "predicate": Object(required=("path",)),
                },
                required=("component", "operator"),
            )
        ),
        "labelsOverrider": _LABELS_ANNOTATIONS,
        "plaintext": Array(
            items=Object(properties={"operator": _OPERATORS}, required=("operator", "path"))
        ),
    }
)

_SCHEMA = Object(
    properties={
        "spec": Object(
            properties={
                "overrideRules": Array(
                    items=Object(
                        properties={"overriders": _OVERRIDERS, "targetCluster": CLUSTER_AFFINITY},
                        required=("overriders",),
                    )
                ),
                "overriders": _OVERRIDERS,
                "resourceSelectors": Array(
                    items=Object(
                        properties={"labelSelector": SELECTOR}, required=("apiVersion", "kind")
                    )
                ),
                "targetCluster": CLUSTER_AFFINITY,
            }
        )
    },
    required=("spec",),
)

Policy = policyv1.OverridePolicy | policyv1.ClusterOverridePolicy

# --- the mutating webhook (OverridePolicy only) -----------------------------------------------


def _default_selector_namespaces(request: Request) -> None:
    """A resource selector without a namespace selects in the policy's own."""
    policy = request.of(policyv1.OverridePolicy)
    for selector in policy.spec.resource_selectors or []:
        selector.namespace = selector.namespace or policy.metadata.namespace


# --- the validating webhook -------------------------------------------------------------------

# go-openapi/jsonpointer's errors.Join(ErrInvalidStart, ErrPointer), newline and all.
_POINTER_ERROR = 'JSON pointer must be empty or start with a "/"\nJSON pointer error'


def _pointer_errors(pointer: str, path: Path) -> ErrorList:
    """jsonpointer.New: empty, or starting with a slash."""
    if pointer == "" or pointer.startswith("/"):
        return []
    return [path.invalid(pointer, _POINTER_ERROR)]


def _validate(request: Request) -> ErrorList:
    """ValidateOverrideSpec; `req.Namespace` is empty for a ClusterOverridePolicy."""
    policy: Policy = request.obj
    spec, path = policy.spec, Path("spec")
    errors: ErrorList = []
    if spec.target_cluster is not None:
        errors += validate_cluster_affinity(spec.target_cluster, path.child("targetCluster"))
        if spec.override_rules is not None:
            errors.append(
                path.child("targetCluster").invalid(
                    wire(spec.target_cluster), "overrideRules and targetCluster can't co-exist"
                )
            )
    if not _empty_overriders(spec.overriders) and spec.override_rules is not None:
        errors.append(
            path.child("overriders").invalid(
                wire(spec.overriders), "overrideRules and overriders can't co-exist"
            )
        )
    for i, rule in enumerate(spec.override_rules or []):
        errors += _validate_rule(rule, path.child("overrideRules").index(i))
    namespace = policy.metadata.namespace if request.info.namespaced else ""
    return errors + foreign_selector_errors(
        policy.spec.resource_selectors or [], namespace, path.child("resourceSelectors")
    )


def _empty_overriders(overriders: policyv1.Overriders) -> bool:
    """emptyOverrides: it leaves fieldOverrider out, as upstream does."""
    return not any(
        (
            overriders.plaintext,
            overriders.image_overrider,
            overriders.command_overrider,
            overriders.args_overrider,
            overriders.labels_overrider,
            overriders.annotations_overrider,
        )
    )


def _validate_rule(rule: policyv1.RuleWithCluster, path: Path) -> ErrorList:
    overriders, at = rule.overriders, path.child("overriders")
    errors: ErrorList = []
    for i, overrider in enumerate(overriders.annotations_overrider or []):
        errors += validate_annotations(
            overrider.value, at.child("annotationsOverrider").index(i).child("value")
        )
    for i, labels in enumerate(overriders.labels_overrider or []):
        errors += validate_labels(labels.value, at.child("labelsOverrider").index(i).child("value"))
    for i, image in enumerate(overriders.image_overrider or []):
        if image.predicate is not None:
            errors += _pointer_errors(
                image.predicate.path, at.child("imageOverrider").index(i).child("predicate", "path")
            )
    for i, field in enumerate(overriders.field_overrider or []):
        errors += _validate_field_overrider(field, at.child("fieldOverrider").index(i))
    return errors + validate_cluster_affinity(rule.target_cluster, path.child("targetCluster"))


def _validate_field_overrider(field: policyv1.FieldOverrider, path: Path) -> ErrorList:
    errors: ErrorList = []
    if field.yaml and field.json_:
        message = "FieldOverrider has both YAML and JSON set. Only one is allowed"
        errors.append(path.invalid(wire(field), message))
    if not field.yaml and not field.json_:
        errors.append(path.required("FieldOverrider must have either JSON or YAML set"))
    errors += _pointer_errors(field.field_path, path.child("fieldPath"))
    for name, operations in (("json", field.json_), ("yaml", field.yaml)):
        for i, operation in enumerate(operations or []):
            at = path.child(name).index(i)
            errors += _pointer_errors(operation.sub_path, at.child("subPath"))
            errors += _operator_value_errors(operation.operator, operation.value, at.child("value"))
    return errors


def _operator_value_errors(operator: str, value: Any, path: Path) -> ErrorList:
    """validateOverrideOperator: add and replace need a value, remove takes none."""
    given = value is not None
    if operator in (policyv1.OVERRIDER_OP_ADD, policyv1.OVERRIDER_OP_REPLACE) and not given:
        return [path.invalid(None, "value is required for add or replace operation")]
    if operator == policyv1.OVERRIDER_OP_REMOVE and given:
        return [path.invalid(value, "value is not allowed for remove operation")]
    return []


# --- registration -----------------------------------------------------------------------------

PLUGINS = [
    Plugin(
        f"{policyv1.GROUP}/{policyv1.VERSION}",
        "OverridePolicy",
        mutate=through_webhook(_SCHEMA, _default_selector_namespaces, CREATE_UPDATE),
        validate=validation(_SCHEMA, _validate),
    ),
    # No mutating webhook: a ClusterOverridePolicy's selectors keep the namespace they give.
    Plugin(
        f"{policyv1.GROUP}/{policyv1.VERSION}",
        "ClusterOverridePolicy",
        validate=validation(_SCHEMA, _validate),
    ),
]
