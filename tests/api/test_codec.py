"""The bounded decoders: what they refuse (too deep, too much aliasing, recursive anchors,
NaN) and that what they accept reads as json.loads and yaml.safe_load read it."""

from __future__ import annotations

import json
import time

import pytest
import yaml

from fleetwarden.api.codec import (
    ALIAS_FLOOR,
    MAX_DEPTH,
    MAX_EXPANDED_NODES,
    DocumentError,
    alias_budget,
    check_depth,
    load_json,
    load_yaml,
    load_yaml_documents,
)

# 9 levels of 9 aliases: a billion laughs in under 400 bytes.
LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{new}: &{new} [{', '.join([f'*{old}'] * 9)}]\n"
    for old, new in zip("abcdefgh", "bcdefghi", strict=True)
)


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def test_a_billion_laughs_is_refused_at_once() -> None:
    assert len(LAUGHS) < 400
    started = time.monotonic()
    with pytest.raises(DocumentError, match=r"^yaml: document contains excessive aliasing$"):
        load_yaml(LAUGHS)
    assert time.monotonic() - started < 5  # a guard against blowups, not a timing
    with pytest.raises(DocumentError, match="excessive aliasing"):
        list(load_yaml_documents("a: 1\n---\n" + LAUGHS))


def test_aliases_within_the_budget_are_expanded_into_copies() -> None:
    text = "base: &base {labels: [a, b]}\ncopy: *base\nmerged:\n  <<: *base\n  extra: 1\n"
    doc = load_yaml(text)
    assert doc == yaml.safe_load(text)
    assert doc["copy"] == doc["base"] and doc["copy"] is not doc["base"]
    doc["copy"]["labels"].append("c")
    assert doc["base"]["labels"] == ["a", "b"]


def test_the_alias_budget_grows_with_the_document_up_to_an_absolute_bound() -> None:
    assert alias_budget(10) == ALIAS_FLOOR
    assert alias_budget(1_000) == 100 * 1_000
    assert alias_budget(10**7) == MAX_EXPANDED_NODES
    # 9 * 9 * 9 * 10 nodes out of 40: within the floor; one level more is not.
    three_levels = "\n".join(LAUGHS.splitlines()[:4])
    assert len(load_yaml(three_levels)["d"]) == 9
    with pytest.raises(DocumentError, match="excessive aliasing"):
        load_yaml("\n".join(LAUGHS.splitlines()[:5]))
    # The same expansion is fine in a document big enough to be worth it.
    big = three_levels + "\nfiller: [" + ", ".join(["x"] * 1000) + "]"
    assert len(load_yaml(big + "\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]")["e"]) == 9


def test_an_anchor_that_contains_its_own_alias_is_refused() -> None:
    with pytest.raises(DocumentError, match=r"^yaml: anchor 'a' value contains itself$"):
        load_yaml("a: &a [1, *a]")


@pytest.mark.parametrize("load", [load_json, load_yaml], ids=["json", "yaml"])
def test_nesting_up_to_the_bound_is_read_and_past_it_refused(load: object) -> None:
    assert callable(load)
    assert load(nested(MAX_DEPTH)) == json.loads(nested(MAX_DEPTH))
    with pytest.raises(DocumentError, match=f"exceeded max depth of {MAX_DEPTH}$"):
        load(nested(MAX_DEPTH + 1))
    started = time.monotonic()
    with pytest.raises(DocumentError, match="exceeded max depth"):
        load(nested(100_000))
    assert time.monotonic() - started < 5  # tens of seconds when quadratic


def test_json_with_an_unterminated_string_is_refused_in_linear_time() -> None:
    # Deep enough to need a depth check, then a string of escaped quotes that never ends:
    # a regex that strips strings before counting brackets backtracks quadratically on it
    # (about 40 s at this size).
    body = "[" * (MAX_DEPTH + 1) + '"' + '\\"' * 50_000
    started = time.monotonic()
    with pytest.raises(ValueError):  # not JSON, or too deep: either way refused
        load_json(body.encode())
    assert time.monotonic() - started < 5  # tens of seconds when quadratic


def test_yaml_nesting_is_counted_with_aliases_expanded() -> None:
    deep = f"a: &a {nested(60)}\nb: {nested(60, '*a')}\n"
    with pytest.raises(DocumentError, match=r"^yaml: exceeded max depth of 100$"):
        load_yaml(deep)


def test_json_brackets_inside_strings_are_not_nesting() -> None:
    text = json.dumps({"a": nested(5000, '"x"'), "b": ['{"[\\"'] * 200})
    assert load_json(text.encode()) == json.loads(text)


def test_json_refuses_what_go_refuses_and_reads_the_rest_as_json_loads() -> None:
    with pytest.raises(DocumentError, match="NaN"):
        load_json(b'{"a": NaN}')
    with pytest.raises(DocumentError, match="Infinity"):
        load_json(b"[-Infinity]")
    with pytest.raises(json.JSONDecodeError):
        load_json(b"{not json")
    text = '{"a": [1, 2.5, "\\u00e9", true, null], "b": {"c": {}}}'
    assert load_json(text) == load_json(text.encode()) == json.loads(text)


def test_yaml_documents_read_as_safe_load_all_reads_them() -> None:
    text = "a: 1\n---\n---\nb: [x]\n"
    assert list(load_yaml_documents(text)) == list(yaml.safe_load_all(text))
    assert load_yaml("") is None
    with pytest.raises(yaml.YAMLError):
        load_yaml("a: 1\n---\nb: 2\n")


def test_check_depth_bounds_a_decoded_value() -> None:
    check_depth(json.loads(nested(MAX_DEPTH)))
    check_depth({"a": "not a container", "b": [{"c": 1}]})
    check_depth("scalar")
    with pytest.raises(DocumentError, match=f"^exceeded max depth of {MAX_DEPTH}$"):
        check_depth({"a": json.loads(nested(MAX_DEPTH))})
