"""RBAC rule semantics: whether a rule allows a request, whether some rules cover others
(the escalation check), and how uncovered rules are compacted and worded.

Cases from kubernetes plugin/pkg/auth/authorizer/rbac/rbac_test.go (TestRuleMatches),
staging/src/k8s.io/component-helpers/auth/rbac/validation/policy_comparator_test.go and
pkg/registry/rbac/validation/policy_compact_test.go.
"""

from __future__ import annotations

import pytest

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.authorization import Attributes
from fleetwarden.api.rbac import PolicyRule
from fleetwarden.semantics.rbac import (
    Rule,
    compact_rules,
    compact_string,
    covers,
    url_matches,
)

USER = UserInfo.of("bob")


def rule(
    verbs: list[str],
    groups: list[str] | None = None,
    resources: list[str] | None = None,
    names: list[str] | None = None,
    urls: list[str] | None = None,
) -> PolicyRule:
    return PolicyRule(
        verbs=verbs,
        api_groups=groups,
        resources=resources,
        resource_names=names,
        non_resource_urls=urls,
    )


def request(
    verb: str, group: str = "", resource: str = "", subresource: str = "", name: str = ""
) -> Attributes:
    return Attributes(USER, verb, resource, group, "ns", name, subresource)


def url_request(verb: str, path: str) -> Attributes:
    return Attributes(USER, verb, path=path, resource_request=False)


def allows(policy: PolicyRule, attributes: Attributes) -> bool:
    return Rule.of(policy).allows(attributes)


def words(rules: list[PolicyRule]) -> list[str]:
    """Rules as CompactString words, sorted: equal rules read the same however their
    empty lists are spelled."""
    return sorted(compact_string(r) for r in rules)


# --- RuleAllows -------------------------------------------------------------------------

RESOURCE_CASES = [
    # star verb, exact match other
    (rule(["*"], ["group1"], ["resource1"]), request("verb1", "group1", "resource1"), True),
    (rule(["*"], ["group1"], ["resource1"]), request("verb2", "group1", "resource1"), True),
    (rule(["*"], ["group1"], ["resource1"]), request("verb1", "group2", "resource1"), False),
    (rule(["*"], ["group1"], ["resource1"]), request("verb1", "group1", "resource2"), False),
    # star group, exact match other
    (rule(["verb1"], ["*"], ["resource1"]), request("verb1", "group1", "resource1"), True),
    (rule(["verb1"], ["*"], ["resource1"]), request("verb1", "group2", "resource1"), True),
    (rule(["verb1"], ["*"], ["resource1"]), request("verb2", "group1", "resource1"), False),
    (rule(["verb1"], ["*"], ["resource1"]), request("verb1", "group1", "resource2"), False),
    # star resource, exact match other
    (rule(["verb1"], ["group1"], ["*"]), request("verb1", "group1", "resource1"), True),
    (rule(["verb1"], ["group1"], ["*"]), request("verb1", "group1", "resource2"), True),
    (rule(["verb1"], ["group1"], ["*"]), request("verb1", "group2", "resource1"), False),
    (rule(["verb1"], ["group1"], ["*"]), request("verb2", "group1", "resource1"), False),
    # tuple expansion
    (
        rule(["verb1", "verb2"], ["group1", "group2"], ["resource1", "resource2"]),
        request("verb2", "group2", "resource2"),
        True,
    ),
    # subresource expansion
    (
        rule(["*"], ["*"], ["resource1/subresource1"]),
        request("verb1", "group1", "resource1", "subresource1"),
        True,
    ),
    (
        rule(["*"], ["*"], ["resource1/subresource1"]),
        request("verb1", "group1", "resource1", "subresource2"),
        False,
    ),
    (
        rule(["*"], ["*"], ["resource1/subresource1"]),
        request("verb1", "group1", "resource2", "subresource1"),
        False,
    ),
    # the core group is "", and "" is no wildcard
    (rule(["get"], [""], ["pods"]), request("get", "", "pods"), True),
    (rule(["get"], [""], ["pods"]), request("get", "apps", "pods"), False),
]


