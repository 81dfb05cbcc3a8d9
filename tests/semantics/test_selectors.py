"""Label and field selectors; cases from apimachinery's labels/selector_test.go,
fields/selector_test.go, meta/v1 helpers_test.go, and Karmada's pkg/util/selector_test.go."""

from dataclasses import dataclass

import pytest

from fleetwarden.api.meta import LabelSelector, LabelSelectorRequirement
from fleetwarden.semantics.selectors import (
    EVERYTHING,
    NOTHING,
    FieldRequirement,
    Operator,
    Requirement,
    Selector,
    SelectorError,
    cluster_fields_match,
    escape_field_value,
    label_selector_as_selector,
    label_selector_matches,
    match_zones,
    new_requirement,
    node_selector_requirements_as_selector,
    parse_field_selector,
    parse_selector,
    unescape_field_value,
)

# --- labels.Parse --------------------------------------------------------------------------------

GOOD = ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"]


@pytest.mark.parametrize("text", GOOD)
def test_parse_restrings(text: str) -> None:
    assert str(parse_selector(text)) == text.replace(" ", "")


BAD = [
    "x=a||y=b",
    "x==a==b",
    "!x=a",
    "x<a",
    "x,,y",
    ",x,y",
    "x nott in (y)",
    "a in (xyz),",
    "a in (xyz)b notin ()",
    "a in (xyz abc)",
    "a notin(",
    "a (",
    "(",
]


@pytest.mark.parametrize("text", BAD)
def test_parse_refuses(text: str) -> None:
    with pytest.raises(SelectorError):
        parse_selector(text)


def req(key: str, op: Operator, *values: str) -> Requirement:
    return new_requirement(key, op, sorted(set(values)))


PARSED = [
    ("\rx", [req("x", Operator.EXISTS)]),
    (
        "this-is-a-dns.domain.com/key-with-dash",
        [req("this-is-a-dns.domain.com/key-with-dash", Operator.EXISTS)],
    ),
    (
        "this-is-another-dns.domain.com/key-with-dash in (so,what)",
        [req("this-is-another-dns.domain.com/key-with-dash", Operator.IN, "so", "what")],
    ),
    (
        "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
        [req("0.1.2.domain/99", Operator.NOT_IN, "10.10.100.1", "tick.tack.clock")],
    ),
    ("foo  in\t (abc)", [req("foo", Operator.IN, "abc")]),
    ("x notin\n (abc)", [req("x", Operator.NOT_IN, "abc")]),
    ("x  notin\t\t(abc,def)", [req("x", Operator.NOT_IN, "abc", "def")]),
    ("x in (abc,)", [req("x", Operator.IN, "abc", "")]),
    ("x in (abc,abc)", [req("x", Operator.IN, "abc")]),
    ("x in ()", [req("x", Operator.IN, "")]),
    ("x in (a,,)", [req("x", Operator.IN, "a", "")]),
    ("x in (a,,,,,,)", [req("x", Operator.IN, "a", "")]),
    ("x in (a,,a,,a,,a,,)", [req("x", Operator.IN, "a", "")]),
    (
        "x notin (abc,,def),bar,z in (),w",
        [
            req("bar", Operator.EXISTS),
            req("w", Operator.EXISTS),
            req("x", Operator.NOT_IN, "abc", "", "def"),
            req("z", Operator.IN, ""),
        ],
    ),
    ("x,y in (a)", [req("x", Operator.EXISTS), req("y", Operator.IN, "a")]),
    ("x=a", [req("x", Operator.EQUALS, "a")]),
    ("x==a", [req("x", Operator.DOUBLE_EQUALS, "a")]),
    ("x>1", [req("x", Operator.GREATER_THAN, "1")]),
    ("x<7", [req("x", Operator.LESS_THAN, "7")]),
    ("x=a,y!=b", [req("x", Operator.EQUALS, "a"), req("y", Operator.NOT_EQUALS, "b")]),
    ("x notin ( )", [req("x", Operator.NOT_IN, "")]),
    ("x notin (, a)", [req("x", Operator.NOT_IN, "", "a")]),
    ("a ", [req("a", Operator.EXISTS)]),
    ("a in (x,y,notin, z,in)", [req("a", Operator.IN, "in", "notin", "x", "y", "z")]),
    ("notin=in", [req("notin", Operator.EQUALS, "in")]),
]


