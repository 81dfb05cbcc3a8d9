"""kubectl/karmadactl taint; cases from kubectl's pkg/cmd/taint taint_test.go and utils_test.go."""

import pytest

from fleetwarden.api.core import Taint
from fleetwarden.semantics.taint_edit import (
    KARMADACTL,
    KUBECTL,
    MODIFIED,
    OCM,
    TAINTED,
    UNTAINTED,
    TaintCommand,
    TaintError,
    TaintRequest,
    parse_taints,
)


def t(key: str, value: str = "", effect: str = "") -> Taint:
    return Taint(key=key, value=value or None, effect=effect)


def as_tuples(taints: list[Taint] | tuple[Taint, ...]) -> list[tuple[str, str, str]]:
    return [(x.key, x.value or "", x.effect) for x in taints]


# --- parseTaints ---------------------------------------------------------------------------------

INVALID_SPEC = "invalid taint spec: "
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        ([""], f"invalid taint spec: , name part must be non-empty; {NAME_PART}"),
        (["foo=abc"], f"invalid taint spec: foo=abc, {NAME_PART}"),
        (["foo=abc=xyz:NoSchedule"], "invalid taint spec: foo=abc=xyz:NoSchedule"),
        (["foo=abc:xyz:NoSchedule"], "invalid taint spec: foo=abc:xyz:NoSchedule"),
        (["foo"], "invalid taint spec: foo"),
        (
            ["foo=abc:invalid_effect"],
            "invalid taint effect: invalid_effect, unsupported taint effect",
        ),
        (["foo:invalid_effect-"], "invalid taint effect: invalid_effect, unsupported taint effect"),
        (
            ["nospecialchars^@=banana:NoSchedule"],
            f"invalid taint spec: nospecialchars^@=banana:NoSchedule, {NAME_PART}",
        ),
        (["foo=bar:NoExcute"], "invalid taint effect: NoExcute, unsupported taint effect"),
        (
            ["foo=-bar:NoSchedule"],
            "invalid taint spec: foo=-bar:NoSchedule, a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        (
            ["foo=bar:NoSchedule", "foo=barz:NoSchedule"],
            "duplicated taints with the same key and effect: {foo barz NoSchedule <nil>}",
        ),
        (
            ["foo:NoSchedule", "foo:NoSchedule"],
            "duplicated taints with the same key and effect: {foo  NoSchedule <nil>}",
        ),
    ],
)
def test_parse_taints_errors(specs: list[str], message: str) -> None:
    with pytest.raises(TaintError) as err:
        parse_taints(specs)
    assert str(err.value) == message


def test_parse_taints_adds() -> None:
    specs = [
        "foo=abc:NoSchedule",
        "bar=abc:NoSchedule",
        "baz:NoSchedule",
        "qux:NoSchedule",
        "foobar=:NoSchedule",
    ]
    to_add, to_remove = parse_taints(specs)
    assert as_tuples(to_add) == [
        ("foo", "abc", "NoSchedule"),
        ("bar", "abc", "NoSchedule"),
        ("baz", "", "NoSchedule"),
        ("qux", "", "NoSchedule"),
        ("foobar", "", "NoSchedule"),
    ]
    assert to_remove == []
    # An empty value stays off the wire, as kubectl's omitempty does.
    assert to_add[2].to_dict() == {"key": "baz", "effect": "NoSchedule"}


def test_parse_taints_removes() -> None:
    to_add, to_remove = parse_taints(
        ["foo:NoSchedule-", "bar:NoSchedule-", "qux=:NoSchedule-", "dedicated-"]
    )
    assert to_add == []
    assert as_tuples(to_remove) == [
        ("foo", "", "NoSchedule"),
        ("bar", "", "NoSchedule"),
        ("qux", "", "NoSchedule"),
        ("dedicated", "", ""),
    ]


def test_removal_drops_the_value() -> None:
    _, to_remove = parse_taints(["baz=v:NoSchedule-"])
    assert as_tuples(to_remove) == [("baz", "", "NoSchedule")]


