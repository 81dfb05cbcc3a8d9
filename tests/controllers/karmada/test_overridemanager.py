"""The override manager's overriders and ordering, with the cases of upstream's
pkg/util/overridemanager tests (imageoverride_test.go, commandargsoverride_test.go,
labelannotationoverrider_test.go, overridemanager_test.go, shadow_test.go) and
pkg/util/imageparser's."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from fleetwarden.api.karmada.cluster import Cluster
from fleetwarden.api.karmada.policy import ClusterOverridePolicy, OverridePolicy, Overriders
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada.overridemanager import (
    OverrideError,
    PolicyOverriders,
    TemplatePolicies,
    _ranked,
    applied_overrides_json,
    apply_overriders,
)
from fleetwarden.semantics.image_reference import ImageReferenceError, parse_image

Obj = dict[str, Any]
DIGEST = "sha256:dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9c"


def deployment(*containers: Obj, kind: str = "Deployment") -> Obj:
    pod_spec = {"containers": list(containers)}
    spec = pod_spec if kind == "Pod" else {"template": {"spec": pod_spec}}
    api_version = "v1" if kind == "Pod" else "apps/v1"
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {
            "name": "test",
            "namespace": "default",
            "labels": {"foo": "foo", "bar": "bar"},
        },
        "spec": spec,
    }


def overridden(manifest: Obj, **overriders: Any) -> Obj:
    result = copy.deepcopy(manifest)
    apply_overriders(result, Overriders.model_validate(overriders))
    return result


def image(manifest: Obj, index: int = 0) -> str:
    spec = manifest["spec"] if manifest["kind"] == "Pod" else manifest["spec"]["template"]["spec"]
    value: str = spec["containers"][index]["image"]
    return value


# --- imageoverride_test.go ---------------------------------------------------------------------

FICTIONAL = "fictional.registry.example/imagename:v1.0.0"


@pytest.mark.parametrize(
    ("component", "operator", "value", "expected"),
    [
        ("Registry", "add", ".test", "fictional.registry.example.test/imagename:v1.0.0"),
        ("Registry", "replace", "fictional.registry.us", "fictional.registry.us/imagename:v1.0.0"),
        ("Registry", "remove", "fictional.registry.us", "imagename:v1.0.0"),
        ("Repository", "add", "/nginx", "fictional.registry.example/imagename/nginx:v1.0.0"),
        ("Repository", "replace", "nginx", "fictional.registry.example/nginx:v1.0.0"),
        ("Repository", "remove", "nginx", "fictional.registry.example/:v1.0.0"),
        # Only one of tag and digest is valid: "v1.0.0sha256:..." is neither.
        ("Tag", "add", DIGEST, "fictional.registry.example/imagename:v1.0.0"),
        ("Tag", "replace", DIGEST, f"fictional.registry.example/imagename@{DIGEST}"),
        ("Tag", "remove", DIGEST, "fictional.registry.example/imagename"),
    ],
)
def test_image_overrider_components(
    component: str, operator: str, value: str, expected: str
) -> None:
    manifest = deployment({"name": "nginx", "image": FICTIONAL})
    overrider = {"component": component, "operator": operator, "value": value}
    assert image(overridden(manifest, imageOverrider=[overrider])) == expected


@pytest.mark.parametrize("kind", ["Pod", "ReplicaSet", "DaemonSet", "StatefulSet", "Job"])
def test_image_overrider_workload_kinds(kind: str) -> None:
    manifest = deployment({"name": "nginx", "image": FICTIONAL}, kind=kind)
    overrider = {"component": "Repository", "operator": "replace", "value": "nginx"}
    got = overridden(manifest, imageOverrider=[overrider])
    assert image(got) == "fictional.registry.example/nginx:v1.0.0"


def test_image_overrider_every_container_or_the_predicate_one() -> None:
    manifest = deployment(
        {"name": "a", "image": FICTIONAL}, {"name": "b", "image": "registry.k8s.io/nginx-slim:0.8"}
    )
    add = {"component": "Registry", "operator": "replace", "value": "registry.k8s.io"}
    every = overridden(manifest, imageOverrider=[add])
    assert [image(every, 0), image(every, 1)] == [
        "registry.k8s.io/imagename:v1.0.0",
        "registry.k8s.io/nginx-slim:0.8",
    ]
    only = {**add, "predicate": {"path": "/spec/template/spec/containers/0/image"}}
    one = overridden(manifest, imageOverrider=[only])
    assert [image(one, 0), image(one, 1)] == [
        "registry.k8s.io/imagename:v1.0.0",
        "registry.k8s.io/nginx-slim:0.8",
    ]
    job = deployment({"name": "pi", "image": "perl:5.34.0"}, kind="Job")
    registry = {"component": "Registry", "operator": "add", "value": "registry.k8s.io"}
    assert image(overridden(job, imageOverrider=[registry])) == "registry.k8s.io/perl:5.34.0"


def test_image_overrider_leaves_other_kinds_alone_and_reports_bad_predicates() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    overrider = {"component": "Tag", "operator": "replace", "value": "v2"}
    assert overridden(config_map, imageOverrider=[overrider]) == config_map
    manifest = deployment({"name": "nginx", "image": FICTIONAL})
    missing = {**overrider, "predicate": {"path": "/spec/template/spec/containers/0/name2"}}
    with pytest.raises(OverrideError, match=r"failed to obtain imageValue with predicate path"):
        overridden(manifest, imageOverrider=[missing])


@pytest.mark.parametrize(
    ("reference", "parts"),
    [
        ("registry.k8s.io/kube-apiserver:v1.19.1", ("registry.k8s.io", "kube-apiserver", "v1.19.1", "")),
        ("fictional.registry.example:10443/karmada/karmada-controller-manager:v1.0.0",
         ("fictional.registry.example:10443", "karmada/karmada-controller-manager", "v1.0.0", "")),
        ("localhost/nginx", ("localhost", "nginx", "", "")),
        ("karmada/nginx", ("", "karmada/nginx", "", "")),
        (f"nginx@{DIGEST}", ("", "nginx", "", DIGEST)),
        (f"nginx:1.0@{DIGEST}", ("", "nginx", "1.0", "")),
    ],
)  # fmt: skip
def test_parse_image(reference: str, parts: tuple[str, str, str, str]) -> None:
    got = parse_image(reference)
    assert (got.hostname, got.repository, got.tag, got.digest) == parts


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("", "repository name must have at least one component"),
        ("Nginx", "repository name must be lowercase"),
        ("nginx:!", "invalid reference format"),
        ("nginx@md5:" + "a" * 32, "unsupported digest algorithm"),
        ("nginx@sha256:" + "a" * 63, "invalid checksum digest length"),
    ],
)
def test_parse_image_errors(reference: str, message: str) -> None:
    with pytest.raises(ImageReferenceError, match=message):
        parse_image(reference)


# --- commandargsoverride_test.go ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("operator", "value", "expected"),
    [
        ("add", ["&& echo 'hello karmada'"], ["nginx", "-v", "-t", "&& echo 'hello karmada'"]),
        ("remove", ["-t"], ["nginx", "-v"]),
        ("remove", [], ["nginx", "-v", "-t"]),
    ],
)
@pytest.mark.parametrize("target", ["command", "args"])
def test_command_args_overrider(
    target: str, operator: str, value: list[str], expected: list[str]
) -> None:
    manifest = deployment(
        {"name": "nginx", "image": FICTIONAL, target: ["nginx", "-v", "-t"]},
        {"name": "sidecar", "image": FICTIONAL, target: ["nginx", "-v", "-t"]},
    )
    overrider = {"containerName": "nginx", "operator": operator, "value": value}
    got = overridden(manifest, **{f"{target}Overrider": [overrider]})
    containers = got["spec"]["template"]["spec"]["containers"]
    assert [containers[0][target], containers[1][target]] == [expected, ["nginx", "-v", "-t"]]


def test_command_overrider_sets_a_command_the_container_lacks() -> None:
    manifest = deployment({"name": "nginx", "image": FICTIONAL}, kind="Pod")
    add = {"containerName": "nginx", "operator": "add", "value": ["echo 'hello karmada'"]}
    got = overridden(manifest, commandOverrider=[add])
    assert got["spec"]["containers"][0]["command"] == ["echo 'hello karmada'"]
    unknown = {**add, "containerName": "other"}
    assert overridden(manifest, commandOverrider=[unknown]) == manifest


# --- labelannotationoverrider_test.go ----------------------------------------------------------


@pytest.mark.parametrize(
    ("operator", "value", "expected"),
    [
        ("replace", {"foo": "exist", "non-exist": "non-exist"}, {"foo": "exist", "bar": "bar"}),
        ("add", {"test": "test"}, {"test": "test", "foo": "foo", "bar": "bar"}),
        ("remove", {"foo": "foo", "non-exist": "non-exist"}, {"bar": "bar"}),
        ("remove", {}, {"foo": "foo", "bar": "bar"}),
    ],
)
@pytest.mark.parametrize("key", ["labels", "annotations"])
def test_label_annotation_overriders(
    key: str, operator: str, value: dict[str, str], expected: dict[str, str]
) -> None:
    manifest = deployment({"name": "nginx", "image": FICTIONAL})
    manifest["metadata"][key] = {"foo": "foo", "bar": "bar"}
    got = overridden(manifest, **{f"{key}Overrider": [{"operator": operator, "value": value}]})
    assert got["metadata"][key] == expected


def test_labels_added_to_a_manifest_without_any_and_keys_with_slashes() -> None:
    manifest = deployment({"name": "nginx", "image": FICTIONAL})
    del manifest["metadata"]["labels"]
    add = {"operator": "add", "value": {"test2": "test2", "example.io/team": "web"}}
    got = overridden(manifest, labelsOverrider=[add])
    assert got["metadata"]["labels"] == {"test2": "test2", "example.io/team": "web"}


# --- fieldOverrider (overridemanager_test.go) --------------------------------------------------


def config_map(data: dict[str, str]) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "test1", "namespace": "default"},
        "data": data,
    }


def test_field_overrider_yaml() -> None:
    """Test_overrideManagerImpl_ApplyFieldOverriderPolicies_YAML."""
    manifest = config_map({"test.yaml": "\nkey: \n  key1: value\n"})
    operation = {"subPath": "/key/key1", "operator": "replace", "value": "updated_value"}
    field = {"fieldPath": "/data/test.yaml", "yaml": [operation]}
    got = overridden(manifest, fieldOverrider=[field])
    assert got["data"] == {"test.yaml": "key:\n  key1: updated_value\n"}


def test_field_overrider_yaml_of_the_structured_configuration_proposal() -> None:
    """docs/proposals/structured-configuration: the string "3307" written as go-yaml v2
    writes a string that would read as a number, double-quoted."""
    manifest = config_map({"db-config.yaml": "database:\n  host: localhost\n  port: 3306\n"})
    field = {
        "fieldPath": "/data/db-config.yaml",
        "yaml": [
            {"subPath": "/database/host", "operator": "replace", "value": "remote-db.example.com"},
            {"subPath": "/database/port", "operator": "replace", "value": "3307"},
        ],
    }
    got = overridden(manifest, fieldOverrider=[field])
    assert got["data"]["db-config.yaml"] == (
        'database:\n  host: remote-db.example.com\n  port: "3307"\n'
    )


def test_field_overrider_json() -> None:
    """Test_overrideManagerImpl_ApplyJSONOverridePolicies_JSON."""
    manifest = config_map({"test.json": '{"key":{"key1":"value"}}'})
    operation = {"subPath": "/key/key1", "operator": "replace", "value": "updated_value"}
    field = {"fieldPath": "/data/test.json", "json": [operation]}
    got = overridden(manifest, fieldOverrider=[field])
    assert got["data"] == {"test.json": '{"key":{"key1":"updated_value"}}'}


def test_field_overrider_errors() -> None:
    manifest = config_map({"n": "1"})
    remove = {"subPath": "/a", "operator": "remove"}
    with pytest.raises(OverrideError, match=r"path\(/metadata\) is not string"):
        overridden(manifest, fieldOverrider=[{"fieldPath": "/metadata", "json": [remove]}])
    with pytest.raises(OverrideError, match="object has no key"):
        overridden(manifest, fieldOverrider=[{"fieldPath": "/data/m", "json": [remove]}])
    deep = config_map({"n": "[" * 100_000 + "]" * 100_000})  # past the recursion limit
    with pytest.raises(OverrideError, match="exceeded max depth"):
        overridden(deep, fieldOverrider=[{"fieldPath": "/data/n", "json": [remove]}])


def test_plaintext_overrider_is_applied_last_as_a_json_patch() -> None:
    manifest = deployment({"name": "nginx", "image": FICTIONAL})
    got = overridden(
        manifest,
        labelsOverrider=[{"operator": "add", "value": {"env": "prod"}}],
        plaintext=[
            {"path": "/metadata/labels/env", "operator": "replace", "value": "staging"},
            {"path": "/spec/replicas", "operator": "add", "value": 5},
        ],
    )
    assert got["metadata"]["labels"]["env"] == "staging"
    assert got["spec"]["replicas"] == 5
    with pytest.raises(OverrideError, match="missing"):
        overridden(manifest, plaintext=[{"path": "/spec/nothing", "operator": "remove"}])


# --- TestGetMatchingOverridePolicies -----------------------------------------------------------


def _plaintext(value: str) -> Obj:
    return {"plaintext": [{"path": "/metadata/annotations", "operator": "add", "value": value}]}


OVERRIDERS_1, OVERRIDERS_2, OVERRIDERS_3 = (
    _plaintext("foo: bar"),
    _plaintext("aaa: bbb"),
    _plaintext("hello: world"),
)


def _policy(name: str, spec: Obj, kind: str = "OverridePolicy") -> Any:
    return REGISTRY.decode(
        {
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": kind,
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
    )


def _rule(clusters: list[str], overriders: Obj) -> Obj:
    return {"targetCluster": {"clusterNames": clusters}, "overriders": overriders}


POLICY_1 = _policy(  # high implicit priority: by name
    "overridePolicy1",
    {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "test"}],
        "overrideRules": [
            _rule(["cluster1", "cluster2"], OVERRIDERS_1),
            _rule(["cluster2"], OVERRIDERS_2),
        ],
    },
)
POLICY_2 = _policy(  # low implicit priority: no selectors
    "overridePolicy2", {"overrideRules": [_rule(["cluster1", "cluster2"], OVERRIDERS_3)]}
)
POLICY_3 = _policy(
    "overridePolicy3",
    {"resourceSelectors": [], "overrideRules": [_rule(["cluster1", "cluster2"], OVERRIDERS_3)]},
)
OLD_STYLE = _policy(
    "oldOverridePolicy",
    {"targetCluster": {"clusterNames": ["cluster1"]}, "overriders": OVERRIDERS_3},
    kind="ClusterOverridePolicy",
)


@pytest.mark.parametrize(
    ("policies", "cluster", "expected"),
    [
        (
            [POLICY_1, POLICY_2],
            "cluster1",
            [("overridePolicy2", OVERRIDERS_3), ("overridePolicy1", OVERRIDERS_1)],
        ),
        (
            [POLICY_1, POLICY_2],
            "cluster2",
            [
                ("overridePolicy2", OVERRIDERS_3),
                ("overridePolicy1", OVERRIDERS_1),
                ("overridePolicy1", OVERRIDERS_2),
            ],
        ),
        ([POLICY_3], "cluster2", [("overridePolicy3", OVERRIDERS_3)]),
        ([OLD_STYLE], "cluster1", [("oldOverridePolicy", OVERRIDERS_3)]),
        ([OLD_STYLE], "cluster2", []),
    ],
    ids=["rules 1", "rules 2", "rules 3", "targetCluster and overriders", "not targeted"],
)
def test_matching_override_policies(
    policies: list[OverridePolicy | ClusterOverridePolicy],
    cluster: str,
    expected: list[tuple[str, Obj]],
) -> None:
    template = REGISTRY.decode(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "test", "namespace": "default"},
        }
    )
    target = Cluster.model_validate({"metadata": {"name": cluster}})
    ranked = _ranked(policies, template)
    got = TemplatePolicies(namespaced=ranked).for_cluster(target).namespaced
    assert [(p.name, p.overriders.to_dict()) for p in got] == expected


# --- shadow_test.go and the annotation's JSON --------------------------------------------------


def test_applied_overrides_sorted_by_policy_name_as_go_marshals_them() -> None:
    items = [
        PolicyOverriders("zoo", "", Overriders.model_validate(_plaintext("a<b"))),
        PolicyOverriders(
            "bar",
            "",
            Overriders.model_validate(
                {
                    "plaintext": [{"path": "/spec/x", "operator": "remove"}],
                    "imageOverrider": [{"component": "Tag", "operator": "remove"}],
                    "labelsOverrider": [{"operator": "add", "value": {"z": "1", "a": "2"}}],
                }
            ),
        ),
    ]
    text = applied_overrides_json(items)
    assert text == (
        '[{"policyName":"bar","overriders":{"plaintext":[{"path":"/spec/x","operator":"remove",'
        '"value":null}],"imageOverrider":[{"component":"Tag","operator":"remove"}],'
        '"labelsOverrider":[{"operator":"add","value":{"a":"2","z":"1"}}]}},'
        '{"policyName":"zoo","overriders":{"plaintext":[{"path":"/metadata/annotations",'
        '"operator":"add","value":"a\\u003cb"}]}}]'
    )
    assert [item["policyName"] for item in json.loads(text)] == ["bar", "zoo"]