@pytest.mark.parametrize(("text", "requirements"), PARSED)
def test_parse_result(text: str, requirements: list[Requirement]) -> None:
    assert parse_selector(text).requirements == tuple(requirements)


PARSE_ERRORS = [
    (
        "x nott in (y)",
        "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt",
    ),
    (",x", "found ',', expected: !, identifier, or 'end of string'"),
    ("x,,y", "found ',', expected: identifier after ','"),
    ("a in (xyz)b", "found 'b', expected: ',' or 'end of string'"),
    ("a in (xyz abc)", "unable to parse requirement: found 'abc', expected: ',' or ')'"),
    ("a notin(", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
    ("a in x", "unable to parse requirement: found 'x' expected: '('"),
    ("a in (x,(", "unable to parse requirement: found '(', expected: ',', or identifier"),
    ("a=(", "unable to parse requirement: found '(', expected: identifier"),
    ("! =", "unable to parse requirement: found '=', expected: identifier"),
    ("!=", "found '!=', expected: !, identifier, or 'end of string'"),
    (
        "x<a",
        'unable to parse requirement: values[0]: Invalid value: "a": '
        "for 'Gt', 'Lt' operators, the value must be an integer",
    ),
    (
        "a/b/c",
        'unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key must '
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
        "subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ),
    (
        "x=a b",
        "found 'b', expected: ',' or 'end of string'",
    ),
]


@pytest.mark.parametrize(("text", "message"), PARSE_ERRORS)
def test_parse_messages(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        parse_selector(text)
    assert str(err.value) == message


def test_parse_is_deterministic() -> None:
    assert str(parse_selector("x=a,a=x")) == str(parse_selector("a=x,x=a")) == "a=x,x=a"


MATCHES = [
    ("", {"x": "y"}, True),
    ("x=y", {"x": "y"}, True),
    ("x=y,z=w", {"x": "y", "z": "w"}, True),
    ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
    ("notin=in", {"notin": "in"}, True),
    ("x", {"x": "z"}, True),
    ("!x", {"y": "z"}, True),
    ("x>1", {"x": "2"}, True),
    ("x<1", {"x": "0"}, True),
    ("x=z", {}, False),
    ("x=y", {"x": "z"}, False),
    ("x=y,z=w", {"x": "w", "z": "w"}, False),
    ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
    ("x", {"y": "z"}, False),
    ("!x", {"x": "z"}, False),
    ("x>1", {"x": "0"}, False),
    ("x<1", {"x": "2"}, False),
    ("x>1", {"x": "v2"}, False),
    ("x>1", {}, False),
    ("foo=bar,baz=blah", {"foo": "bar", "baz": "blah"}, True),
    ("foo=bar,foobar=bar,baz=blah", {"foo": "bar", "baz": "blah"}, False),
    ("x notin (a)", {}, True),
    ("x in (a,b)", {"x": "b"}, True),
    ("x notin ()", {"y": ""}, True),
    ("x in ()", {"x": ""}, True),
    ("x in ()", {"y": "baz"}, False),
]


@pytest.mark.parametrize(("text", "labels", "want"), MATCHES)
def test_matches(text: str, labels: dict[str, str], want: bool) -> None:
    assert parse_selector(text).matches(labels) is want


# --- labels.NewRequirement -----------------------------------------------------------------------

REQUIREMENT_ERRORS = [
    (
        "x1",
        "in",
        [],
        "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
    ),
    (
        "x1",
        "in",
        None,
        "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
    ),
    (
        "x5",
        "=",
        ["bar", "foo"],
        'values: Invalid value: ["bar","foo"]: exact-match compatibility requires one single value',
    ),
    (
        "x8",
        "exists",
        ["foo"],
        'values: Invalid value: ["foo"]: values set must be empty for exists and does not exist',
    ),
    (
        "x13",
        "gt",
        [],
        "values: Invalid value: []: for 'Gt', 'Lt' operators, exactly one value is required",
    ),
    (
        "x14",
        "gt",
        ["bar"],
        "values[0]: Invalid value: \"bar\": for 'Gt', 'Lt' operators, the value must be an integer",
    ),
    (
        "x18",
        "unsupportedOp",
        [],
        'operator: Unsupported value: "unsupportedOp": supported values: '
        '"in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"',
    ),
    (
        "x16",
        "=",
        ["a" * 64],
        f'values[0][x16]: Invalid value: "{"a" * 64}": must be no more than 63 bytes',
    ),
]


@pytest.mark.parametrize(("key", "op", "values", "message"), REQUIREMENT_ERRORS)
def test_requirement_errors(key: str, op: str, values: list[str] | None, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        new_requirement(key, op, values)
    assert str(err.value) == message


def test_gt_and_lt_take_only_int64s_however_many_digits() -> None:
    # Past a few thousand digits int() refuses with a ValueError of its own.
    too_many = "9" * 5000
    with pytest.raises(SelectorError, match="the value must be an integer"):
        new_requirement("a", "gt", [too_many])
    with pytest.raises(SelectorError, match="the value must be an integer"):
        parse_selector("a>" + too_many)
    assert new_requirement("a", "gt", ["0"]).matches({"a": "0" * 5000 + "1"})
    assert not new_requirement("a", "lt", ["1"]).matches({"a": "-" + too_many})
    lowest = Requirement("a", Operator.LESS_THAN, ("-9223372036854775807",))
    assert lowest.matches({"a": "-9223372036854775808"})
    assert not lowest.matches({"a": "-9223372036854775809"})


def test_requirement_errors_aggregate() -> None:
    with pytest.raises(SelectorError) as err:
        new_requirement("a" * 254, Operator.IN, [])
    text = str(err.value)
    assert text.startswith('[key: Invalid value: "aaa')
    assert text.endswith(
        "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty]"
    )


@pytest.mark.parametrize(
    ("requirements", "text"),
    [
        (
            [
                req("x", Operator.IN, "abc", "def"),
                req("y", Operator.NOT_IN, "jkl"),
                req("z", Operator.EXISTS),
            ],
            "x in (abc,def),y notin (jkl),z",
        ),
        (
            [
                req("x", Operator.NOT_IN, "abc", "def"),
                req("y", Operator.NOT_EQUALS, "jkl"),
                req("z", Operator.DOES_NOT_EXIST),
            ],
            "x notin (abc,def),y!=jkl,!z",
        ),
        (
            [
                req("x", Operator.NOT_IN, "abc"),
                req("y", Operator.IN, "jkl", "mno"),
                req("z", Operator.NOT_IN, ""),
            ],
            "x notin (abc),y in (jkl,mno),z notin ()",
        ),
        (
            [
                req("x", Operator.EQUALS, "abc"),
                req("y", Operator.DOUBLE_EQUALS, "jkl"),
                req("z", Operator.NOT_EQUALS, "a"),
                req("z", Operator.EXISTS),
            ],
            "x=abc,y==jkl,z!=a,z",
        ),
        (
            [
                req("x", Operator.GREATER_THAN, "2"),
                req("y", Operator.LESS_THAN, "8"),
                req("z", Operator.EXISTS),
            ],
            "x>2,y<8,z",
        ),
    ],
)
def test_to_string(requirements: list[Requirement], text: str) -> None:
    assert str(Selector(requirements)) == text


# --- metav1.LabelSelectorAsSelector --------------------------------------------------------------

IN_EXPR = LabelSelectorRequirement(key="baz", operator="In", values=["qux", "norf"])


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        (LabelSelector(match_labels={"foo": "bar"}), "foo=bar"),
        (LabelSelector(match_expressions=[IN_EXPR]), "baz in (norf,qux)"),
        (
            LabelSelector(match_labels={"foo": "bar"}, match_expressions=[IN_EXPR]),
            "baz in (norf,qux),foo=bar",
        ),
    ],
)
def test_label_selector_as_selector(selector: LabelSelector, text: str) -> None:
    assert str(label_selector_as_selector(selector)) == text


def test_nil_and_empty_label_selectors() -> None:
    assert label_selector_as_selector(None) is NOTHING
    assert not NOTHING.matches({"a": "b"}) and not NOTHING.empty()
    assert label_selector_as_selector(LabelSelector()) is EVERYTHING
    assert EVERYTHING.matches({"a": "b"}) and EVERYTHING.empty()
    assert label_selector_matches(None, {"a": "b"}, nil_matches=True)
    assert not label_selector_matches(None, {"a": "b"}, nil_matches=False)
    assert label_selector_matches(LabelSelector(), None, nil_matches=False)


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            LabelSelector(
                match_expressions=[
                    LabelSelectorRequirement(key="baz", operator="Exists", values=["qux"])
                ]
            ),
            'values: Invalid value: ["qux"]: values set must be empty for exists and does not exist',
        ),
        (
            LabelSelector(match_expressions=[LabelSelectorRequirement(key="baz", operator="In")]),
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            LabelSelector(
                match_expressions=[LabelSelectorRequirement(key="baz", operator="Gt", values=["1"])]
            ),
            '"Gt" is not a valid label selector operator',
        ),
        (
            LabelSelector(match_labels={"": "bar"}),
            "key: Invalid value: \"\": name part must be non-empty; name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
    ],
)
def test_label_selector_errors(selector: LabelSelector, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        label_selector_as_selector(selector)
    assert str(err.value) == message
    assert not label_selector_matches(selector, {"baz": "qux"}, nil_matches=True)


@pytest.mark.parametrize(
    ("expression", "labels", "want"),
    [
        (
            LabelSelectorRequirement(key="env", operator="In", values=["prod"]),
            {"env": "prod"},
            True,
        ),
        (LabelSelectorRequirement(key="env", operator="NotIn", values=["prod"]), {}, True),
        (
            LabelSelectorRequirement(key="env", operator="NotIn", values=["prod"]),
            {"env": "prod"},
            False,
        ),
        (LabelSelectorRequirement(key="env", operator="Exists"), {"env": ""}, True),
        (LabelSelectorRequirement(key="env", operator="DoesNotExist"), {"env": ""}, False),
    ],
)
def test_match_expressions(
    expression: LabelSelectorRequirement, labels: dict[str, str], want: bool
) -> None:
    selector = LabelSelector(match_labels={"app": "web"}, match_expressions=[expression])
    assert label_selector_matches(selector, {"app": "web", **labels}, nil_matches=False) is want
    assert not label_selector_matches(selector, labels, nil_matches=False)


# --- fields.ParseSelector ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["x=a,y=b,z=c", "", "x!=a,y=b", r"x=a||y\=b", r"x=a\=\=b"])
def test_field_selector_restrings(text: str) -> None:
    assert str(parse_field_selector(text)) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x=a||y=b", "invalid field selector: unescaped character in value: 61"),
        ("x==a==b", "invalid field selector: unescaped character in value: 61"),
        ("x=a,b", "invalid selector: 'x=a,b'; can't understand 'b'"),
        ("x in (a)", "invalid selector: 'x in (a)'; can't understand 'x in (a)'"),
        ("x in (a,b,c)", "invalid selector: 'x in (a,b,c)'; can't understand 'b'"),
        ("x", "invalid selector: 'x'; can't understand 'x'"),
        (r"k=\a", r"invalid field selector: invalid escape sequence: \a"),
        ("k=\\", "invalid field selector: invalid escape sequence: \\"),
    ],
)
def test_field_selector_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        parse_field_selector(text)
    assert str(err.value) == message


