"""ManifestWork admission: the CRD's defaults and enums, and OCM's work webhook.

Cases from ocm pkg/work/webhook/v1/manifestwork_validating_test.go and
pkg/work/webhook/common/validator_test.go.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetwarden.admission import default_chain
from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.errors import Invalid, WebhookDenied
from fleetwarden.api.meta import Resource
from fleetwarden.api.ocm.work import ManifestWork
from fleetwarden.auth.rbac import RBAC

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
WEBHOOK = "manifestworkvalidators.admission.work.open-cluster-management.io"
RBAC_GROUP = "rbac.authorization.k8s.io"
BOB = UserInfo.of("bob", ["system:authenticated"])


def config_map(name: str = "cm1", namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"a": "b"},
    }


def work(*manifests: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "ManifestWork",
        "metadata": {"name": "work1", "namespace": "cluster1"},
        "spec": {"workload": {"manifests": list(manifests)}, **spec},
    }


def admit(obj: dict[str, Any], old: Resource | None = None, **review: Any) -> Resource:
    given = copy.deepcopy(obj)
    admitted: Resource = default_chain().review(obj, old, now=NOW, **review).obj
    assert obj == given, "admission changed its input"
    return admitted


def denial(obj: dict[str, Any], old: Resource | None = None, **review: Any) -> str:
    with pytest.raises(WebhookDenied) as err:
        admit(obj, old, **review)
    assert (err.value.code, err.value.reason) == (400, "BadRequest")
    prefix = f'admission webhook "{WEBHOOK}" denied the request: '
    assert err.value.message.startswith(prefix)
    return err.value.message.removeprefix(prefix)


def test_a_work_is_admitted_and_its_defaults_set() -> None:
    given = work(
        config_map(),
        deleteOption={},
        manifestConfigs=[
            {
                "resourceIdentifier": {"resource": "configmaps", "name": "cm1"},
                "updateStrategy": {"type": "ServerSideApply", "serverSideApply": {}},
            }
        ],
    )
    admitted = admit(given)
    assert isinstance(admitted, ManifestWork)
    spec = admitted.to_dict()["spec"]
    assert spec["deleteOption"] == {"propagationPolicy": "Foreground"}
    assert spec["manifestConfigs"][0] == {
        "resourceIdentifier": {"resource": "configmaps", "name": "cm1"},
        "updateStrategy": {
            "type": "ServerSideApply",
            "serverSideApply": {"fieldManager": "work-agent"},
        },
        "feedbackScrapeType": "Poll",
    }
    assert spec["workload"]["manifests"] == [config_map()]


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"deleteOption": {"propagationPolicy": "Background"}}, "spec.deleteOption"),
        (
            {"manifestConfigs": [{"resourceIdentifier": {"resource": "configmaps", "name": "a"},
                                  "updateStrategy": {"type": "Patch"}}]},
            "spec.manifestConfigs[0].updateStrategy.type",
        ),
        (
            {"manifestConfigs": [{"resourceIdentifier": {"resource": "configmaps", "name": "a"},
                                  "feedbackRules": [{"type": "Raw"}]}]},
            "spec.manifestConfigs[0].feedbackRules[0].type",
        ),
        ({"manifestConfigs": [{"resourceIdentifier": {"name": "a"}}]},
         "spec.manifestConfigs[0].resourceIdentifier.resource"),
    ],
)  # fmt: skip
def test_the_schema_refuses_what_its_enums_and_requirements_do_not_allow(
    spec: dict[str, Any], field: str
) -> None:
    with pytest.raises(Invalid) as err:
        admit(work(config_map(), **spec))
    assert any(str(e).startswith(field) for e in err.value.errors), err.value.errors


def test_a_work_without_manifests_is_refused() -> None:
    assert denial(work()) == "manifests should not be empty"


def test_a_manifest_needs_a_name_and_no_generate_name() -> None:
    nameless = config_map()
    del nameless["metadata"]["name"]
    assert denial(work(nameless)) == "name must be set in manifest"
    generated = config_map()
    generated["metadata"]["generateName"] = "cm-"
    assert denial(work(generated)) == "generateName must not be set in manifest"


def test_the_same_object_twice_is_refused() -> None:
    message = denial(work(config_map(), config_map("cm2"), config_map()))
    assert message == "duplicate manifest for resource default/cm1 with resource type v1.ConfigMap"
    # The same name in another namespace is another object.
    admit(work(config_map(), config_map(namespace="other")))


def test_manifests_over_the_size_limit_are_refused() -> None:
    big = config_map()
    big["data"] = {"a": "x" * 500 * 1024}
    assert denial(work(big)).endswith("bytes which exceeds the 512000 limit")


def sized(json_length: int) -> dict[str, Any]:
    """A ConfigMap whose compact JSON is that long."""
    manifest = config_map()
    manifest["data"] = {"a": ""}
    padding = json_length - len(json.dumps(manifest, separators=(",", ":")))
    manifest["data"]["a"] = "x" * padding
    return manifest


def test_the_size_is_counted_as_the_manifests_protobuf_size() -> None:
    """Manifest.Size(): 1 byte of tag and 3 of length besides 511996 bytes of JSON make the
    limit exactly; one more byte of JSON is over it."""
    admit(work(sized(511996)))
    assert denial(work(sized(511997))) == (
        "the size of manifests is 512001 bytes which exceeds the 512000 limit"
    )
    # Two manifests of 255998 bytes: 2 × (1 + 255998 + 3) = 512004.
    other = sized(255998)
    other["metadata"]["name"] = "cm2"
    assert denial(work(sized(255998), other)) == (
        "the size of manifests is 512004 bytes which exceeds the 512000 limit"
    )


@pytest.mark.parametrize("kind", [None, "", 5])
def test_a_manifest_without_a_kind_is_refused(kind: Any) -> None:
    """validateManifest: unstructured's decoding refuses an object without a kind."""
    manifest: dict[str, Any] = {"apiVersion": "v1", "metadata": {"name": "cm1"}}
    if kind is not None:
        manifest["kind"] = kind
    raw = json.dumps(manifest, separators=(",", ":"))
    assert denial(work(config_map("cm0"), manifest)) == f"Object 'Kind' is missing in '{raw}'"