@pytest.mark.parametrize(("policy", "attributes", "expected"), RESOURCE_CASES)
def test_rule_allows_resource_requests(
    policy: PolicyRule, attributes: Attributes, expected: bool
) -> None:
    assert allows(policy, attributes) is expected


SUBRESOURCE_CASES = [
    # a resource is not its subresources, nor a subresource its resource
    (["pods"], "pods", "", True),
    (["pods"], "pods", "status", False),
    (["pods/status"], "pods", "status", True),
    (["pods/status"], "pods", "", False),
    # `*/sub` is that subresource of every resource, and only that
    (["*/scale"], "deployments", "scale", True),
    (["*/scale"], "replicasets", "scale", True),
    (["*/scale"], "deployments", "", False),
    (["*/scale"], "deployments", "status", False),
    # `*` is every resource and every subresource
    (["*"], "pods", "log", True),
    # `pods/*` is no wildcard: only a subresource literally named `*`
    (["pods/*"], "pods", "log", False),
    (["pods/*"], "pods", "*", True),
]


@pytest.mark.parametrize(("resources", "resource", "subresource", "expected"), SUBRESOURCE_CASES)
def test_rule_allows_subresources(
    resources: list[str], resource: str, subresource: str, expected: bool
) -> None:
    policy = rule(["get"], ["*"], resources)
    assert allows(policy, request("get", "apps", resource, subresource)) is expected


def test_resource_names_restrict_the_rule_to_those_names() -> None:
    named = rule(["get", "list"], [""], ["secrets"], names=["token"])
    assert allows(named, request("get", "", "secrets", name="token"))
    assert not allows(named, request("get", "", "secrets", name="other"))
    # a list or a create carries no name, so a named rule never allows it
    assert not allows(named, request("list", "", "secrets"))


def test_a_rule_without_resource_names_allows_every_name_and_none() -> None:
    unnamed = rule(["get", "list"], [""], ["secrets"], names=[])
    assert allows(unnamed, request("get", "", "secrets", name="anything"))
    assert allows(unnamed, request("list", "", "secrets"))


URL_CASES = [
    # star nonresource, exact match other
    (["verb1"], ["*"], "verb1", "/foo", True),
    (["verb1"], ["*"], "verb1", "/foo/bar/one", True),
    (["verb1"], ["*"], "verb2", "/foo", False),
    # star nonresource subpath
    (["verb1"], ["/foo/*"], "verb1", "/foo", False),
    (["verb1"], ["/foo/*"], "verb1", "/foo/bar", True),
    (["verb1"], ["/foo/*"], "verb1", "/foo/bar/one", True),
    (["verb1"], ["/foo/*"], "verb1", "/notfoo", False),
    (["verb1"], ["/foo/*"], "verb1", "/notfoo/bar", False),
    # star verb, exact nonresource
    (["*"], ["/foo", "/foo/bar/one"], "verb1", "/foo", True),
    (["*"], ["/foo", "/foo/bar/one"], "verb2", "/foo", True),
    (["*"], ["/foo", "/foo/bar/one"], "verb1", "/foo/bar", False),
    (["*"], ["/foo", "/foo/bar/one"], "verb1", "/foo/bar/one", True),
    (["*"], ["/foo", "/foo/bar/one"], "verb1", "/foo/baz/one", False),
    # `/apis/*` matches `/apis/` and below, not `/apis`
    (["get"], ["/apis/*"], "get", "/apis/", True),
    (["get"], ["/apis/*"], "get", "/apis", False),
]


@pytest.mark.parametrize(("verbs", "urls", "verb", "path", "expected"), URL_CASES)
def test_rule_allows_non_resource_urls(
    verbs: list[str], urls: list[str], verb: str, path: str, expected: bool
) -> None:
    assert allows(rule(verbs, urls=urls), url_request(verb, path)) is expected


