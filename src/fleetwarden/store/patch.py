"""JSON Merge Patch (RFC 7386), JSON Patch (RFC 6902) and Kubernetes' strategic merge patch,
as pure functions on JSON values.

No function changes its arguments. The result may share unchanged subtrees with
the target (merge patch), so callers that keep both should hand in a copy they own.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from fleetwarden.api.codec import without_nulls

# kube-apiserver's --json-patch-max-copy-bytes default: how much a JSON patch's copy
# operations may add to the document, together (each copy of a copy doubles it).
MAX_COPY_BYTES = 3 * 1024 * 1024


class PatchError(ValueError):
    """A patch that is malformed, or that does not apply to the document."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 MergePatch: objects merge key by key, null removes, anything else replaces."""
    if not isinstance(patch, dict):
        return _copy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = merge_patch(result.get(key), value)
        else:
            result[key] = _copy(value)
    return result


def _copy(value: Any) -> Any:
    """copy.deepcopy, quicker on the JSON values patches are made of."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return value
    if kind is list:
        return [_copy(v) for v in value]
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    return copy.deepcopy(value)


def json_patch(document: Any, operations: Any) -> Any:
    """RFC 6902: apply the operations in order; any failure fails the whole patch."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be an array of operations")
    doc = copy.deepcopy(document)
    copied = 0
    for op in operations:
        if isinstance(op, dict) and op.get("op") == "copy":
            copied += len(json.dumps(_get(doc, _member(op, "from", "copy"))))
            if copied > MAX_COPY_BYTES:
                raise PatchError(
                    "Unable to complete the copy, the accumulated size increase of copy is "
                    f"{copied}, exceeding the limit {MAX_COPY_BYTES}"
                )
        doc = _apply(doc, op)
    return doc


def _apply(doc: Any, op: Any) -> Any:
    if not isinstance(op, dict):
        raise PatchError(f"a JSON patch operation must be an object, got {op!r}")
    name = op.get("op")
    path = _member(op, "path", name)
    if name == "add":
        return _add(doc, path, copy.deepcopy(_value(op)))
    if name == "remove":
        return _remove(doc, path)
    if name == "replace":
        return _replace(doc, path, copy.deepcopy(_value(op)))
    if name in ("move", "copy"):
        source = _member(op, "from", name)
        if name == "move" and (path + "/").startswith(source + "/") and path != source:
            raise PatchError(f"move operation: {source!r} cannot be moved into its own child")
        value = _get(doc, source)
        if name == "move":
            doc = _remove(doc, source)
        return _add(doc, path, copy.deepcopy(value))
    if name == "test":
        if not json_equal(_get(doc, path), _value(op)):
            raise PatchError(f"testing value {path} failed: test failed")
        return doc
    raise PatchError(f"unsupported JSON patch operation {name!r}")


def _member(op: dict[str, Any], key: str, name: Any) -> str:
    value = op.get(key)
    if not isinstance(value, str):
        raise PatchError(f"{name} operation: missing or invalid {key!r} member")
    return value


def _value(op: dict[str, Any]) -> Any:
    if "value" not in op:
        raise PatchError(f"{op.get('op')} operation: missing 'value' member")
    return op["value"]


def _tokens(pointer: str) -> list[str]:
    """RFC 6901: `/a~1b/c~0d` -> ["a/b", "c~d"] (~1 is undone before ~0)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"JSON pointer {pointer!r} must start with '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _index(array: list[Any], token: str, pointer: str, *, end_ok: bool) -> int:
    if token == "-" and end_ok:
        return len(array)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(f"{pointer}: invalid array index {token!r}")
    index = int(token) if len(token) <= 18 else len(array) + 1  # past any array, whatever
    if index > len(array) or (index == len(array) and not end_ok):
        raise PatchError(f"{pointer}: array index {index} out of bounds")
    return index


def _walk(doc: Any, tokens: list[str], pointer: str) -> Any:
    node = doc
    for token in tokens:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, pointer, end_ok=False)]
        else:
            raise PatchError(f"{pointer}: missing value")
    return node


def _get(doc: Any, pointer: str) -> Any:
    return _walk(doc, _tokens(pointer), pointer)


def _add(doc: Any, pointer: str, value: Any) -> Any:
    tokens = _tokens(pointer)
    if not tokens:
        return value
    parent, token = _walk(doc, tokens[:-1], pointer), tokens[-1]
    if isinstance(parent, dict):
        parent[token] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, token, pointer, end_ok=True), value)
    else:
        raise PatchError(f"add operation does not apply: doc is missing path: {pointer}")
    return doc


def _replace(doc: Any, pointer: str, value: Any) -> Any:
    """In place: a member keeps its position among its siblings, as evanphx/json-patch's."""
    tokens = _tokens(pointer)
    if not tokens:
        return value
    parent, token = _walk(doc, tokens[:-1], pointer), tokens[-1]
    if isinstance(parent, dict) and token in parent:
        parent[token] = value
    elif isinstance(parent, list):
        parent[_index(parent, token, pointer, end_ok=False)] = value
    else:
        raise PatchError(f"replace operation does not apply: doc is missing key: {pointer}")
    return doc


