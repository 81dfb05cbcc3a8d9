"""JSON Merge Patch (RFC 7386) and JSON Patch (RFC 6902), checked against the RFCs' examples."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from fleetwarden.store.patch import PatchError, json_equal, json_patch, merge_patch

# RFC 7386, Appendix A: (original, patch, result).
MERGE_EXAMPLES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("original", "patch", "result"), MERGE_EXAMPLES)
def test_merge_patch_rfc7386_appendix_a(original: Any, patch: Any, result: Any) -> None:
    before = copy.deepcopy((original, patch))
    assert merge_patch(original, patch) == result
    assert (original, patch) == before  # pure: the arguments are untouched


def test_merge_patch_rfc7386_section_3_example() -> None:
    target = {
        "title": "Goodbye!",
        "author": {"givenName": "John", "familyName": "Doe"},
        "tags": ["example", "sample"],
        "content": "This will be unchanged",
    }
    patch = {
        "title": "Hello!",
        "phoneNumber": "+01-123-456-7890",
        "author": {"familyName": None},
        "tags": ["example"],
    }
    assert merge_patch(target, patch) == {
        "title": "Hello!",
        "author": {"givenName": "John"},
        "tags": ["example"],
        "content": "This will be unchanged",
        "phoneNumber": "+01-123-456-7890",
    }


def test_merge_patch_result_does_not_alias_the_patch() -> None:
    patch = {"a": {"list": [1, 2]}}
    result = merge_patch({}, patch)
    result["a"]["list"].append(3)
    assert patch == {"a": {"list": [1, 2]}}


# RFC 6902, Appendix A: (name, document, patch, result); result None means an error.
JSON_EXAMPLES: list[tuple[str, Any, list[dict[str, Any]], Any]] = [
    (
        "A.1 adding an object member",
        {"foo": "bar"},
        [{"op": "add", "path": "/baz", "value": "qux"}],
        {"baz": "qux", "foo": "bar"},
    ),
    (
        "A.2 adding an array element",
        {"foo": ["bar", "baz"]},
        [{"op": "add", "path": "/foo/1", "value": "qux"}],
        {"foo": ["bar", "qux", "baz"]},
    ),
    (
        "A.3 removing an object member",
        {"baz": "qux", "foo": "bar"},
        [{"op": "remove", "path": "/baz"}],
        {"foo": "bar"},
    ),
    (
        "A.4 removing an array element",
        {"foo": ["bar", "qux", "baz"]},
        [{"op": "remove", "path": "/foo/1"}],
        {"foo": ["bar", "baz"]},
    ),
    (
        "A.5 replacing a value",
        {"baz": "qux", "foo": "bar"},
        [{"op": "replace", "path": "/baz", "value": "boo"}],
        {"baz": "boo", "foo": "bar"},
    ),
    (
        "A.6 moving a value",
        {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
        [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
        {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
    ),
    (
        "A.7 moving an array element",
        {"foo": ["all", "grass", "cows", "eat"]},
        [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
        {"foo": ["all", "cows", "eat", "grass"]},
    ),
    (
        "A.8 testing a value: success",
        {"baz": "qux", "foo": ["a", 2, "c"]},
        [
            {"op": "test", "path": "/baz", "value": "qux"},
            {"op": "test", "path": "/foo/1", "value": 2},
        ],
        {"baz": "qux", "foo": ["a", 2, "c"]},
    ),
    (
        "A.9 testing a value: error",
        {"baz": "qux"},
        [{"op": "test", "path": "/baz", "value": "bar"}],
        None,
    ),
    (
        "A.10 adding a nested member object",
        {"foo": "bar"},
        [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
        {"foo": "bar", "child": {"grandchild": {}}},
    ),
    (
        "A.11 ignoring unrecognized elements",
        {"foo": "bar"},
        [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}],
        {"foo": "bar", "baz": "qux"},
    ),
    (
        "A.12 adding to a nonexistent target",
        {"foo": "bar"},
        [{"op": "add", "path": "/baz/bat", "value": "qux"}],
        None,
    ),
    (
        "A.14 ~ escape ordering",
        {"/": 9, "~1": 10},
        [{"op": "test", "path": "/~01", "value": 10}],
        {"/": 9, "~1": 10},
    ),
    (
        "A.15 comparing strings and numbers",
        {"/": 9, "~1": 10},
        [{"op": "test", "path": "/~01", "value": "10"}],
        None,
    ),
    (
        "A.16 adding an array value",
        {"foo": ["bar"]},
        [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
        {"foo": ["bar", ["abc", "def"]]},
    ),
]


@pytest.mark.parametrize(
    ("document", "patch", "result"),
    [example[1:] for example in JSON_EXAMPLES],
    ids=[example[0] for example in JSON_EXAMPLES],
)
def test_json_patch_rfc6902_appendix_a(document: Any, patch: Any, result: Any) -> None:
    before = copy.deepcopy(document)
    if result is None:
        with pytest.raises(PatchError):
            json_patch(document, patch)
    else:
        assert json_patch(document, patch) == result
    assert document == before


def test_json_patch_rfc6902_a13_an_invalid_document_is_refused() -> None:
    # A.13's duplicate "op" members cannot survive JSON parsing into a dict; what reaches us
    # is a patch that is no array, or an operation without a valid op.
    with pytest.raises(PatchError):
        json_patch({}, {"op": "add", "path": "/a", "value": 1})
    with pytest.raises(PatchError):
        json_patch({}, [{"op": "frobnicate", "path": "/a"}])
    with pytest.raises(PatchError):
        json_patch({}, [{"op": "add", "path": "/a"}])


@pytest.mark.parametrize(
    ("patch", "why"),
    [
        ([{"op": "remove", "path": "/missing"}], "missing member"),
        ([{"op": "replace", "path": "/list/5", "value": 1}], "index past the end"),
        ([{"op": "add", "path": "/list/" + "9" * 5000, "value": 1}], "an index of 5,000 digits"),
        ([{"op": "add", "path": "/list/01", "value": 1}], "leading zero"),
        ([{"op": "remove", "path": "/list/-"}], "'-' only adds"),
        ([{"op": "move", "from": "/obj", "path": "/obj/inner"}], "into its own child"),
        ([{"op": "copy", "from": "/nope", "path": "/x"}], "missing source"),
        ([{"op": "add", "path": "no-slash", "value": 1}], "pointer without '/'"),
    ],
)
def test_json_patch_errors(patch: Any, why: str) -> None:
    with pytest.raises(PatchError):
        json_patch({"list": [1], "obj": {}}, patch)


def test_json_patch_copy_and_whole_document_replace() -> None:
    doc = {"a": {"b": [1]}}
    copied = json_patch(doc, [{"op": "copy", "from": "/a", "path": "/c"}])
    copied["c"]["b"].append(2)
    assert copied["a"] == {"b": [1]}  # a copy, not an alias
    assert json_patch(doc, [{"op": "replace", "path": "", "value": [1]}]) == [1]


def test_json_equal_is_json_not_python_equality() -> None:
    assert json_equal({"a": [1, 2.0]}, json.loads('{"a": [1.0, 2]}'))
    assert not json_equal(True, 1)
    assert not json_equal([0], [False])
    assert not json_equal({"a": None}, {})
