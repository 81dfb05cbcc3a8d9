"""CustomResourceDefinition admission: apiextensions/v1 defaulting and the essential rules of
ValidateCustomResourceDefinition(Update), in upstream's words."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetwarden.admission import default_chain
from fleetwarden.api.apiextensions import CustomResourceDefinition
from fleetwarden.api.errors import Invalid

NOW = datetime(2025, 1, 1, tzinfo=UTC)
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def crd(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {"name": "v1", "served": True, "storage": True,
                 "schema": {"openAPIV3Schema": {"type": "object"}}}
            ],
            **spec,
        },
    }  # fmt: skip


def refusal(obj: dict[str, Any], old: CustomResourceDefinition | None = None) -> list[str]:
    with pytest.raises(Invalid) as err:
        default_chain().admit(obj, old, now=NOW)
    return [str(e) for e in err.value.errors]


def test_the_names_and_conversion_are_defaulted() -> None:
    admitted = default_chain().admit(crd(), now=NOW).to_dict()
    assert admitted["spec"]["names"] == {
        "plural": "widgets",
        "singular": "widget",
        "kind": "Widget",
        "listKind": "WidgetList",
    }
    assert admitted["spec"]["conversion"] == {"strategy": "None"}


@pytest.mark.parametrize(
    ("spec", "errors"),
    [
        ({"group": "example"}, [
            'metadata.name: Invalid value: "widgets.example.com": must be '
            'spec.names.plural+"."+spec.group',
            'spec.group: Invalid value: "example": should be a domain with at least one dot',
        ]),
        ({"scope": ""}, ["spec.scope: Required value"]),
        ({"versions": []}, [
            "spec.versions: Invalid value: []: must have exactly one version marked as storage "
            "version",
        ]),
        ({"versions": [
            {"name": "v1", "served": True, "storage": True,
             "schema": {"openAPIV3Schema": {"type": "object"}}},
            {"name": "v1", "served": True, "storage": True,
             "schema": {"openAPIV3Schema": {"type": "object"}}},
        ]}, [
            "must contain unique version names",
            "must have exactly one version marked as storage version",
        ]),
        ({"versions": [{"name": "V1", "served": True, "storage": True,
                        "schema": {"openAPIV3Schema": {"type": "object"}}}]},
         [f'spec.versions[0].name: Invalid value: "V1": {DNS1035}']),
        ({"names": {"plural": "widgets", "kind": "Widget", "listKind": "Widget"}},
         ['spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same']),
        ({"names": {"plural": "widgets", "kind": "Wid_get"}}, [
            'spec.names.kind: Invalid value: "Wid_get": may have mixed case, but should '
            f"otherwise match: {DNS1035}",
            'spec.names.listKind: Invalid value: "Wid_getList": may have mixed case, but should '
            f"otherwise match: {DNS1035}",
        ]),
        ({"versions": [{"name": "v1", "served": True, "storage": True,
                        "schema": {"openAPIV3Schema": {"type": "object"}},
                        "additionalPrinterColumns": [
                            {"name": "Size", "type": "float", "jsonPath": "spec.size"}]}]},
         [
            'spec.versions[0].additionalPrinterColumns[0].type: Invalid value: "float": must '
            "be one of boolean,date,integer,number,string",
            'spec.versions[0].additionalPrinterColumns[0].JSONPath: Invalid value: '
            '"spec.size": must be a simple json path starting with .',
         ]),
    ],
)  # fmt: skip
def test_a_crd_breaking_a_rule_is_refused(spec: dict[str, Any], errors: list[str]) -> None:
    found = refusal(crd(**spec))
    for error in errors:
        assert any(error in e for e in found), (error, found)


def test_what_names_the_storage_cannot_change_once_established() -> None:
    old = CustomResourceDefinition.model_validate(
        {**crd(), "status": {"conditions": [{"type": "Established", "status": "True"}]}}
    )
    changed = crd(scope="Cluster", group="other.example.com")
    changed["metadata"]["name"] = "widgets.other.example.com"
    changed["spec"]["names"]["kind"] = "Gadget"
    assert refusal(changed, old) == [
        'spec.scope: Invalid value: "Cluster": field is immutable',
        'spec.names.kind: Invalid value: "Gadget": field is immutable',
        'spec.group: Invalid value: "other.example.com": field is immutable',
    ]
    not_established = CustomResourceDefinition.model_validate(crd())
    kind_changed = copy.deepcopy(crd())
    kind_changed["spec"]["names"]["kind"] = "Gadget"
    default_chain().admit(kind_changed, not_established, now=NOW)


def test_an_update_needs_schemas_only_where_every_version_had_one() -> None:
    schemaless = crd()
    del schemaless["spec"]["versions"][0]["schema"]
    assert refusal(schemaless) == ["spec.versions[0].schema.openAPIV3Schema: Required value"]
    old = CustomResourceDefinition.model_validate(schemaless)
    default_chain().admit(schemaless, old, now=NOW)
