"""Field errors read exactly as Kubernetes prints them."""

from fleetwarden.api.errors import Invalid, Path

EFFECT = Path("spec").child("taints").index(1).child("effect")


def test_unsupported_value_lists_supported_values() -> None:
    err = EFFECT.not_supported("NoRun", ["NoSchedule", "NoExecute"])
    assert str(err) == (
        'spec.taints[1].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "NoExecute"'
    )


def test_error_bodies_by_type() -> None:
    key = Path("spec").child("taints").index(0).child("key")
    assert str(key.required()) == "spec.taints[0].key: Required value"
    assert str(key.forbidden("may not be set")) == "spec.taints[0].key: Forbidden: may not be set"
    assert (
        str(key.duplicate("a:NoSchedule")) == 'spec.taints[0].key: Duplicate value: "a:NoSchedule"'
    )
    assert (
        str(Path("spec.weight").invalid(11, "too big")) == "spec.weight: Invalid value: 11: too big"
    )
    assert str(Path("spec.x").invalid(True)) == "spec.x: Invalid value: true"
    assert str(Path("spec.x").invalid({"a": 1})) == 'spec.x: Invalid value: {"a":1}'


def test_map_keys_in_paths() -> None:
    assert str(Path("metadata").child("labels").key("app")) == "metadata.labels[app]"


def test_invalid_with_one_or_many_errors() -> None:
    one = Invalid("Cluster", "cluster.karmada.io", "member1", [EFFECT.required()])
    assert (
        one.message
        == 'Cluster.cluster.karmada.io "member1" is invalid: spec.taints[1].effect: Required value'
    )
    many = Invalid("Namespace", "", "ns", [Path("a").required(), Path("b").required()])
    assert many.message == 'Namespace "ns" is invalid: [a: Required value, b: Required value]'
    assert many.status()["code"] == 422
    assert many.status()["reason"] == "Invalid"