def test_effect_sets() -> None:
    assert as_tuples(parse_taints(["gpu=true:NoSelect"], OCM.effects)[0]) == [
        ("gpu", "true", "NoSelect")
    ]
    with pytest.raises(TaintError, match="invalid taint effect: NoSchedule, unsupported"):
        parse_taints(["gpu:NoSchedule"], OCM.effects)
    with pytest.raises(TaintError, match="invalid taint effect: NoSelect, unsupported"):
        parse_taints(["gpu:NoSelect"], KARMADACTL.effects)


# --- complete and validate -----------------------------------------------------------------------


def test_complete_splits_resources_and_taints() -> None:
    request = KUBECTL.complete(["node", "node-name", "dedicated=namespaceA:NoSchedule", "foo-"])
    assert request.resources == ("node", "node-name")
    assert as_tuples(request.to_add) == [("dedicated", "namespaceA", "NoSchedule")]
    assert as_tuples(request.to_remove) == [("foo", "", "")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["node", "foo=bar:NoSchedule", "node2"],
            "all resources must be specified before taint changes: node2",
        ),
        (["foo=bar:NoSchedule"], "one or more resources must be specified as <resource> <name>"),
        (["node", "node-name"], "at least one taint update is required"),
        (
            ["node", "node-name", "foo=bar:NoExcute"],
            "invalid taint effect: NoExcute, unsupported taint effect",
        ),
    ],
)
def test_complete_errors(args: list[str], message: str) -> None:
    with pytest.raises(TaintError) as err:
        KUBECTL.complete(args)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("command", "args", "message"),
    [
        (KUBECTL, ["node", "n", "foo=:NoExecute", "foo=:NoExecute-"], "foo=NoExecute"),
        (
            KUBECTL,
            ["node", "n", "foo=a:NoExecute", "bar:NoSchedule", "foo-", "bar:NoSchedule-"],
            "foo=, bar=NoSchedule",
        ),
        (KARMADACTL, ["cluster", "m", "foo=:NoExecute", "foo=:NoExecute-"], '{"foo":"NoExecute"}'),
        (KARMADACTL, ["cluster", "m", "foo=a:NoExecute", "foo-"], '{"foo":""}'),
    ],
)
def test_validate_conflicts(command: TaintCommand, args: list[str], message: str) -> None:
    with pytest.raises(TaintError) as err:
        command.validate(command.complete(args))
    assert str(err.value) == (
        "can not both modify and remove the following taint(s) in the same command: " + message
    )


def test_validate_allows_other_effects() -> None:
    KUBECTL.validate(KUBECTL.complete(["node", "n", "foo=a:NoExecute", "foo:NoSchedule-"]))


# --- updateTaints --------------------------------------------------------------------------------

FOO_BAR = t("foo", "bar", "NoSchedule")


def run(
    command: TaintCommand, old: list[Taint], args: list[str], overwrite: bool = False
) -> tuple[str, list[tuple[str, str, str]]]:
    request = command.complete(["node", "node-name", *args])
    command.validate(request)
    update = command.update_taints("node-name", old, request, overwrite=overwrite)
    return update.operation, as_tuples(update.taints)