FIELDS = {"foo": "bar", "baz": "blah", "complex": "=value\\,\\"}


@pytest.mark.parametrize(
    ("text", "fields", "want"),
    [
        ("", {"x": "y"}, True),
        ("x=y", {"x": "y"}, True),
        ("x=y,z=w", {"x": "y", "z": "w"}, True),
        ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
        ("notin=in", {"notin": "in"}, True),
        ("x=y", {"x": "z"}, False),
        ("x=y,z=w", {"x": "w", "z": "w"}, False),
        ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
        ("foo=bar,baz=blah", FIELDS, True),
        (r"foo=bar,baz=blah,complex=\=value\\\,\\", FIELDS, True),
        ("foo=blah", FIELDS, False),
        ("foo=bar,foobar=bar,baz=blah", FIELDS, False),
        # A missing field reads as "".
        ("metadata.namespace!=kube-system", {"metadata.name": "x"}, True),
        ("metadata.namespace=", {}, True),
        (
            "metadata.name==x,metadata.namespace!=y",
            {"metadata.name": "x", "metadata.namespace": "z"},
            True,
        ),
    ],
)
def test_field_selector_matches(text: str, fields: dict[str, str], want: bool) -> None:
    assert parse_field_selector(text).matches(fields) is want


def test_field_requirements_and_escapes() -> None:
    assert parse_field_selector("b==2,a=1").requirements == (
        FieldRequirement("a", Operator.EQUALS, "1"),
        FieldRequirement("b", Operator.EQUALS, "2"),
    )
    for raw, escaped in [
        ("", ""),
        ("a", "a"),
        ("=", r"\="),
        (",", r"\,"),
        ("\\", "\\\\"),
        ("\\=\\,\\", r"\\\=\\\,\\"),
    ]:
        assert escape_field_value(raw) == escaped
        assert unescape_field_value(escaped) == raw