def _remove(doc: Any, pointer: str) -> Any:
    tokens = _tokens(pointer)
    if not tokens:
        return None
    parent, token = _walk(doc, tokens[:-1], pointer), tokens[-1]
    if isinstance(parent, dict) and token in parent:
        del parent[token]
    elif isinstance(parent, list):
        del parent[_index(parent, token, pointer, end_ok=False)]
    else:
        raise PatchError(f"remove operation does not apply: doc is missing path: {pointer}")
    return doc


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: unlike Python's ==, true is not 1 and 1 is not "1"."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


# --- strategic merge patch ----------------------------------------------------------------


class PatchMeta(NamedTuple):
    """A field's `patchStrategy` and `patchMergeKey` struct tags.

    strategy is "merge" (a list merges: maps by merge_key, scalars as a set), "replace" (a
    map is replaced whole) or "" (a list is replaced whole, a map merges). retain_keys marks
    the fields whose patches carry `$retainKeys`; the directive is obeyed wherever it is.
    """

    strategy: str = ""
    merge_key: str = ""
    retain_keys: bool = False


# Field path (dotted, list items transparent: `spec.template.spec.containers.env`) -> tags.
MergeKeys = Mapping[str, PatchMeta]

_NO_META = PatchMeta()
_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_SET_ORDER = "$setElementOrder"
_DELETE_FROM = "$deleteFromPrimitiveList"
_LIST_TYPE = "[]interface {}"


def strategic_merge_patch(original: Any, patch: Any, merge_keys: MergeKeys) -> dict[str, Any]:
    """Apply a strategic merge patch as the API server does for its built-in kinds
    (apimachinery's StrategicMergeMapPatch): maps merge and null deletes; a list merges
    where its field's tags say so and is replaced otherwise; the directives `$patch`,
    `$retainKeys`, `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` are
    obeyed. Neither argument is changed."""
    if not isinstance(patch, dict):
        raise PatchError("invalid JSON document")
    target = _copy(original) if isinstance(original, dict) else {}
    return _StrategicMerge(merge_keys).merge_map(target, _copy(patch), "")


