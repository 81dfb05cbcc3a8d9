"""The `fleetwarden` command: taint with --local, validate."""

from pathlib import Path

import yaml
from typer.testing import CliRunner

from fleetwarden.cli import app

EXAMPLE = str(Path(__file__).parents[2] / "examples" / "member1.yaml")
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_taint_adds_and_reports_like_karmadactl() -> None:
    code, out, _ = run(
        "taint", "clusters", "member1", "dedicated=special:NoSchedule", "--local", "-f", EXAMPLE
    )
    assert (code, out) == (0, "cluster/member1 tainted\n")


def test_taint_prints_the_admitted_object_with_time_added_on_no_execute() -> None:
    code, out, _ = run(
        "taint",
        "clusters",
        "member1",
        "dedicated=special:NoExecute",
        "cluster.karmada.io/not-ready-",
        "--local",
        "-f",
        EXAMPLE,
        "-o",
        "yaml",
    )
    assert code == 0
    taints = yaml.safe_load(out)["spec"]["taints"]
    assert [(t["key"], t["effect"]) for t in taints] == [("dedicated", "NoExecute")]
    assert taints[0]["timeAdded"].endswith("Z")


def test_taint_refuses_an_existing_taint_without_overwrite() -> None:
    code, _, err = run(
        "taint",
        "clusters",
        "member1",
        "cluster.karmada.io/not-ready:NoSchedule",
        "--local",
        "-f",
        EXAMPLE,
    )
    assert code == 1
    assert (
        "cluster member1 already has cluster.karmada.io/not-ready taint(s) with same effect(s) and --overwrite is false"
        in err
    )


def test_taint_with_overwrite_reports_modified() -> None:
    code, out, _ = run(
        "taint",
        "clusters",
        "member1",
        "cluster.karmada.io/not-ready=x:NoSchedule",
        "--overwrite",
        "--local",
        "-f",
        EXAMPLE,
    )
    assert (code, out) == (0, "cluster/member1 modified\n")


def test_taint_effect_refused_by_cluster_admission_names_the_field() -> None:
    code, _, err = run(
        "taint", "clusters", "member1", "foo:PreferNoSchedule", "--local", "-f", EXAMPLE
    )
    assert code == 1
    assert (
        'spec.taints[0].effect: Unsupported value: "PreferNoSchedule": supported values: "NoSchedule", "NoExecute"'
        in err
    )


def test_taint_of_a_missing_cluster_is_not_found() -> None:
    code, _, err = run("taint", "clusters", "member9", "foo:NoSchedule", "--local", "-f", EXAMPLE)
    assert code == 1
    assert 'clusters.cluster.karmada.io "member9" not found' in err


def test_validate_refuses_a_kind_no_api_serves(tmp_path: Path) -> None:
    misspelled = tmp_path / "policy.yaml"
    misspelled.write_text(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicie\n"
        "metadata: {name: nginx, namespace: default}\nspec: {}\n"
    )
    code, out, err = run("validate", str(misspelled))
    assert code == 1
    assert out == ""
    assert err.strip() == (
        'error: resource mapping not found for name: "nginx" namespace: "default" from '
        f'"{misspelled}": no matches for kind "PropagationPolicie" in version '
        '"policy.karmada.io/v1alpha1"'
    )


def _widgets_crd(scope: str, schema: str) -> str:
    """A CRD of Widgets in example.com, as YAML, with the openAPIV3Schema given."""
    return (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: widgets.example.com}\n"
        f"spec:\n  group: example.com\n  scope: {scope}\n"
        "  names: {plural: widgets, singular: widget, kind: Widget}\n"
        "  versions:\n  - name: v1\n    served: true\n    storage: true\n"
        f"    schema: {{openAPIV3Schema: {schema}}}\n"
    )


def test_validate_takes_a_kind_a_crd_given_with_it_serves(tmp_path: Path) -> None:
    manifests = tmp_path / "widgets.yaml"
    manifests.write_text(
        _widgets_crd("Namespaced", "{type: object, x-kubernetes-preserve-unknown-fields: true}")
        + "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n"
    )
    code, out, _ = run("validate", str(manifests))
    assert code == 0
    assert "Widget 'w' admitted" in out


def test_validate_checks_a_custom_resource_against_its_crds_schema_and_scope(
    tmp_path: Path,
) -> None:
    """As the hub does once the CRD is established: the schema's maximum refuses one
    Widget, the cluster scope another that names a namespace; the third is admitted."""
    manifests = tmp_path / "widgets.yaml"
    size = "{type: object, properties: {spec: {type: object, properties: {size: {type: integer, maximum: 5}}}}}"
    widget = "---\napiVersion: example.com/v1\nkind: Widget\n"
    manifests.write_text(
        _widgets_crd("Cluster", size)
        + f"{widget}metadata: {{name: big}}\nspec: {{size: 9}}\n"
        + f"{widget}metadata: {{name: placed, namespace: a}}\n"
        + f"{widget}metadata: {{name: small}}\nspec: {{size: 1}}\n"
    )
    code, out, err = run("validate", str(manifests))
    assert code == 1
    assert "Widget 'small' admitted" in out
    assert (
        'Widget.example.com "big" is invalid: spec.size: Invalid value: 9: '
        "spec.size in body should be less than or equal to 5"
    ) in err
    assert 'Widget.example.com "placed" is invalid: metadata.namespace: Forbidden' in err


def test_validate_reports_admitted_and_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: member2}\n"
        "spec: {syncMode: Push, taints: [{key: a, effect: NoRun}]}\n"
    )
    code, out, err = run("validate", EXAMPLE, str(bad))
    assert code == 1
    assert "Cluster 'member1' admitted" in out
    assert 'spec.taints[0].effect: Unsupported value: "NoRun"' in err


def test_validate_refuses_a_yaml_alias_bomb_and_deep_nesting(tmp_path: Path) -> None:
    laughs = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{new}: &{new} [{', '.join([f'*{old}'] * 9)}]\n"
        for old, new in zip("abcdefgh", "bcdefghi", strict=True)
    )
    (tmp_path / "laughs.yaml").write_text(laughs)
    (tmp_path / "deep.yaml").write_text("[" * 100_000 + "]" * 100_000)
    for name, error in (
        ("laughs", "document contains excessive aliasing"),
        ("deep", "exceeded max depth of 100"),
    ):
        code, _, err = run("validate", str(tmp_path / f"{name}.yaml"))
        assert code == 2, err
        assert f"yaml: {error}" in err


def test_a_missing_or_unreadable_manifest_is_named_in_one_line(tmp_path: Path) -> None:
    absent = str(tmp_path / "absent.yaml")
    for args, path, reason in (
        (("validate", absent), absent, "No such file or directory"),
        (("validate", str(tmp_path)), str(tmp_path), "Is a directory"),
        (("taint", "clusters", "m1", "a=b:NoSchedule", "--local", "-f", absent), absent, "No such"),
    ):
        code, _, err = run(*args)
        assert code == 2, err
        assert f"Invalid value: {path}: {reason}" in err
        assert "Traceback" not in err