def test_resource_rules_and_url_rules_never_cross() -> None:
    resource_rule = rule(["*"], ["*"], ["*"])
    url_rule = rule(["*"], urls=["*"])
    assert not allows(resource_rule, url_request("get", "/healthz"))
    assert not allows(url_rule, request("get", "", "pods"))


# --- nonResourceURLCovers -----------------------------------------------------------------

URL_COVERS = [
    ("*", "", True),
    ("*", "/", True),
    ("*", "/api", True),
    ("/*", "", False),
    ("/*", "/", True),
    ("/*", "/foo", True),
    ("/api", "/api", True),
    ("/apis", "/api", False),
    ("/api/v1", "/api", False),
    ("/api/v1", "/api/v1", True),
    ("/api/*", "/api/v1", True),
    ("/api/*", "/api", False),
    ("/api/*/*", "/api/v1", False),
    ("/*/v1/*", "/api/v1", False),
]


@pytest.mark.parametrize(("owner", "requested", "expected"), URL_COVERS)
def test_url_covers(owner: str, requested: str, expected: bool) -> None:
    assert url_matches(owner, requested) is expected


# --- Covers -------------------------------------------------------------------------------

COVERED = {
    "exact match": ([rule(["get"], ["v1"], ["builds"])], [rule(["get"], ["v1"], ["builds"])]),
    "subresource wildcard": (
        [rule(["get"], ["v1"], ["*/scale"])],
        [rule(["get"], ["v1"], ["foo/scale"])],
    ),
    "multiple rules covering a single rule": (
        [
            rule(["delete"], ["v1"], ["deployments"]),
            rule(["delete"], ["v1"], ["builds"]),
            rule(["update"], ["v1"], ["builds", "deployments"]),
        ],
        [rule(["delete", "update"], ["v1"], ["builds", "deployments"])],
    ),
    "multiple api groups covering a single rule": (
        [
            rule(["delete"], ["group1"], ["deployments"]),
            rule(["delete"], ["group1"], ["builds"]),
            rule(["update"], ["group1"], ["builds", "deployments"]),
            rule(["delete"], ["group2"], ["deployments"]),
            rule(["delete"], ["group2"], ["builds"]),
            rule(["update"], ["group2"], ["builds", "deployments"]),
        ],
        [rule(["delete", "update"], ["group1", "group2"], ["builds", "deployments"])],
    ),
    "single api group rule covering multiple": (
        [rule(["delete", "update"], ["group1", "group2"], ["builds", "deployments"])],
        [
            rule(["delete"], ["group1"], ["deployments"]),
            rule(["delete"], ["group1"], ["builds"]),
            rule(["update"], ["group1"], ["builds", "deployments"]),
            rule(["delete"], ["group2"], ["deployments"]),
            rule(["delete"], ["group2"], ["builds"]),
            rule(["update"], ["group2"], ["builds", "deployments"]),
        ],
    ),
    "api group star covering multiple": (
        [rule(["get"], ["*"], ["roles"])],
        [rule(["get"], ["group1", "group2"], ["roles"])],
    ),
    "api group star covering star": (
        [rule(["get"], ["*"], ["roles"])],
        [rule(["get"], ["*"], ["roles"])],
    ),
    "verb star covering multiple": (
        [rule(["*"], ["v1"], ["roles"])],
        [rule(["watch", "list"], ["v1"], ["roles"])],
    ),
    "verb star covering star": ([rule(["*"], ["v1"], ["roles"])], [rule(["*"], ["v1"], ["roles"])]),
    "resource star covering multiple": (
        [rule(["get"], ["v1"], ["*"])],
        [rule(["get"], ["v1"], ["resourcegroup:deployments"])],
    ),
    "resource star covering star": ([rule(["get"], ["v1"], ["*"])], [rule(["get"], ["v1"], ["*"])]),
    "empty resource names covering names": (
        [rule(["get"], ["v1"], ["pods"], names=[])],
        [rule(["get"], ["v1"], ["pods"], names=["foo", "bar"])],
    ),
    "non-resource urls": ([rule(["*"], urls=["/apis"])], [rule(["*"], urls=["/apis"])]),
    "non-resource urls star": (
        [rule(["*"], urls=["*"])],
        [rule(["*"], urls=["/apis", "/apis/v1", "/"])],
    ),
    "non-resource url star after prefix": (
        [rule(["*"], urls=["/apis/*"])],
        [rule(["get"], urls=["/apis/v1/foo", "/apis/v1"])],
    ),
    "non-resource urls with other fields": (
        [rule(["get"], ["v1"], ["builds"], urls=["/apis"])],
        [rule(["get"], ["v1"], ["builds"], urls=["/apis"])],
    ),
}