class _StrategicMerge:
    """Works in place on copies the caller made, of the original and the patch alike."""

    def __init__(self, merge_keys: MergeKeys) -> None:
        self._merge_keys = merge_keys

    def _meta(self, path: str) -> PatchMeta:
        return self._merge_keys.get(path, _NO_META)

    def merge_map(
        self, original: dict[str, Any], patch: dict[str, Any], path: str
    ) -> dict[str, Any]:
        if _DIRECTIVE in patch:
            return _map_directive(patch)
        _retain_keys(original, patch)
        self._ordered_lists(original, patch, path)
        for key, value in patch.items():
            name, deletions = _deletion_list_key(key)
            current = original.get(name)
            if value is None:
                original.pop(name, None)
            elif isinstance(value, dict) and isinstance(current, dict):
                original[name] = self._merge_field_map(current, value, _join(path, name))
            elif isinstance(value, list) and isinstance(current, list):
                original[name] = self._merge_list(current, value, _join(path, name), deletions)
            elif not deletions:
                _set_fresh(original, name, value)
        return original

    def _merge_field_map(self, original: dict[str, Any], patch: dict[str, Any], path: str) -> Any:
        if self._meta(path).strategy == "replace":
            return patch
        return self.merge_map(original, patch, path)

    def _merge_list(
        self, original: list[Any], patch: list[Any], path: str, deletions: bool
    ) -> list[Any]:
        return self._merge_list_seen(original, patch, path, deletions)[0]

    def _merge_list_seen(
        self, original: list[Any], patch: list[Any], path: str, deletions: bool
    ) -> tuple[list[Any], list[Any]]:
        """-> (the merged list, the original as upstream sees it once merged).

        Upstream merges a list of maps in place: its deletions shift the items left and its
        additions take the freed slots, so the original that `$setElementOrder` then orders
        by is the merged list cut to the original's length. Its own cases depend on this.
        """
        meta = self._meta(path)
        if meta.strategy != "merge" and not deletions:
            return patch, original
        if not original and not patch:
            return original, original
        if not _holds_maps(original, patch):
            if deletions:
                dropped = {_hashable(v) for v in patch}
                return [v for v in original if _hashable(v) not in dropped], original
            return _ordered(_unique([*original, *patch]), patch, original, ""), original
        if not meta.merge_key:
            raise PatchError(f"cannot merge lists without merge key for {path}")
        kept, items, replaced = _list_directives(original, patch, meta.merge_key)
        merged = list(kept)
        for item in items:
            index = _find(merged, meta.merge_key, _merge_value(item, meta.merge_key))
            if index is None:
                merged.append(item)
            else:
                merged[index] = self.merge_map(merged[index], item, path)
        seen = original if replaced else merged[: len(original)]
        return _ordered(merged, items, kept, meta.merge_key), seen

    def _ordered_lists(self, original: dict[str, Any], patch: dict[str, Any], path: str) -> None:
        """Merge each list a `$setElementOrder/<list>` names and put its items in that
        order; the rest of the patch then leaves the list alone."""
        for directive in [k for k in patch if k.startswith(_SET_ORDER)]:
            order = _as_list(patch.pop(directive))
            name = _directive_target(directive, _SET_ORDER, "setElementOrder list")
            given, current = patch.pop(name, None), original.get(name)
            if given is None and current is None:
                continue
            given, current = _as_list(given or []), _as_list(current or [])
            key = self._meta(_join(path, name)).merge_key
            _check_order(given, order, key)
            if name not in original:
                merged, seen = _without_directives(given), current
            elif not given:
                merged, seen = current, current
            else:
                merged, seen = self._merge_list_seen(current, given, _join(path, name), False)
            if not (current or given):
                raise PatchError("no elements in any of the given slices")
            original[name] = _ordered(merged, order, seen, key)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _as_list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise PatchError(f"expected a {_LIST_TYPE}, but received a {_go_type(value)}")
    return value


def _map_directive(patch: dict[str, Any]) -> dict[str, Any]:
    directive = patch[_DIRECTIVE]
    if directive == "replace":
        del patch[_DIRECTIVE]
        return patch
    if directive == "delete":
        return {}
    raise PatchError(f"unknown patch type: {_go_fmt(directive)} in map: {_go_fmt(patch)}")


def _retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """`$retainKeys`: the map keeps only the listed fields, and the patch may set no other."""
    if _RETAIN_KEYS not in patch:
        return
    retained = patch.pop(_RETAIN_KEYS)
    if not isinstance(retained, list):
        raise PatchError("invalid patch format of retainKeys")
    for key, value in patch.items():
        directive = key.startswith((_DELETE_FROM, _SET_ORDER))
        if value is not None and not directive and key not in retained:
            raise PatchError("invalid patch format of retainKeys")
    for key in [k for k in original if k not in retained]:
        del original[key]


def _deletion_list_key(key: str) -> tuple[str, bool]:
    """`$deleteFromPrimitiveList/<list>` -> (<list>, True); any other key -> (key, False)."""
    if not key.startswith(_DELETE_FROM):
        return key, False
    return _directive_target(key, _DELETE_FROM, "primitive list"), True


def _directive_target(key: str, prefix: str, what: str) -> str:
    head, slash, name = key.partition("/")
    if head != prefix or not slash:
        raise PatchError(f"invalid patch format of {what}")
    return name


def _set_fresh(target: dict[str, Any], key: str, value: Any) -> None:
    """A value the original lacks (or holds in another shape) is taken as patched, less its
    nulls and the maps that carry a `$patch` (they have nothing to act on)."""
    if isinstance(value, dict) and _DIRECTIVE in value:
        target.pop(key, None)
    else:
        target[key] = _without_directives(without_nulls(value))


def _without_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_directives(v) for k, v in value.items() if not _is_directive(v)}
    if isinstance(value, list):
        return [_without_directives(v) for v in value if not _is_directive(v)]
    return value


def _is_directive(value: Any) -> bool:
    return isinstance(value, dict) and _DIRECTIVE in value


def _holds_maps(*lists: list[Any]) -> bool:
    """Whether the lists hold maps; their items must all be of one JSON type, not lists."""
    types = {_go_type(v) for values in lists for v in values}
    if _LIST_TYPE in types:
        raise PatchError("lists of lists are not supported")
    if len(types) > 1:
        raise PatchError(f"list element types are not identical: {_go_fmt(list(lists))}")
    return types == {"map[string]interface {}"}


