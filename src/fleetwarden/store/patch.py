"""JSON Merge Patch (RFC 7386) and JSON Patch (RFC 6902), as pure functions on JSON values.

Neither function changes its arguments. The result may share unchanged subtrees with
the target (merge patch), so callers that keep both should hand in a copy they own.
"""

from __future__ import annotations

import copy
from typing import Any


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
    for op in operations:
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
        return _add(_remove(doc, path), path, copy.deepcopy(_value(op)))
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
    index = int(token)
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
