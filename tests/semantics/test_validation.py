"""Name, key and value rules, cases from apimachinery's validation tests."""

import pytest

from fleetwarden.api.errors import Path
from fleetwarden.api.meta import LabelSelector, ObjectMeta
from fleetwarden.semantics.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    validate_label_selector,
    validate_object_meta,
)

GOOD_QUALIFIED = [
    "simple",
    "now-with-dashes",
    "1-starts-with-num",
    "1234",
    "simple/simple",
    "now-with-dashes/simple",
    "now-with-dashes/now-with-dashes",
    "now.with.dots/simple",
    "now-with.dashes-and.dots/simple",
    "1-num.2-num/3-num",
    "1234/5678",
    "1.2.3.4/5678",
    "Uppercase_Is_OK_123",
    "example.com/Uppercase_Is_OK_123",
    "requests.storage-foo",
    "a" * 63,
    "a" * 253 + "/" + "b" * 63,
]
BAD_QUALIFIED = [
    "nospecialchars%^=@",
    "cantendwithadash-",
    "-cantstartwithadash-",
    "only/one/slash",
    "Example.com/abc",
    "example_com/abc",
    "example.com/",
    "/simple",
    "a" * 64,
    "a" * 254 + "/abc",
]


@pytest.mark.parametrize("value", GOOD_QUALIFIED)
def test_good_qualified_names(value: str) -> None:
    assert is_qualified_name(value) == []


@pytest.mark.parametrize("value", BAD_QUALIFIED)
def test_bad_qualified_names(value: str) -> None:
    assert is_qualified_name(value)


def test_qualified_name_messages() -> None:
    assert is_qualified_name("/simple") == [
        "prefix part must be non-empty",
    ]
    assert is_qualified_name("a" * 64) == ["name part must be no more than 63 bytes"]
    assert is_qualified_name("bad!") == [
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
        "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    ]


@pytest.mark.parametrize(
    "value", ["", "simple", "now-with-dashes", "1-starts", "end-with-num-1", "a" * 63, "a.b_c-d"]
)
def test_good_label_values(value: str) -> None:
    assert is_label_value(value) == []


@pytest.mark.parametrize("value", ["nospecial%", "-starts", "ends-", "a" * 64, "trailing\n"])
def test_bad_label_values(value: str) -> None:
    assert is_label_value(value)


def test_dns_names() -> None:
    assert is_dns1123_label("member1") == []
    assert is_dns1123_label("a.b") == ["must not contain dots"]
    assert is_dns1123_label("Member1")
    assert is_dns1123_subdomain("a.b-c.d") == []
    assert is_dns1123_subdomain("<clusterset1>")
    assert is_dns1123_subdomain("a" * 254)[0] == "must be no more than 253 characters"


def test_label_selector_rules() -> None:
    selector = LabelSelector.model_validate(
        {
            "matchExpressions": [
                {"key": "env", "operator": "In"},
                {"key": "zone", "operator": "Exists", "values": ["a"]},
                {"key": "x", "operator": "Near", "values": ["a"]},
            ],
            "matchLabels": {"bad key!": "v"},
        }
    )
    errs = [str(e) for e in validate_label_selector(selector, Path("spec").child("labelSelector"))]
    assert errs == [
        "spec.labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        "spec.labelSelector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        'spec.labelSelector.matchExpressions[2].operator: Invalid value: "Near": not a valid selector operator',
        "spec.labelSelector.matchLabels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]


def test_object_meta_scope_and_names() -> None:
    assert [str(e) for e in validate_object_meta(ObjectMeta(), namespaced=False)] == [
        "metadata.name: Required value: name or generateName is required"
    ]
    assert [
        str(e) for e in validate_object_meta(ObjectMeta(name="a", namespace="x"), namespaced=False)
    ] == ["metadata.namespace: Forbidden: not allowed on this type"]
    assert validate_object_meta(ObjectMeta(name="a", namespace="x"), namespaced=True) == []