@pytest.mark.parametrize(("owner", "servant"), COVERED.values(), ids=COVERED.keys())
def test_covers(owner: list[PolicyRule], servant: list[PolicyRule]) -> None:
    assert covers(owner, servant) == []


NOT_COVERED = {
    "missing a single verb/resource combination": (
        [
            rule(["delete", "update"], ["v1"], ["builds", "deployments"]),
            rule(["delete"], ["v1"], ["pods"]),
        ],
        [rule(["delete", "update"], ["v1"], ["builds", "deployments", "pods"])],
        [rule(["update"], ["v1"], ["pods"])],
    ),
    "enumeration not covering api group star": (
        [rule(["get"], ["dummy-group"], ["roles"])],
        [rule(["get"], ["*"], ["roles"])],
        [rule(["get"], ["*"], ["roles"])],
    ),
    "enumeration not covering verb star": (
        [rule(["get", "list", "watch", "create", "update", "delete", "exec"], ["v1"], ["roles"])],
        [rule(["*"], ["v1"], ["roles"])],
        [rule(["*"], ["v1"], ["roles"])],
    ),
    "enumeration not covering resource star": (
        [rule(["get"], ["v1"], ["roles", "resourcegroup:deployments"])],
        [rule(["get"], ["v1"], ["*"])],
        [rule(["get"], ["v1"], ["*"])],
    ),
    "names not covering every name": (
        [rule(["get"], ["v1"], ["pods"], names=["foo", "bar"])],
        [rule(["get"], ["v1"], ["pods"], names=[])],
        [rule(["get"], ["v1"], ["pods"])],
    ),
    "url star after prefix does not cover the prefix": (
        [rule(["*"], urls=["/apis/*"])],
        [rule(["get"], urls=["/apis", "/apis/v1"])],
        [rule(["get"], urls=["/apis"])],
    ),
    "url with other fields": (
        [rule(["get"], ["v1"], ["builds"])],
        [rule(["get"], ["v1"], ["builds"], urls=["/apis"])],
        [rule(["get"], urls=["/apis"])],
    ),
    "a subresource is not its resource": (
        [rule(["get"], [""], ["pods"])],
        [rule(["get"], [""], ["pods/log"])],
        [rule(["get"], [""], ["pods/log"])],
    ),
}


@pytest.mark.parametrize(
    ("owner", "servant", "uncovered"), NOT_COVERED.values(), ids=NOT_COVERED.keys()
)
def test_covers_reports_what_is_missing(
    owner: list[PolicyRule], servant: list[PolicyRule], uncovered: list[PolicyRule]
) -> None:
    assert words(covers(owner, servant)) == words(uncovered)


def test_names_held_through_separate_rules_are_covered() -> None:
    # BreakdownRule splits a rule into one part per resourceName.
    owner = [
        rule(["get"], [""], ["pods"], names=["foo"]),
        rule(["get"], [""], ["pods"], names=["bar"]),
    ]
    assert covers(owner, [rule(["get"], [""], ["pods"], names=["foo", "bar"])]) == []


