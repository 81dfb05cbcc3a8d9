"""The kind registry and decoding: typed kinds, unstructured templates, type errors."""

from datetime import UTC, datetime

import pytest

from fleetwarden.api import core
from fleetwarden.api.errors import Invalid
from fleetwarden.api.registry import REGISTRY, decode, guess_plural

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "nginx", "labels": {"app": "nginx"}},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "nginx"}},
        "template": {"spec": {"containers": [{"image": "nginx", "name": "nginx"}]}},
    },
}


def test_unknown_kind_is_kept_whole_as_an_unstructured_template() -> None:
    obj = decode(DEPLOYMENT)
    assert isinstance(obj, core.Unstructured)
    assert obj.to_dict() == DEPLOYMENT
    info = REGISTRY.info("apps/v1", "Deployment")
    assert (info.plural, info.namespaced, info.short_names) == ("deployments", True, ("deploy",))


def test_cluster_scoped_builtin_kinds_keep_their_scope() -> None:
    assert not REGISTRY.info("rbac.authorization.k8s.io/v1", "ClusterRole").namespaced


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("Widget", "widgets"),
        ("Policy", "policies"),
        ("Status", "statuses"),
        ("Gateway", "gateways"),
    ],
)
def test_plural_guessed_as_the_rest_mapper_does(kind: str, plural: str) -> None:
    assert guess_plural(kind) == plural
    assert REGISTRY.info("example.com/v1", kind).plural == plural


def test_type_errors_name_the_field_like_a_crd_schema() -> None:
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "member1", "namespace": "karmada-cluster"},
        "spec": {"leaseDurationSeconds": "40"},
    }
    with pytest.raises(Invalid) as err:
        decode(lease)
    assert err.value.message == (
        'Lease.coordination.k8s.io "member1" is invalid: spec.leaseDurationSeconds: '
        'Invalid value: "40": must be of type integer'
    )
    assert err.value.status()["details"]["causes"] == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "40": must be of type integer',
            "field": "spec.leaseDurationSeconds",
        }
    ]


def test_label_values_must_be_strings() -> None:
    doc = {**DEPLOYMENT, "metadata": {"name": "nginx", "labels": {"version": 1}}}
    with pytest.raises(Invalid, match=r"metadata\.labels\.version: Invalid value: 1"):
        decode(doc)


@pytest.mark.parametrize("missing", ["apiVersion", "kind"])
def test_api_version_and_kind_are_required(missing: str) -> None:
    doc = {k: v for k, v in DEPLOYMENT.items() if k != missing}
    with pytest.raises(Invalid, match=f"{missing}: Required value"):
        decode(doc)


def test_times_round_trip_in_rfc3339_utc() -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e1", "namespace": "default"},
        "involvedObject": {"kind": "Cluster", "name": "member1"},
        "firstTimestamp": "2025-01-01T00:00:00Z",
        "eventTime": "2025-01-01T00:00:00.250000Z",
    }
    obj = decode(event)
    assert isinstance(obj, core.Event)
    assert obj.first_timestamp == datetime(2025, 1, 1, tzinfo=UTC)
    assert obj.to_dict() == event


def test_offset_times_are_normalised_to_utc() -> None:
    taint = core.Taint.model_validate(
        {"key": "k", "effect": "NoExecute", "timeAdded": "2025-01-01T08:00:00+08:00"}
    )
    assert taint.to_dict()["timeAdded"] == "2025-01-01T00:00:00Z"


def test_time_without_zone_is_refused() -> None:
    with pytest.raises(Invalid, match="has no time zone"):
        decode(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": "e"},
                "firstTimestamp": "2025-01-01T00:00:00",
            }
        )
