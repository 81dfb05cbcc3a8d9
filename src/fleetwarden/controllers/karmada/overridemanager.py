"""The override manager: what ClusterOverridePolicies and OverridePolicies change in a resource
template on its way to one cluster (pkg/util/overridemanager).

For each cluster the binding controller renders, the policies whose resourceSelectors match
the template (all of them when a policy has none) are ordered by implicit priority (kind
only, then label selector, then name), then by name, and each rule whose targetCluster
matches the cluster (or that has none) is applied in that order: ClusterOverridePolicies
first, then the OverridePolicies of the template's namespace, so that the most specific
policy has the last word. Within a rule the overriders run as upstream runs them: image,
command, args, labels, annotations, field, then plaintext. The Work records what was applied
in `policy.karmada.io/applied-cluster-overrides` and `policy.karmada.io/applied-overrides`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from fleetwarden.api.codec import load_json, load_yaml
from fleetwarden.api.karmada import policy as policyv1
from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.meta import Resource
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.work import Binding, resource_template
from fleetwarden.runtime.events import NORMAL, WARNING, EventRecorder
from fleetwarden.runtime.informer import Cache
from fleetwarden.semantics.affinity import cluster_matches
from fleetwarden.semantics.image_reference import (
    ImageComponents,
    ImageReferenceError,
    parse_image,
)
from fleetwarden.semantics.resource_selectors import ImplicitPriority, selectors_priority
from fleetwarden.store.patch import PatchError, json_patch

OVERRIDE_POLICY = REGISTRY.info(f"{policyv1.GROUP}/{policyv1.VERSION}", "OverridePolicy")
CLUSTER_OVERRIDE_POLICY = REGISTRY.info(
    f"{policyv1.GROUP}/{policyv1.VERSION}", "ClusterOverridePolicy"
)

# The component of the Events it records (OverrideManagerName).
OVERRIDE_MANAGER = "override-manager"
APPLY_OVERRIDE_POLICY_SUCCEED = "ApplyOverridePolicySucceed"
APPLY_OVERRIDE_POLICY_FAILED = "ApplyOverridePolicyFailed"

Obj = dict[str, Any]
OverridePolicies = policyv1.OverridePolicy | policyv1.ClusterOverridePolicy


class OverrideError(ValueError):
    """An overrider that does not apply to the manifest; the message says why."""


# --- which overriders apply ---------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyOverriders:
    """One matching rule of one policy (policyOverriders)."""

    name: str
    namespace: str
    overriders: policyv1.Overriders


@dataclass(frozen=True)
class Overrides:
    """What applies to one template in one cluster, in the order it is applied."""

    cluster: Sequence[PolicyOverriders] = ()
    namespaced: Sequence[PolicyOverriders] = ()

    def __bool__(self) -> bool:
        return bool(self.cluster or self.namespaced)


@dataclass(frozen=True)
class TemplatePolicies:
    """The policies selecting one template, ranked (each kind apart): what is the same for
    every cluster the template goes to."""

    cluster: Sequence[OverridePolicies] = ()
    namespaced: Sequence[OverridePolicies] = ()

    def for_cluster(self, cluster: Cluster) -> Overrides:
        """The rules that apply in this cluster, in the order they are applied."""
        return Overrides(_rules_for(self.cluster, cluster), _rules_for(self.namespaced, cluster))


def template_policies(cache: Cache, template: Resource) -> TemplatePolicies:
    """The ClusterOverridePolicies, and for a namespaced template the OverridePolicies of its
    namespace, that select the template."""
    namespace = template.metadata.namespace
    policies = cache.informer(OVERRIDE_POLICY).list(namespace) if namespace else []
    return TemplatePolicies(
        _ranked(cache.informer(CLUSTER_OVERRIDE_POLICY).list(), template),
        _ranked(policies, template),
    )


def _ranked(policies: Iterable[Resource], template: Resource) -> list[OverridePolicies]:
    """The policies selecting the template, by implicit priority, then name (the first
    half of getOverridersFromOverridePolicies)."""
    ranked: list[tuple[ImplicitPriority, str, OverridePolicies]] = []
    for policy in policies:
        assert isinstance(policy, OverridePolicies)
        priority = implicit_priority(policy, template)
        if priority != ImplicitPriority.MISMATCH:
            ranked.append((priority, policy.name, policy))
    ranked.sort(key=lambda entry: entry[:2])
    return [policy for _, _, policy in ranked]


def _rules_for(policies: Sequence[OverridePolicies], cluster: Cluster) -> list[PolicyOverriders]:
    """Each rule of the ranked policies whose targetCluster matches the cluster (or that
    has none)."""
    return [
        PolicyOverriders(policy.name, policy.namespace, rule.overriders)
        for policy in policies
        for rule in policy.spec.rules()
        if rule.target_cluster is None or cluster_matches(cluster, rule.target_cluster)
    ]


def implicit_priority(policy: OverridePolicies, template: Resource) -> ImplicitPriority:
    """How the policy selects the template: a policy without selectors selects everything."""
    selectors = policy.spec.resource_selectors
    if not selectors:
        return ImplicitPriority.MATCH_ALL
    return selectors_priority(template, selectors)


def selects(policy: Resource, binding: Resource, cache: Cache) -> bool:
    """Whether a policy's selectors select the binding's template (a policy without any
    selects every binding; a template that is gone, none)."""
    assert isinstance(policy, OverridePolicies)
    selectors = policy.spec.resource_selectors
    if not selectors:
        return True
    assert isinstance(binding, Binding)
    template = resource_template(binding, cache)
    return template is not None and selectors_priority(template, selectors) > 0


# --- applying them ------------------------------------------------------------------------------


def apply_overrides(
    manifest: Obj, overrides: Overrides, cluster: str, template: Resource, recorder: EventRecorder
) -> dict[str, str]:
    """ApplyOverridePolicies on the manifest, in place, with an Event on the template for each
    rule; the Work's annotations recording what was applied. An OverrideError names the
    policy whose overriders failed."""
    annotations: dict[str, str] = {}
    for applied, key, describe in (
        (overrides.cluster, policyv1.APPLIED_CLUSTER_OVERRIDES_ANNOTATION, _cluster_policy),
        (overrides.namespaced, policyv1.APPLIED_OVERRIDES_ANNOTATION, _namespaced_policy),
    ):
        for item in applied:
            what = f"{describe(item)} for cluster({cluster})"
            try:
                apply_overriders(manifest, item.overriders)
            except OverrideError:
                recorder.event(
                    template, WARNING, APPLY_OVERRIDE_POLICY_FAILED, f"Apply {what} failed."
                )
                raise
            recorder.event(
                template, NORMAL, APPLY_OVERRIDE_POLICY_SUCCEED, f"Apply {what} succeed."
            )
        if applied:
            annotations[key] = applied_overrides_json(applied)
    return annotations


def _cluster_policy(item: PolicyOverriders) -> str:
    return f"cluster override policy({item.name})"


def _namespaced_policy(item: PolicyOverriders) -> str:
    return f"override policy({item.namespace}/{item.name})"


def apply_overriders(manifest: Obj, overriders: policyv1.Overriders) -> None:
    """applyPolicyOverriders: each kind of overrider in upstream's order."""
    for image in overriders.image_overrider or []:
        _patch(manifest, _image_patches(manifest, image))
    for target, command_args in (
        ("command", overriders.command_overrider),
        ("args", overriders.args_overrider),
    ):
        for overrider in command_args or []:
            _patch(manifest, _command_args_patches(manifest, target, overrider))
    for key, labels_annotations in (
        ("labels", overriders.labels_overrider),
        ("annotations", overriders.annotations_overrider),
    ):
        for label_annotation in labels_annotations or []:
            _patch(manifest, _label_annotation_patches(manifest, key, label_annotation))
    for field in overriders.field_overrider or []:
        _apply_field_overrider(manifest, field)
    _patch(manifest, [_operation(p.operator, p.path, p.value) for p in overriders.plaintext or []])