def cel_rule(**rule: Any) -> dict[str, Any]:
    identifier = {"resource": "configmaps", "name": "cm1", "namespace": "default"}
    return {"resourceIdentifier": identifier, "conditionRules": [rule]}


def test_a_cel_condition_rule_needs_a_condition() -> None:
    """The CRD's x-kubernetes-validations on conditionRules, in a work and in a replica
    set's template."""
    rule = cel_rule(type="CEL", condition="", celExpressions=["true"])
    with pytest.raises(Invalid) as err:
        admit(work(config_map(), manifestConfigs=[rule]))
    assert [str(e) for e in err.value.errors] == [
        'spec.manifestConfigs[0].conditionRules[0]: Invalid value: "object": '
        "Condition is required for CEL rules"
    ]
    template = {"workload": {"manifests": [config_map()]}, "manifestConfigs": [rule]}
    with pytest.raises(Invalid) as err:
        admit(replica_set({"name": "p"}, manifestWorkTemplate=template))
    assert [str(e) for e in err.value.errors] == [
        "spec.manifestWorkTemplate.manifestConfigs[0].conditionRules[0]: Invalid value: "
        '"object": Condition is required for CEL rules'
    ]
    # WellKnownConditions needs none by this rule; a CEL rule with a condition passes.
    admit(work(config_map(), manifestConfigs=[cel_rule(type="WellKnownConditions", condition="")]))
    admit(work(config_map(), manifestConfigs=[cel_rule(type="CEL", condition="Ready")]))


def executor(name: str = "sa1") -> dict[str, Any]:
    return {"subject": {"type": "ServiceAccount",
                        "serviceAccount": {"namespace": "ns1", "name": name}}}  # fmt: skip


