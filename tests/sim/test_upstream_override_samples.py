"""Upstream Karmada's own OverridePolicy and ClusterOverridePolicy examples (samples/ and
artifacts/example/, in tests/data/karmada), applied to a simulated fleet: each member's Work
carries the manifest upstream's override manager would have written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .conftest import CLUSTER, run, scenario

DATA = Path(__file__).parents[1] / "data" / "karmada"
WORK = {"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work"}

Obj = dict[str, Any]


def sample(name: str) -> list[Obj]:
    return [doc for doc in yaml.safe_load_all((DATA / name).read_text()) if doc]


def fleet(**labels: dict[str, str]) -> tuple[dict[str, Obj], list[Obj]]:
    """Simulated members backing Push clusters with these labels."""
    clusters = [
        {
            **CLUSTER,
            "metadata": {"name": name, "labels": member_labels},
            "spec": {"syncMode": "Push", "apiEndpoint": f"https://{name}.example:6443"},
        }
        for name, member_labels in labels.items()
    ]
    return {name: {} for name in labels}, clusters


def propagate_to_all(*kinds: tuple[str, str]) -> Obj:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "all", "namespace": "default"},
        "spec": {
            "resourceSelectors": [{"apiVersion": a, "kind": k} for a, k in kinds],
            "placement": {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}},
        },
    }


def manifests(members: dict[str, Obj], objects: list[Obj], later: list[Obj] = ()) -> dict[str, Obj]:  # type: ignore[assignment]
    """Each member's manifest once the fleet settled (`later` applied at 10 s)."""
    steps = [{"at": "10s", "apply": list(later)}] if later else []
    report = run(scenario(members=members, objects=objects, steps=steps, until="30s"))
    assert report.failed == 0
    works = [o for o in report.objects if o["kind"] == "Work"]
    return {
        w["metadata"]["namespace"].removeprefix("karmada-es-"): w["spec"]["workload"]["manifests"][
            0
        ]
        for w in works
    }


def deployment(**changes: Any) -> Obj:
    (doc,) = sample("nginx-deployment.yaml")
    doc["metadata"].update(changes)
    return doc


def containers(manifest: Obj) -> list[Obj]:
    result: list[Obj] = manifest["spec"]["template"]["spec"]["containers"]
    return result


def own(mapping: dict[str, str]) -> dict[str, str]:
    """Labels or annotations without Karmada's own."""
    return {k: v for k, v in mapping.items() if "karmada.io" not in k}


def test_samples_nginx() -> None:
    """samples/nginx: divided 1:1 over member1 and member2; the OverridePolicy labels the
    member2 copy and annotates the member1 one (remove and replace skip absent keys)."""
    members, clusters = fleet(member1={}, member2={})
    objects = [
        *clusters,
        deployment(),
        *sample("nginx-propagationpolicy.yaml"),
        *sample("nginx-overridepolicy.yaml"),
    ]
    got = manifests(members, objects)
    assert own(got["member2"]["metadata"]["labels"]) == {
        "app": "nginx",
        "env": "skoala-dev",
        "env-stat": "skoala-stage",
    }
    assert own(got["member1"]["metadata"]["labels"]) == {"app": "nginx"}
    assert own(got["member1"]["metadata"]["annotations"]) == {"env": "skoala-stage"}
    assert [got[m]["spec"]["replicas"] for m in ("member1", "member2")] == [1, 1]


def test_example_cluster_override_policy() -> None:
    members, clusters = fleet(member1={}, member2={})
    objects = [*clusters, deployment(), propagate_to_all(("apps/v1", "Deployment"))]
    got = manifests(members, objects, sample("example-clusteroverridepolicy.yaml"))
    assert [got[m]["spec"]["replicas"] for m in ("member1", "member2")] == [1, 2]


def test_example_override() -> None:
    """The whole annotations object replaced, then its one key removed: the template's own
    annotations are gone in the matching clusters, Karmada's added after."""
    members, clusters = fleet(
        **{
            "dc-1-cluster-1": {"failuredomain.kubernetes.io/region": "dc1"},
            "dc-1-cluster-2": {"failuredomain.kubernetes.io/region": "dc2"},
            "dc-2-cluster-1": {"failuredomain.kubernetes.io/region": "dc1"},
        }
    )
    template = deployment(labels={"app": "nginx", "image": "nginx"}, annotations={"team": "a"})
    objects = [*clusters, template, propagate_to_all(("apps/v1", "Deployment"))]
    got = manifests(members, objects, sample("example-example-override.yaml"))
    assert containers(got["dc-1-cluster-1"])[0]["image"] == "dc-1.registry.io/nginx:1.17.0-alpine"
    assert own(got["dc-1-cluster-1"]["metadata"]["annotations"]) == {}
    for other in ("dc-1-cluster-2", "dc-2-cluster-1"):
        assert containers(got[other])[0]["image"] == "nginx"
        assert own(got[other]["metadata"]["annotations"]) == {"team": "a"}


def test_example_override_policy_command() -> None:
    members, clusters = fleet(member1={}, member2={})
    template = deployment()
    containers(template).append({"name": "alpine", "image": "alpine", "command": ["sh"]})
    objects = [*clusters, template, propagate_to_all(("apps/v1", "Deployment"))]
    got = manifests(members, objects, sample("example-overridepolicy_command.yaml"))
    assert containers(got["member1"])[1]["command"] == ["sh", "test"]
    assert containers(got["member2"])[1]["command"] == ["sh"]
    assert "command" not in containers(got["member1"])[0]


def test_example_override_policy_image() -> None:
    members, clusters = fleet(us1={"location": "us"}, cn1={"location": "cn"}, eu1={})
    template = deployment()
    containers(template)[0]["image"] = "fictional.registry.example/nginx:1.25"
    objects = [*clusters, template, propagate_to_all(("apps/v1", "Deployment"))]
    got = manifests(members, objects, sample("example-overridepolicy_image.yaml"))
    assert {m: containers(got[m])[0]["image"] for m in got} == {
        "us1": "fictional.registry.us/nginx:1.25",
        "cn1": "fictional.registry.cn/nginx:1.25",
        "eu1": "fictional.registry.example/nginx:1.25",
    }


def test_example_override_policy_simple() -> None:
    members, clusters = fleet(member1={}, member2={})
    template = deployment(annotations={"team": "a"})
    objects = [*clusters, template, propagate_to_all(("apps/v1", "Deployment"))]
    got = manifests(members, objects, sample("example-overridepolicy_simple.yaml"))
    assert own(got["member1"]["metadata"]["annotations"]) == {"foo": "bar"}
    assert own(got["member2"]["metadata"]["annotations"]) == {"team": "a"}


def test_samples_guestbook() -> None:
    """A custom kind: the Guestbook CRD, the sample's PropagationPolicy to member1 and its
    OverridePolicy (size 4, annotations replaced)."""
    members, clusters = fleet(member1={}, member2={})
    (crd,) = sample("guestbook-guestbooks-crd.yaml")
    later = [
        *sample("guestbook-guestbook.yaml"),
        *sample("guestbook-guestbooks-propagationpolicy.yaml"),
        *sample("guestbook-guestbooks-overridepolicy.yaml"),
    ]
    got = manifests(members, [*clusters, crd], later)
    assert set(got) == {"member1"}
    assert got["member1"]["spec"]["size"] == 4
    assert own(got["member1"]["metadata"]["annotations"]) == {"OverridePolicy": "test"}