def _operation(op: str, path: str, value: Any) -> Obj:
    return {"op": op, "path": path, "value": value}


def _patch(manifest: Obj, operations: list[Obj]) -> None:
    """applyJSONPatch, in place."""
    if not operations:
        return
    patched = _json_patch(manifest, operations)
    if not isinstance(patched, dict):
        raise OverrideError("the patched manifest is not an object")
    manifest.clear()
    manifest.update(patched)


def _json_patch(document: Any, operations: list[Obj]) -> Any:
    try:
        return json_patch(document, operations)
    except PatchError as exc:
        raise OverrideError(str(exc)) from None


# image ------------------------------------------------------------------------------------------

# Where each workload kind holds its pod spec; the image overrider without a predicate
# changes each of its containers (not the init containers), the other kinds nothing.
_POD_SPEC_PATHS = {
    "Pod": ("spec",),
    "ReplicaSet": ("spec", "template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
}


def _containers(manifest: Obj) -> tuple[str, list[Any]]:
    """The pointer to the kind's containers and the containers, or ("", [])."""
    path = _POD_SPEC_PATHS.get(manifest.get("kind", ""))
    if path is None:
        return "", []
    node: Any = manifest
    for key in (*path, "containers"):
        node = node.get(key) if isinstance(node, dict) else None
    return "/" + "/".join((*path, "containers")), node if isinstance(node, list) else []


def _image_patches(manifest: Obj, overrider: policyv1.ImageOverrider) -> list[Obj]:
    """buildPatches: each container's image, or the one at the predicate's path."""
    if overrider.predicate is not None:
        path = overrider.predicate.path
        try:
            image = _image_at(manifest, path)
        except OverrideError as exc:
            raise OverrideError(
                f"failed to obtain imageValue with predicate path({path}), error: {exc}"
            ) from None
        return [_operation("replace", path, _override_image(image, overrider))]
    prefix, containers = _containers(manifest)
    return [
        _operation("replace", f"{prefix}/{i}/image", _override_image(_image_of(c), overrider))
        for i, c in enumerate(containers)
    ]


def _image_of(container: Any) -> str:
    image = container.get("image") if isinstance(container, dict) else None
    return image if isinstance(image, str) else ""


def _image_at(manifest: Obj, path: str) -> str:
    """obtainImageValue: through maps and, by index, lists, to a string."""
    segments = path.strip("/").split("/")
    node: Any = manifest
    index = 0
    while index < len(segments) - 1:
        value = node.get(segments[index]) if isinstance(node, dict) else None
        if isinstance(value, dict):
            node = value
        elif isinstance(value, list):
            position = segments[index + 1]
            if not position.lstrip("-").isdigit():
                raise OverrideError(f"path({position}) of rawObj's is not number")
            node = _list_item(value, int(position))
            index += 1
        else:
            raise OverrideError(
                f"path({segments[index]}) of rawObj's type is not map[string]interface{{}} and "
                "[]interface{}"
            )
        index += 1
    image = node.get(segments[-1]) if isinstance(node, dict) else None
    if not isinstance(image, str):
        raise OverrideError(f"failed to convert path({segments[-1]}) to string")
    return image


def _list_item(items: list[Any], position: int) -> Any:
    if not 0 <= position < len(items):
        raise OverrideError(f"index out of range [{position}] with length {len(items)}")
    return items[position]


def _override_image(image: str, overrider: policyv1.ImageOverrider) -> str:
    """overrideImage: add appends the value to the component, replace sets it, remove
    empties it."""
    try:
        components = parse_image(image)
    except ImageReferenceError as exc:
        raise OverrideError(f"failed to parse image value({image}), error: {exc}") from None
    _IMAGE_COMPONENTS[overrider.component](components, overrider.operator, overrider.value or "")
    return str(components)


def _registry(image: ImageComponents, operator: str, value: str) -> None:
    image.hostname = _changed(image.hostname, operator, value)


def _repository(image: ImageComponents, operator: str, value: str) -> None:
    image.repository = _changed(image.repository, operator, value)


def _tag(image: ImageComponents, operator: str, value: str) -> None:
    if operator == policyv1.OVERRIDER_OP_REMOVE:
        image.remove_tag_or_digest()
    elif operator in (policyv1.OVERRIDER_OP_ADD, policyv1.OVERRIDER_OP_REPLACE):
        added = operator == policyv1.OVERRIDER_OP_ADD
        image.set_tag_or_digest(image.tag_or_digest() + value if added else value)


def _changed(current: str, operator: str, value: str) -> str:
    return {
        policyv1.OVERRIDER_OP_ADD: current + value,
        policyv1.OVERRIDER_OP_REPLACE: value,
        policyv1.OVERRIDER_OP_REMOVE: "",
    }.get(operator, current)


_IMAGE_COMPONENTS: dict[str, Callable[[ImageComponents, str, str], None]] = {
    policyv1.IMAGE_REGISTRY: _registry,
    policyv1.IMAGE_REPOSITORY: _repository,
    policyv1.IMAGE_TAG: _tag,
}


# command and args -------------------------------------------------------------------------------


def _command_args_patches(
    manifest: Obj, target: str, overrider: policyv1.CommandArgsOverrider
) -> list[Obj]:
    """buildCommandArgsPatches: the named container's command (or args) with the values
    added at the end, or removed wherever they are; set whole where it had none."""
    prefix, containers = _containers(manifest)
    patches: list[Obj] = []
    for i, container in enumerate(containers):
        if not isinstance(container, dict) or container.get("name") != overrider.container_name:
            continue
        current = container.get(target)
        values = [str(v) for v in current] if isinstance(current, list) else []
        op = "add" if current is None else "replace"
        patches.append(_operation(op, f"{prefix}/{i}/{target}", _command_args(values, overrider)))
    return patches


def _command_args(values: list[str], overrider: policyv1.CommandArgsOverrider) -> list[str]:
    given = overrider.value or []
    if overrider.operator == policyv1.OVERRIDER_OP_ADD:
        return values + given
    if overrider.operator == policyv1.OVERRIDER_OP_REMOVE:
        return [v for v in values if v not in given]
    return values


# labels and annotations -------------------------------------------------------------------------


def _label_annotation_patches(
    manifest: Obj, key: str, overrider: policyv1.LabelAnnotationOverrider
) -> list[Obj]:
    """buildLabelAnnotationOverriderPatches: add sets each key (making the map if need be);
    replace and remove touch only the keys the manifest has."""
    metadata = manifest.setdefault("metadata", {})
    patches: list[Obj] = []
    for name, value in (overrider.value or {}).items():
        current = metadata.get(key)
        if overrider.operator == policyv1.OVERRIDER_OP_ADD:
            if not _string_map(current):
                metadata[key] = {}
        elif not _string_map(current) or name not in current:
            continue
        pointer = f"/metadata/{key}/{name.replace('/', '~1')}"
        patches.append(_operation(overrider.operator, pointer, value))
    return patches


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


# fields holding JSON or YAML ----------------------------------------------------------------------


def _apply_field_overrider(manifest: Obj, field: policyv1.FieldOverrider) -> None:
    """applyFieldOverriders: the string at fieldPath, parsed as YAML (or JSON), patched at
    each subPath, and written back in the same language."""
    text = _pointer_get(manifest, field.field_path)
    if not isinstance(text, str):
        raise OverrideError(
            f"Get object's value by overrider's path({field.field_path}) is not string"
        )
    if field.yaml:
        operations = [_operation(o.operator, o.sub_path, o.value) for o in field.yaml]
        written = _dump_yaml(_json_patch(_load_yaml(text), operations))
    elif field.json_:
        operations = [_operation(o.operator, o.sub_path, o.value) for o in field.json_]
        written = go_json(_json_patch(_load_json(text), operations))
    else:
        written = ""  # as upstream: an overrider with neither writes the empty string
    _pointer_set(manifest, field.field_path, written)


def _tokens(pointer: str) -> list[str]:
    if pointer and not pointer.startswith("/"):
        raise OverrideError('JSON pointer must be empty or start with a "/"')
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def _pointer_get(document: Any, pointer: str) -> Any:
    node = document
    for token in _tokens(pointer):
        node = _step(node, token)
    return node


def _step(node: Any, token: str) -> Any:
    if isinstance(node, dict):
        if token not in node:
            raise OverrideError(f'object has no key "{token}": JSON pointer error')
        return node[token]
    if isinstance(node, list) and token.isdigit():
        return _list_item(node, int(token))
    raise OverrideError(f"invalid token reference {json.dumps(token)}: JSON pointer error")


def _pointer_set(document: Any, pointer: str, value: str) -> None:
    tokens = _tokens(pointer)
    parent = _pointer_get(document, "".join(f"/{t}" for t in tokens[:-1]))
    last = tokens[-1] if tokens else ""
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list) and last.isdigit():
        _list_item(parent, int(last))
        parent[int(last)] = value