def test_uncovered_names_are_reported_one_by_one() -> None:
    owner = [rule(["get"], [""], ["pods"], names=["foo"])]
    servant = [rule(["get"], [""], ["pods"], names=["foo", "bar"])]
    assert words(covers(owner, servant)) == [
        '{APIGroups:[""], Resources:["pods"], ResourceNames:["bar"], Verbs:["get"]}'
    ]


# --- CompactRules and CompactString -------------------------------------------------------


def test_compact_merges_the_verbs_of_simple_rules() -> None:
    rules = [
        rule(["get"], [""], ["builds"]),
        rule(["list"], [""], ["builds"]),
        rule(["update", "patch"], [""], ["builds"]),
        rule(["create"], ["extensions"], ["daemonsets"]),
        rule(["delete"], ["extensions"], ["daemonsets"]),
        rule(["educate"], [""], ["dolphins"]),
        rule([], [""], ["pods"]),
        rule(["create"], [""], ["pods"]),
    ]
    assert words(compact_rules(rules)) == words(
        [
            rule(["get", "list", "update", "patch"], [""], ["builds"]),
            rule(["create", "delete"], ["extensions"], ["daemonsets"]),
            rule(["educate"], [""], ["dolphins"]),
            rule(["create"], [""], ["pods"]),
        ]
    )


def test_compact_merges_rules_on_the_same_single_name() -> None:
    rules = [
        rule(["patch"], ["extensions"], ["daemonsets"], names=[""]),
        rule(["get"], ["extensions"], ["daemonsets"], names=["foo"]),
        rule(["list"], ["extensions"], ["daemonsets"], names=["foo"]),
    ]
    assert words(compact_rules(rules)) == words(
        [
            rule(["patch"], ["extensions"], ["daemonsets"], names=[""]),
            rule(["get", "list"], ["extensions"], ["daemonsets"], names=["foo"]),
        ]
    )


COMPLEX = {
    "multi-group": [
        rule(["get"], ["", "builds.openshift.io"], ["builds"]),
        rule(["list"], ["", "builds.openshift.io"], ["builds"]),
    ],
    "multi-resource": [
        rule(["get"], [""], ["builds", "images"]),
        rule(["list"], [""], ["builds", "images"]),
    ],
    "different names": [
        rule(["get"], [""], ["builds"], names=["mybuild"]),
        rule(["list"], [""], ["builds"], names=["mybuild2"]),
    ],
    "non-resource": [
        rule(["get"], [""], ["builds"], urls=["/"]),
        rule(["get"], [""], ["builds"], urls=["/foo"]),
    ],
}


@pytest.mark.parametrize("rules", COMPLEX.values(), ids=COMPLEX.keys())
def test_compact_keeps_complex_rules_apart(rules: list[PolicyRule]) -> None:
    assert words(compact_rules(rules)) == words(rules)


def test_compact_leaves_its_input_alone() -> None:
    rules = [rule(["get"], [""], ["builds"]), rule(["list"], [""], ["builds"])]
    before = [r.model_copy(deep=True) for r in rules]
    compact_rules(rules)
    assert rules == before


@pytest.mark.parametrize(
    ("policy", "text"),
    [
        (
            rule(["get", "list"], [""], ["pods"]),
            '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}',
        ),
        (rule(["get"], urls=["/metrics"]), '{NonResourceURLs:["/metrics"], Verbs:["get"]}'),
        (
            rule(["get"], ["apps"], ["deployments"], names=["web"]),
            '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["get"]}',
        ),
        (
            rule(["get"], ["v1"], ["builds"], urls=["/apis"]),
            '{APIGroups:["v1"], Resources:["builds"], NonResourceURLs:["/apis"], Verbs:["get"]}',
        ),
        (rule([], ["apps"], ["deployments"]), '{APIGroups:["apps"], Resources:["deployments"]}'),
    ],
)
def test_compact_string(policy: PolicyRule, text: str) -> None:
    assert compact_string(policy) == text