def may_execute_as(*names: str) -> RBAC:
    """An authorizer under which bob may execute-as these service accounts in cluster1."""
    rbac = RBAC()
    rule = {
        "apiGroups": ["work.open-cluster-management.io"],
        "resources": ["manifestworks"],
        "verbs": ["execute-as"],
        "resourceNames": list(names),
    }
    rbac.observe(f"{RBAC_GROUP}/clusterroles", {"metadata": {"name": "bob", "resourceVersion": "1"},
                                              "rules": [rule]})  # fmt: skip
    rbac.observe(
        f"{RBAC_GROUP}/rolebindings",
        {
            "metadata": {"name": "bob", "namespace": "cluster1", "resourceVersion": "2"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "bob"},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "User", "name": "bob"}],
        },
    )
    return rbac


def test_an_executor_needs_execute_as_on_its_service_account() -> None:
    allowed = may_execute_as("system:serviceaccount:ns1:sa1")
    given = work(config_map(), executor=executor())
    admit(given, user=BOB, authorizer=allowed)
    message = denial(work(config_map(), executor=executor("sa2")), user=BOB, authorizer=allowed)
    assert message == (
        "user bob cannot manipulate the Manifestwork with executor ns1/sa2 in namespace cluster1"
    )


def test_an_unchanged_executor_is_not_checked_again_and_no_executor_never() -> None:
    nobody = RBAC()
    old = admit(work(config_map(), executor=executor()))
    admit(work(config_map("cm2"), executor=executor()), old, user=BOB, authorizer=nobody)
    admit(work(config_map()), user=BOB, authorizer=nobody)


# --- ManifestWorkReplicaSet: its CRD schema alone ----------------------------------------------


def replica_set(*refs: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "work.open-cluster-management.io/v1alpha1",
        "kind": "ManifestWorkReplicaSet",
        "metadata": {"name": "mwrs1", "namespace": "default"},
        "spec": {
            "manifestWorkTemplate": {"workload": {"manifests": [config_map()]}},
            "placementRefs": list(refs),
            **spec,
        },
    }


def test_a_replica_set_gets_its_crds_defaults() -> None:
    progressive = {"name": "p2", "rolloutStrategy": {"type": "Progressive",
                                                     "progressive": {"maxConcurrency": "50%"}}}  # fmt: skip
    spec = admit(replica_set({"name": "p1"}, progressive)).to_dict()["spec"]
    assert spec["cascadeDeletionPolicy"] == "Background"
    assert spec["placementRefs"] == [
        {"name": "p1", "rolloutStrategy": {
            "type": "All", "all": {"progressDeadline": "None", "minSuccessTime": "0"}}},
        {"name": "p2", "rolloutStrategy": {"type": "Progressive", "progressive": {
            "maxConcurrency": "50%", "minSuccessTime": "0", "progressDeadline": "None"}}},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("given", "field"),
    [
        (replica_set(), "spec.placementRefs"),
        (replica_set({"name": ""}), "spec.placementRefs[0].name"),
        (replica_set({"name": "p", "rolloutStrategy": {"type": "Canary"}}),
         "spec.placementRefs[0].rolloutStrategy.type"),
        (replica_set({"name": "p", "rolloutStrategy": {
            "type": "Progressive", "progressive": {"maxConcurrency": "two"}}}),
         "spec.placementRefs[0].rolloutStrategy.progressive.maxConcurrency"),
        (replica_set({"name": "p", "rolloutStrategy": {
            "type": "All", "all": {"progressDeadline": "soon"}}}),
         "spec.placementRefs[0].rolloutStrategy.all.progressDeadline"),
        (replica_set({"name": "p"}, cascadeDeletionPolicy="Orphan"),
         "spec.cascadeDeletionPolicy"),
    ],
)  # fmt: skip
def test_the_replica_set_schema_refuses(given: dict[str, Any], field: str) -> None:
    with pytest.raises(Invalid) as err:
        admit(given)
    assert any(str(e).startswith(field) for e in err.value.errors), err.value.errors