def _load_yaml(text: str) -> Any:
    try:
        return load_yaml(text)
    except (yaml.YAMLError, ValueError) as exc:
        raise OverrideError(f"error converting YAML to JSON: {exc}") from None


def _load_json(text: str) -> Any:
    try:
        return load_json(text)  # bounded: the string is a template's, anyone's to write
    except ValueError as exc:
        raise OverrideError(str(exc)) from None


class _GoYAMLDumper(yaml.SafeDumper):
    """go-yaml v2's choice of quotes: a string that cannot go plain is double-quoted."""

    def choose_scalar_style(self) -> str:
        style: str = super().choose_scalar_style()
        return '"' if style == "'" else style


def _dump_yaml(value: Any) -> str:
    """sigs.k8s.io/yaml's JSONToYAML: block style, keys sorted."""
    return yaml.dump(
        value, Dumper=_GoYAMLDumper, default_flow_style=False, sort_keys=True, allow_unicode=True
    )


def go_json(value: Any) -> str:
    """json.Marshal's text: compact, HTML characters escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text


# what was applied -------------------------------------------------------------------------------


def applied_overrides_json(applied: Iterable[PolicyOverriders]) -> str:
    """AppliedOverrides.MarshalJSON: the items by policy name, as Go marshals the types."""
    items = sorted(applied, key=lambda item: item.name)
    return go_json(
        [
            {"policyName": item.name, "overriders": _overriders_json(item.overriders)}
            for item in items
        ]
    )


def _overriders_json(overriders: policyv1.Overriders) -> Obj:
    """Overriders as Go marshals them: omitempty fields left out when empty, a JSON value
    (apiextensionsv1.JSON) written even when absent (as null), maps with sorted keys."""
    data = overriders.model_dump(by_alias=True, exclude_none=True, mode="json")
    data = {key: items for key, items in data.items() if items}
    for item in data.get("plaintext", []):
        item["value"] = _sorted(item.get("value"))
    for item in data.get("imageOverrider", []):
        if not item.get("value"):
            item.pop("value", None)
    for item in [*data.get("commandOverrider", []), *data.get("argsOverrider", [])]:
        if not item.get("value"):
            item.pop("value", None)
    for item in [*data.get("labelsOverrider", []), *data.get("annotationsOverrider", [])]:
        item["value"] = _sorted(item.get("value"))
    for field in data.get("fieldOverrider", []):
        for language in ("json", "yaml"):
            if not field.get(language):
                field.pop(language, None)
            for operation in field.get(language, []):
                operation["value"] = _sorted(operation.get("value"))
    return data


def _sorted(value: Any) -> Any:
    """Free JSON as Go writes a map: keys in order."""
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value
