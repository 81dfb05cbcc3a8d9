"""JSON and YAML decoders for documents nobody vouches for: request bodies, patches,
manifests, scenarios.

Python's own decoders refuse nothing by shape. `json.loads` of an array nested 100,000
deep overflows the interpreter's stack (a RecursionError, which no caller expects), and
PyYAML composes an alias as the very node its anchor names, so 400 bytes of "billion
laughs" become a billion nodes for the first code that walks the result. These decoders
refuse both with a DocumentError (a ValueError) before any caller walks it:

- nesting deeper than MAX_DEPTH objects and arrays (kube objects nest a few dozen at
  most; Go's decoders stop at 10000, Python's stack much earlier);
- a YAML document whose aliases, expanded, would make more than `alias_budget(n)` nodes
  out of the n it was composed of (go-yaml's CVE-2019-11253 rule, counted over the
  composed graph instead of while decoding), or an anchor that contains its own alias.

JSON also refuses NaN and Infinity, which Go's decoder (and so kube-apiserver) does.
YAML is read as yaml.safe_load reads it, but with aliases expanded into copies.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import yaml

MAX_DEPTH = 100
# A YAML document of n composed nodes may expand to ALIAS_RATIO * n (go-yaml lets a small
# document alias 99 % of what it decodes), and any document to ALIAS_FLOOR, but none past
# MAX_EXPANDED_NODES: about what the largest request body (3 MiB) holds without aliases.
ALIAS_RATIO = 100
ALIAS_FLOOR = 10_000
MAX_EXPANDED_NODES = 1_000_000


class DocumentError(ValueError):
    """A document refused by shape: too deep, too much aliasing, not JSON."""


def alias_budget(composed_nodes: int) -> int:
    """How many nodes a YAML document of `composed_nodes` may expand to with its aliases."""
    return max(ALIAS_FLOOR, min(ALIAS_RATIO * composed_nodes, MAX_EXPANDED_NODES))


# --- JSON ------------------------------------------------------------------------------


def _refuse_constant(constant: str) -> Any:
    raise DocumentError(f"invalid character {constant.lstrip('-')[0]!r} in JSON: {constant}")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def load_json(data: bytes | str) -> Any:
    """The JSON document (UTF-8, as Go reads it); DocumentError if it nests deeper than
    MAX_DEPTH or uses NaN or Infinity, json.JSONDecodeError (a ValueError too) if it is
    not JSON."""
    text = data if isinstance(data, str) else data.decode("utf-8", "replace")
    # The decoder is linear and stops a document nested past the interpreter's recursion
    # limit with a RecursionError; what nests deeper than MAX_DEPTH but not that deep is
    # decoded, then refused by check_depth, which walks it without recursion. No more
    # brackets than MAX_DEPTH cannot nest deeper: most objects need no walk.
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise DocumentError(f"exceeded max depth of {MAX_DEPTH}") from None
    if text.count("[") + text.count("{") > MAX_DEPTH:
        check_depth(value)
    return value


def check_depth(value: Any) -> None:
    """DocumentError if the decoded value's lists and dicts nest deeper than MAX_DEPTH: for
    what is made of documents, a JSON patch's result say."""
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        for child in children:
            if isinstance(child, dict | list):
                if depth == MAX_DEPTH:
                    raise DocumentError(f"exceeded max depth of {MAX_DEPTH}")
                stack.append((child, depth + 1))


# --- YAML ------------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses nesting past MAX_DEPTH and an alias inside its own
    anchor while it composes, and notes whether the document has aliases at all."""

    def __init__(self, stream: str | bytes) -> None:
        super().__init__(stream)
        self._depth = 0
        self._open_anchors: set[str] = set()
        self.aliased = False

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self._open_anchors:
                raise DocumentError(f"yaml: anchor {event.anchor!r} value contains itself")
            self.aliased = True
        elif isinstance(event, yaml.CollectionStartEvent):
            return self._compose_collection(event.anchor, parent, index)
        return super().compose_node(parent, index)

    def _compose_collection(
        self, anchor: str | None, parent: yaml.Node | None, index: Any
    ) -> yaml.Node | None:
        if self._depth == MAX_DEPTH:
            raise DocumentError(f"yaml: exceeded max depth of {MAX_DEPTH}")
        self._depth += 1
        if anchor is not None:
            self._open_anchors.add(anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1
            if anchor is not None:
                self._open_anchors.discard(anchor)

    def document(self, node: yaml.Node | None) -> Any:
        """The composed document, constructed; its aliases checked and expanded first."""
        if node is None:
            return None
        if not self.aliased:
            return self.construct_document(node)
        _check_expansion(node)
        self.aliased = False
        return _unshared(self.construct_document(node))


def load_yaml(text: str | bytes) -> Any:
    """The stream's one YAML document (None if it has none), as yaml.safe_load reads it;
    DocumentError past the bounds above, yaml.YAMLError or ValueError if it is not YAML."""
    loader = _Loader(text)
    try:
        return loader.document(loader.get_single_node())
    finally:
        loader.dispose()


def load_yaml_documents(text: str | bytes) -> Iterator[Any]:
    """Each YAML document of the stream in turn (None for an empty one), as
    yaml.safe_load_all reads them, within the same bounds as load_yaml."""
    loader = _Loader(text)
    try:
        while loader.check_node():
            yield loader.document(loader.get_node())
    finally:
        loader.dispose()


def _check_expansion(root: yaml.Node) -> None:
    """Count the document's nodes with aliases expanded, each shared node once with the
    count remembered (so a billion laughs costs what its few composed nodes cost), and
    refuse it past its alias budget or MAX_DEPTH."""
    measured: dict[int, tuple[int, int]] = {}  # id(node): (nodes expanded, depth)

    def measure(node: yaml.Node, level: int) -> tuple[int, int]:
        """(nodes, depth in collections) of the node expanded; `level`: how many
        collections it is inside here."""
        known = measured.get(id(node))
        if known is None:
            count, depth = 1, 0
            for child in _children(node):
                child_count, child_depth = measure(child, level + 1)
                count, depth = count + child_count, max(depth, child_depth)
            if isinstance(node, yaml.CollectionNode):
                depth += 1
            known = measured[id(node)] = (count, depth)
        if level + known[1] > MAX_DEPTH:  # also for a shared node met deeper than before
            raise DocumentError(f"yaml: exceeded max depth of {MAX_DEPTH}")
        return known

    expanded, _ = measure(root, 0)
    if expanded > alias_budget(len(measured)):
        raise DocumentError("yaml: document contains excessive aliasing")


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        yield from node.value
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield key
            yield value


def _unshared(value: Any) -> Any:
    """The value with every list and dict its own copy, as JSON would give it: PyYAML hands
    out one object for an anchor and all its aliases."""
    if isinstance(value, dict):
        return {key: _unshared(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unshared(item) for item in value]
    return value


def without_nulls(value: Any) -> Any:
    """The document without its null values, at every level (pruneNullsFromMap): what a
    create stores of an applied manifest, and what a merge patch adds where the original
    has nothing to delete."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value