@pytest.mark.parametrize(
    ("old", "args", "overwrite", "operation", "new"),
    [
        ([], ["foo=bar:NoSchedule"], False, TAINTED, [("foo", "bar", "NoSchedule")]),
        ([], ["foo=bar:PreferNoSchedule"], False, TAINTED, [("foo", "bar", "PreferNoSchedule")]),
        ([FOO_BAR], ["foo=barz:NoSchedule"], True, MODIFIED, [("foo", "barz", "NoSchedule")]),
        (
            [],
            ["dedicated=namespaceA:NoSchedule", "foo=bar:PreferNoSchedule"],
            False,
            TAINTED,
            [("dedicated", "namespaceA", "NoSchedule"), ("foo", "bar", "PreferNoSchedule")],
        ),
        (
            [
                t("dedicated", "namespaceA", "NoSchedule"),
                t("dedicated", "namespaceA", "PreferNoSchedule"),
            ],
            ["dedicated:NoSchedule-"],
            False,
            UNTAINTED,
            [("dedicated", "namespaceA", "PreferNoSchedule")],
        ),
        (
            [
                t("dedicated", "namespaceA", "NoSchedule"),
                t("dedicated", "namespaceA", "PreferNoSchedule"),
            ],
            ["dedicated-"],
            False,
            UNTAINTED,
            [],
        ),
        (
            [t("dedicated", "namespaceA", "NoSchedule"), t("foo", "bar", "PreferNoSchedule")],
            ["dedicated:NoSchedule-", "foo=barz:PreferNoSchedule"],
            True,
            MODIFIED,
            [("foo", "barz", "PreferNoSchedule")],
        ),
        # utils_test.go TestReorganizeTaints
        (
            [FOO_BAR],
            ["foo_1:NoExecute"],
            False,
            TAINTED,
            [("foo_1", "", "NoExecute"), ("foo", "bar", "NoSchedule")],
        ),
        ([FOO_BAR], ["foo:NoSchedule-"], False, UNTAINTED, []),
        ([FOO_BAR], ["foo-"], False, UNTAINTED, []),
        (
            [FOO_BAR],
            ["foo_1:NoSchedule", "foo:NoSchedule-"],
            False,
            MODIFIED,
            [("foo_1", "", "NoSchedule")],
        ),
        # --overwrite reports "modified" even when it only adds
        ([], ["a:NoSchedule"], True, MODIFIED, [("a", "", "NoSchedule")]),
    ],
)
def test_update_taints(
    old: list[Taint],
    args: list[str],
    overwrite: bool,
    operation: str,
    new: list[tuple[str, str, str]],
) -> None:
    assert run(KUBECTL, old, args, overwrite) == (operation, new)


def test_overwrite_is_required_to_replace() -> None:
    with pytest.raises(TaintError) as err:
        run(KUBECTL, [FOO_BAR], ["foo=bar:NoSchedule"])
    assert str(err.value) == (
        "node node-name already has foo taint(s) with same effect(s) and --overwrite is false"
    )
    old = [
        t("foo_1", "bar", "NoSchedule"),
        t("foo_2", "bar", "NoSchedule"),
        t("foo_3", "bar", "NoSchedule"),
    ]
    request = KARMADACTL.complete(
        ["cluster", "m", "foo_2:NoSchedule", "foo_3:NoSchedule", "foo_1:NoExecute"]
    )
    with pytest.raises(TaintError) as err:
        KARMADACTL.update_taints("member1", old, request, overwrite=False)
    assert str(err.value) == (
        "cluster member1 already has foo_2,foo_3 taint(s) with same effect(s) and --overwrite is false"
    )


def test_removing_a_missing_taint_fails() -> None:
    with pytest.raises(TaintError) as err:
        run(KUBECTL, [FOO_BAR], ["foo_1:NoSchedule-"])
    assert str(err.value) == 'taint "foo_1:NoSchedule" not found'
    with pytest.raises(TaintError) as err:
        run(KUBECTL, [FOO_BAR], ["a-", "b:NoExecute-", "a-"])
    assert str(err.value) == '[taint "a" not found, taint "b:NoExecute" not found]'


def test_added_is_judged_by_length() -> None:
    # Old taints duplicated by key and effect collapse into one, which hides the addition
    # from kubectl's count: it reports "untainted" where "modified" was done.
    request = TaintRequest(
        ("node", "n"), (t("new", "", "NoSchedule"),), (t("foo", "", "NoSchedule"),)
    )
    old = [FOO_BAR, t("foo", "x", "NoSchedule")]
    update = KUBECTL.update_taints("n", old, request, overwrite=False)
    assert (update.operation, as_tuples(update.taints)) == (UNTAINTED, [("new", "", "NoSchedule")])


def test_ocm_managed_cluster() -> None:
    request = OCM.complete(["managedcluster", "cluster1", "gpu=true:NoSelect"])
    update = OCM.update_taints("cluster1", [], request, overwrite=False)
    assert (update.operation, as_tuples(update.taints)) == (TAINTED, [("gpu", "true", "NoSelect")])
