"""Client-side apply, as `kubectl apply` does it for custom resources.

The manifest last applied is kept on the object in the
`kubectl.kubernetes.io/last-applied-configuration` annotation. Applying again sends one
JSON merge patch computed three ways (jsonmergepatch.CreateThreeWayJSONMergePatch):
fields the new manifest sets that differ from the live object, and nulls for fields the
last manifest set and the new one dropped. Fields someone else set (a controller's
status, a taint added by `taint`) are left alone. Lists are replaced whole, as JSON merge
patch has it; kubectl's strategic merge for built-in kinds is not done here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fleetwarden.api.codec import without_nulls
from fleetwarden.api.errors import NotFound
from fleetwarden.api.kinds import KindInfo
from fleetwarden.client.client import Client, Obj
from fleetwarden.client.errors import ClientError

LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"

CREATED = "created"
CONFIGURED = "configured"
UNCHANGED = "unchanged"


@dataclass(frozen=True)
class Applied:
    operation: str  # CREATED, CONFIGURED or UNCHANGED, as `apply` prints it
    object: Obj
    # The live object had no last-applied annotation: it was not created by apply.
    annotation_was_missing: bool = False


def apply(client: Client, manifest: Mapping[str, Any], *, info: KindInfo | None = None) -> Applied:
    """Create the object, or patch it toward the manifest."""
    info = info or client.info_for(manifest)
    manifest = client.with_default_namespace(info, manifest)
    metadata = manifest["metadata"]
    name, namespace = metadata.get("name"), metadata.get("namespace", "")
    if not name:
        if metadata.get("generateName"):
            raise ClientError(
                f"from {metadata['generateName']}: cannot use generate name with apply"
            )
        raise ClientError("resource name may not be empty")
    modified = with_last_applied(manifest)
    try:
        current = client.get(info, name, namespace)
    except NotFound:
        return Applied(CREATED, client.create(without_nulls(modified), info=info))
    annotations = current.get("metadata", {}).get("annotations") or {}
    last = annotations.get(LAST_APPLIED_ANNOTATION)
    original = json.loads(last) if last else {}
    patch = three_way_merge_patch(original, modified, current)
    missing = last is None
    if not patch:
        return Applied(UNCHANGED, current, missing)
    return Applied(CONFIGURED, client.patch(info, name, namespace, patch), missing)


def with_last_applied(manifest: Mapping[str, Any]) -> Obj:
    """The manifest carrying itself (without the annotation) in the annotation."""
    obj: Obj = json.loads(json.dumps(manifest))
    metadata = obj.setdefault("metadata", {})
    annotations = {
        k: v for k, v in (metadata.get("annotations") or {}).items() if k != LAST_APPLIED_ANNOTATION
    }
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    encoded = go_json(obj)
    metadata["annotations"] = {**annotations, LAST_APPLIED_ANNOTATION: encoded}
    return obj


def go_json(value: Any) -> str:
    """What Go's json.Encoder writes for a map: sorted keys, compact, HTML escaped,
    with a newline: byte for byte the annotation kubectl writes."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text + "\n"


def create_merge_patch(original: Mapping[str, Any], modified: Mapping[str, Any]) -> Obj:
    """jsonpatch.CreateMergePatch: the merge patch that turns original into modified."""
    patch: Obj = {}
    for key, new in modified.items():
        if key not in original:
            patch[key] = new
            continue
        old = original[key]
        if isinstance(old, dict) and isinstance(new, dict):
            if nested := create_merge_patch(old, new):
                patch[key] = nested
        elif type(old) is not type(new) or old != new:
            patch[key] = new
    patch.update((key, None) for key in original if key not in modified)
    return patch


def three_way_merge_patch(
    original: Mapping[str, Any], modified: Mapping[str, Any], current: Mapping[str, Any]
) -> Obj:
    """jsonmergepatch.CreateThreeWayJSONMergePatch: changes from current to modified,
    and deletions from original to modified."""
    changes = _filter_nulls(create_merge_patch(current, modified), keep_nulls=False)
    deletions = _filter_nulls(create_merge_patch(original, modified), keep_nulls=True)
    return _merge(deletions, changes)


def _filter_nulls(patch: Mapping[str, Any], *, keep_nulls: bool) -> Obj:
    """keepOrDeleteNullInObj: only the nulls (deletions), or everything but them."""
    kept: Obj = {}
    for key, value in patch.items():
        if value is None:
            if keep_nulls:
                kept[key] = None
        elif isinstance(value, dict) and value:
            if nested := _filter_nulls(value, keep_nulls=keep_nulls):
                kept[key] = nested
        elif not keep_nulls:
            # An explicit empty map is a value, like a scalar or a list.
            kept[key] = value
    return kept


def _merge(base: Obj, extra: Mapping[str, Any]) -> Obj:
    """Two patches with disjoint leaves, as one."""
    merged = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        merged[key] = (
            _merge(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
        )
    return merged