# --- Karmada's cluster field selector ------------------------------------------------------------


@dataclass
class Expr:
    key: str
    operator: str
    values: list[str] | None = None


@pytest.mark.parametrize(
    ("expr", "zones", "want"),
    [
        (Expr("zone", "In", ["foo"]), None, False),
        (Expr("zone", "In", ["foo"]), ["foo", "bar"], True),
        (Expr("zone", "In", ["foo", "bar"]), ["foo", "bar"], True),
        (Expr("zone", "NotIn", ["foo"]), None, True),
        (Expr("zone", "NotIn", ["foo"]), ["foo", "bar"], False),
        (Expr("zone", "Exists"), None, False),
        (Expr("zone", "DoesNotExist"), None, True),
        (Expr("zone", "Gt"), ["foo"], False),
    ],
)
def test_match_zones(expr: Expr, zones: list[str] | None, want: bool) -> None:
    assert match_zones(expr, zones) is want


@pytest.mark.parametrize(
    ("exprs", "want"),
    [
        ([], True),
        ([Expr("provider", "In", ["aws"])], True),
        ([Expr("provider", "NotIn", ["aws"])], False),
        ([Expr("region", "In", ["us-east-1"]), Expr("zone", "In", ["a"])], True),
        ([Expr("region", "In", ["eu-west-1"])], False),
        ([Expr("zone", "NotIn", ["b"])], False),
        # a field the cluster leaves empty is absent
        ([Expr("provider", "Exists")], True),
        ([Expr("region", "DoesNotExist")], False),
        # unsupported key: a requirement on a field no cluster has
        ([Expr("metadata.name", "In", ["member1"])], False),
        # invalid requirements match nothing
        ([Expr("", "")], False),
        ([Expr("provider", "In", [])], False),
    ],
)
def test_cluster_fields_match(exprs: list[Expr], want: bool) -> None:
    assert cluster_fields_match(exprs, provider="aws", region="us-east-1", zones=["a", "b"]) is want


def test_node_selector_requirements() -> None:
    assert node_selector_requirements_as_selector([]) is NOTHING
    assert str(node_selector_requirements_as_selector([Expr("n", "Gt", ["3"])])) == "n>3"
    with pytest.raises(SelectorError) as err:
        node_selector_requirements_as_selector([Expr("a", "Near"), Expr("b", "Far")])
    assert str(err.value) == (
        '["Near" is not a valid node selector operator, "Far" is not a valid node selector operator]'
    )
