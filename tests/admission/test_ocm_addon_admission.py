"""ManagedClusterAddOn admission: the v1alpha1 CRD's defaults and checks.

Cases from open-cluster-management-io/api test/integration/api/managedclusteraddon_test.go
(v1alpha1), and the CRD's other defaults and constraints.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetwarden.admission import default_chain
from fleetwarden.api.errors import Invalid
from fleetwarden.api.meta import Resource
from fleetwarden.api.ocm.addon import ManagedClusterAddOn

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
DEFAULT_NS = "open-cluster-management-agent-addon"
INSTALL_NS_PATTERN = "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'"
SIGNER_PATTERN = r"'^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$'"
CONFIG = {"group": "test.group", "resource": "tests", "namespace": "cluster1", "name": "test"}


def addon(spec: dict[str, Any] | None = None, **rest: Any) -> dict[str, Any]:
    obj = {
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "ManagedClusterAddOn",
        "metadata": {"name": "application-manager", "namespace": "cluster1"},
        **rest,
    }
    return obj if spec is None else {**obj, "spec": spec}


def admit(obj: dict[str, Any], old: Resource | None = None) -> dict[str, Any]:
    given = copy.deepcopy(obj)
    admitted = default_chain().admit(obj, old, now=NOW).to_dict()
    assert obj == given, "admission changed its input"
    return admitted


def refusal(obj: dict[str, Any], old: Resource | None = None) -> list[str]:
    with pytest.raises(Invalid) as err:
        default_chain().admit(obj, old, now=NOW)
    return [str(e) for e in err.value.errors]


def stored(obj: dict[str, Any]) -> Resource:
    return default_chain().admit(obj, now=NOW)


# --- spec ------------------------------------------------------------------------------------


def test_an_empty_spec_gets_the_default_install_namespace() -> None:
    admitted = admit(addon({}))
    assert admitted["spec"] == {"installNamespace": DEFAULT_NS}
    assert isinstance(stored(addon({})), ManagedClusterAddOn)


def test_a_given_install_namespace_and_configs_are_kept() -> None:
    spec = {"installNamespace": "addon-ns", "configs": [CONFIG]}
    assert admit(addon(spec))["spec"] == spec


def test_a_config_of_the_core_group_gets_it_written_out() -> None:
    spec = {"configs": [{"resource": "configmaps", "name": "cm"}]}
    assert admit(addon(spec))["spec"]["configs"] == [
        {"group": "", "resource": "configmaps", "name": "cm"}
    ]


def test_the_spec_is_required() -> None:
    assert refusal(addon()) == ["spec: Required value"]


@pytest.mark.parametrize(
    ("namespace", "errors"),
    [
        ("a" * 63, []),
        (
            "#test",
            [
                'spec.installNamespace: Invalid value: "#test": spec.installNamespace in body '
                f"should match {INSTALL_NS_PATTERN}"
            ],
        ),
        ("a" * 64, ["spec.installNamespace: Too long: may not be more than 63 bytes"]),
    ],
)
def test_install_namespace_is_a_dns_label(namespace: str, errors: list[str]) -> None:
    obj = addon({"installNamespace": namespace})
    if errors:
        assert refusal(obj) == errors
    else:
        assert admit(obj)["spec"]["installNamespace"] == namespace


@pytest.mark.parametrize(
    ("config", "errors"),
    [
        ({"namespace": "cluster1", "name": "test"}, ["spec.configs[0].resource: Required value"]),
        (
            {"group": "test.group", "resource": "tests", "namespace": "cluster1"},
            ["spec.configs[0].name: Required value"],
        ),
        (
            {"resource": "", "name": ""},
            [
                'spec.configs[0].name: Invalid value: "": spec.configs[0].name in body should '
                "be at least 1 chars long",
                'spec.configs[0].resource: Invalid value: "": spec.configs[0].resource in body '
                "should be at least 1 chars long",
            ],
        ),
    ],
)
def test_a_config_names_its_resource_and_object(config: dict[str, Any], errors: list[str]) -> None:
    assert refusal(addon({"configs": [config]})) == errors


# --- status ----------------------------------------------------------------------------------


def with_status(status: dict[str, Any]) -> dict[str, Any]:
    return addon({"installNamespace": DEFAULT_NS}, status=status)


@pytest.mark.parametrize(
    "status",
    [
        {"registrations": [{"signerName": "open-cluster-management.io/addontest"}]},
        {
            "registrations": [
                {
                    "signerName": "kubernetes.io/kube-apiserver-client",
                    "subject": {"user": "test-user", "groups": ["test-group"]},
                }
            ],
            "kubeClientDriver": "csr",
        },
        {"configReferences": [{**CONFIG, "lastObservedGeneration": 1}]},
        {
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "reason": "ManagedClusterAddOnLeaseUpdated",
                    "message": "application-manager add-on is available.",
                    "lastTransitionTime": "2024-05-01T12:00:00Z",
                }
            ],
            "healthCheck": {"mode": "Customized"},
            "namespace": "open-cluster-management-agent-addon",
        },
    ],
)
def test_status_an_agent_reports_is_admitted_as_given(status: dict[str, Any]) -> None:
    assert admit(with_status(status))["status"] == status


def test_health_check_mode_defaults_to_lease() -> None:
    assert admit(with_status({"healthCheck": {}}))["status"] == {"healthCheck": {"mode": "Lease"}}


def test_status_group_resources_get_the_core_group_written_out() -> None:
    status = {
        "supportedConfigs": [{"resource": "addondeploymentconfigs"}],
        "configReferences": [{"resource": "configmaps", "name": "cm"}],
    }
    admitted = admit(with_status(status))["status"]
    assert admitted["supportedConfigs"] == [{"group": "", "resource": "addondeploymentconfigs"}]
    assert admitted["configReferences"] == [{"group": "", "resource": "configmaps", "name": "cm"}]


def test_status_is_checked_against_the_crd() -> None:
    status = {
        "conditions": [{"type": "Available", "status": "Yes", "reason": "Up", "message": ""}],
        "configReferences": [{"resource": "tests", "name": "x", "desiredConfig": {"name": ""}}],
        "healthCheck": {"mode": "Probe"},
        "kubeClientDriver": "invalid-driver",
        "registrations": [{"signerName": "addontest"}, {"subject": {"user": "u"}}],
        "relatedObjects": [{"resource": "deployments", "name": "agent"}],
        "supportedConfigs": [{"group": "addon.open-cluster-management.io"}],
    }
    assert refusal(with_status(status)) == [
        "status.conditions[0].lastTransitionTime: Required value",
        'status.conditions[0].status: Unsupported value: "Yes": supported values: "True", '
        '"False", "Unknown"',
        'status.configReferences[0].desiredConfig.name: Invalid value: "": '
        "status.configReferences[0].desiredConfig.name in body should be at least 1 chars long",
        'status.healthCheck.mode: Unsupported value: "Probe": supported values: "Lease", '
        '"Customized"',
        'status.kubeClientDriver: Unsupported value: "invalid-driver": supported values: '
        '"csr", "token"',
        'status.registrations[0].signerName: Invalid value: "addontest": '
        f"status.registrations[0].signerName in body should match {SIGNER_PATTERN}",
        "status.registrations[1].signerName: Required value",
        "status.relatedObjects[0].group: Required value",
        "status.supportedConfigs[0].resource: Required value",
    ]


def test_a_short_signer_name_fails_on_its_length_first() -> None:
    status = {"registrations": [{"signerName": "a.b/"}]}
    assert refusal(with_status(status)) == [
        'status.registrations[0].signerName: Invalid value: "a.b/": '
        "status.registrations[0].signerName in body should be at least 5 chars long"
    ]


def test_an_update_is_checked_too() -> None:
    old = stored(addon({}))
    assert refusal(addon({"installNamespace": "Agents"}), old) == [
        'spec.installNamespace: Invalid value: "Agents": spec.installNamespace in body '
        f"should match {INSTALL_NS_PATTERN}"
    ]