def _hashable(value: Any) -> tuple[bool, Any]:
    """A set key with JSON's equality: true is not 1 (but 1 is 1.0)."""
    if isinstance(value, dict | list):
        raise PatchError(f"cannot compare {_go_fmt(value)} as a list item")
    return isinstance(value, bool), value


def _unique(values: list[Any]) -> list[Any]:
    seen: set[tuple[bool, Any]] = set()
    unique = []
    for value in values:
        if _hashable(value) not in seen:
            seen.add(_hashable(value))
            unique.append(value)
    return unique


def _merge_value(item: Any, key: str) -> Any:
    if not isinstance(item, dict):
        raise PatchError(f"expected a map[string]interface {{}}, but received a {_go_type(item)}")
    if key not in item:
        raise PatchError(f"map: {_go_fmt(item)} does not contain declared merge key: {key}")
    return item[key]


def _find(items: list[Any], key: str, value: Any) -> int | None:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise PatchError(f"value for key {index} is not a map")
        if key in item and json_equal(item[key], value):
            return index
    return None


def _list_directives(
    original: list[Any], patch: list[Any], key: str
) -> tuple[list[Any], list[Any], bool]:
    """Obey a merging list's `$patch` items: `delete` drops every item with that key,
    `replace` makes the patch's other items the whole list.
    -> (the original left, the plain items to merge into it, whether it was replaced)."""
    plain, replace = [], False
    for item in patch:
        if _DIRECTIVE not in item:
            plain.append(item)
        elif item[_DIRECTIVE] == "delete":
            value = _merge_value(item, key)
            original = [o for o in original if _find([o], key, value) is None]
        elif item[_DIRECTIVE] == "replace":
            replace = True
        elif item[_DIRECTIVE] == "merge":
            raise PatchError("merging lists cannot yet be specified in the patch")
        else:
            directive = _go_fmt(item[_DIRECTIVE])
            raise PatchError(f"unknown patch type: {directive} in map: {_go_fmt(item)}")
    return (plain, [], True) if replace else (original, plain, False)


def _check_order(patch: list[Any], order: list[Any], key: str) -> None:
    """The patch's items (deletions aside) must come in `$setElementOrder`'s order."""
    if not order or not patch:
        return
    items = [i for i in patch if not (key and _is_directive(i) and i[_DIRECTIVE] == "delete")]
    i = j = 0
    while i < len(items) and j < len(order):
        if _is_directive(items[i]):
            i += 1
            continue
        if key:
            same = json_equal(_merge_value(items[i], key), _merge_value(order[j], key))
        else:
            same = json_equal(items[i], order[j])
        i, j = i + same, j + 1
    if i < len(items):
        raise PatchError(
            f"The order in patch list:\n{_go_fmt(patch)}\n doesn't match {_SET_ORDER} "
            f"list:\n{_go_fmt(order)}\n"
        )


def _ordered(
    merged: list[Any], patch_order: list[Any], server_order: list[Any], key: str
) -> list[Any]:
    """The merged items the patch names, in the patch's order, and the ones only the server
    has, in the server's; the two interleaved as the server had them where it can tell."""

    def identity(item: Any) -> tuple[bool, Any]:
        return _hashable(_merge_value(item, key) if key else item)

    def positions(items: list[Any]) -> dict[tuple[bool, Any], int]:
        found: dict[tuple[bool, Any], int] = {}
        for index, item in enumerate(items):
            found.setdefault(identity(item), index)
        return found

    in_patch, in_server = positions(patch_order), positions(server_order)
    from_patch = sorted(
        (i for i in merged if identity(i) in in_patch), key=lambda i: in_patch[identity(i)]
    )
    server_only = sorted(
        (i for i in merged if identity(i) not in in_patch),
        key=lambda i: in_server.get(identity(i), len(server_order)),
    )
    # Each server-only item goes before the first patch item the server had after it.
    result: list[Any] = []
    while server_only and from_patch:
        left, right = (
            in_server.get(identity(server_only[0])),
            in_server.get(identity(from_patch[0])),
        )
        ahead = left is not None and right is not None and left < right
        result.append((server_only if ahead else from_patch).pop(0))
    return result + server_only + from_patch


def _go_type(value: Any) -> str:
    """The Go type encoding/json decodes a JSON value to, as upstream's messages name it."""
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return _LIST_TYPE
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "float64"
    return "<nil>" if value is None else "string"


def _go_fmt(value: Any) -> str:
    """Go's %v of a decoded JSON value."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_fmt(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_fmt(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return "<nil>" if value is None else str(value)
