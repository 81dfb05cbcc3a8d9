"""The binding controller with override policies: each cluster's Work rendered through them,
what was applied recorded on the Work, and the Works rendered again when a policy comes,
changes or goes."""

from __future__ import annotations

import json
from typing import Any

from hub_harness import CRB, Hub

from fleetwarden.api.errors import Conflict
from fleetwarden.api.registry import REGISTRY

WORK = REGISTRY.info("work.karmada.io/v1alpha1", "Work")
OP = REGISTRY.info("policy.karmada.io/v1alpha1", "OverridePolicy")
COP = REGISTRY.info("policy.karmada.io/v1alpha1", "ClusterOverridePolicy")

Obj = dict[str, Any]


def policy(kind: str, name: str, rules: list[Obj], selectors: list[Obj] | None = None) -> Obj:
    meta: Obj = (
        {"name": name}
        if kind == "ClusterOverridePolicy"
        else {"name": name, "namespace": "default"}
    )
    spec: Obj = {"overrideRules": rules}
    if selectors is not None:
        spec["resourceSelectors"] = selectors
    return {"apiVersion": OP.api_version, "kind": kind, "metadata": meta, "spec": spec}


def registry_rule(cluster: str, registry: str) -> Obj:
    return {
        "targetCluster": {"clusterNames": [cluster]},
        "overriders": {
            "imageOverrider": [{"component": "Registry", "operator": "replace", "value": registry}]
        },
    }


def image(hub: Hub, cluster: str) -> str:
    value: str = hub.manifest(cluster)["spec"]["template"]["spec"]["containers"][0]["image"]
    return value


NGINX = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}]


def test_each_cluster_gets_its_overrides_and_the_work_records_them() -> None:
    hub = Hub(["member1", "member2"])
    hub.store.create(
        policy("OverridePolicy", "by-cluster", [registry_rule("member1", "eu.example.io")], NGINX)
    )
    hub.store.create(
        policy(
            "ClusterOverridePolicy",
            "team",
            [{"overriders": {"labelsOverrider": [{"operator": "add", "value": {"team": "web"}}]}}],
        )
    )
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    assert image(hub, "member1") == "eu.example.io/nginx"
    assert image(hub, "member2") == "nginx"
    assert hub.manifest("member2")["metadata"]["labels"]["team"] == "web"
    assert hub.manifest("member2")["spec"]["replicas"] == 2  # revised, then overridden
    # Karmada's own labels and annotations are added after the overrides.
    assert hub.manifest("member1")["metadata"]["labels"]["karmada.io/managed"] == "true"
    annotations = hub.work("member1")["metadata"]["annotations"]  # type: ignore[index]
    applied = json.loads(annotations["policy.karmada.io/applied-overrides"])
    assert applied == [
        {
            "policyName": "by-cluster",
            "overriders": {
                "imageOverrider": [
                    {"component": "Registry", "operator": "replace", "value": "eu.example.io"}
                ]
            },
        }
    ]
    cluster_applied = json.loads(annotations["policy.karmada.io/applied-cluster-overrides"])
    assert [item["policyName"] for item in cluster_applied] == ["team"]
    member2 = hub.work("member2")["metadata"]["annotations"]  # type: ignore[index]
    assert "policy.karmada.io/applied-overrides" not in member2
    events = hub.events("ApplyOverridePolicySucceed")
    assert sorted(e["message"] for e in events) == [
        "Apply cluster override policy(team) for cluster(member1) succeed.",
        "Apply cluster override policy(team) for cluster(member2) succeed.",
        "Apply override policy(default/by-cluster) for cluster(member1) succeed.",
    ]
    assert {e["source"]["component"] for e in events} == {"override-manager"}
    assert {e["involvedObject"]["kind"] for e in events} == {"Deployment"}


def winner(value: str) -> Obj:
    """Overriders setting the label `winner`: the last policy applied wins."""
    label = {"path": "/metadata/labels/winner", "operator": "add", "value": value}
    return {"plaintext": [label]}


def test_namespaced_policies_apply_after_cluster_ones_and_by_priority_then_name() -> None:
    hub = Hub(["member1"])
    by_kind = [{"apiVersion": "apps/v1", "kind": "Deployment"}]
    for kind, name, selectors in [
        ("OverridePolicy", "a-by-kind", by_kind),
        ("OverridePolicy", "z-by-name", NGINX),
        ("OverridePolicy", "b-by-kind", by_kind),
        ("ClusterOverridePolicy", "zz", NGINX),
    ]:
        hub.store.create(policy(kind, name, [{"overriders": winner(name)}], selectors))
    hub.binding(hub.deployment(), [("member1", 3)])
    assert hub.manifest("member1")["metadata"]["labels"]["winner"] == "z-by-name"
    work = hub.work("member1")
    assert work is not None
    applied = json.loads(work["metadata"]["annotations"]["policy.karmada.io/applied-overrides"])
    assert [item["policyName"] for item in applied] == ["a-by-kind", "b-by-kind", "z-by-name"]


def test_works_follow_a_policy_created_changed_and_deleted() -> None:
    hub = Hub(["member1", "member2"])
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    assert image(hub, "member1") == "nginx"
    created = hub.store.create(
        policy("OverridePolicy", "eu", [registry_rule("member1", "eu.example.io")], NGINX)
    )
    hub.settle()
    assert (image(hub, "member1"), image(hub, "member2")) == ("eu.example.io/nginx", "nginx")
    created["spec"]["overrideRules"] = [registry_rule("member2", "us.example.io")]
    hub.store.update(created)
    hub.settle()
    assert (image(hub, "member1"), image(hub, "member2")) == ("nginx", "us.example.io/nginx")
    hub.store.delete(OP, "eu", "default")
    hub.settle()
    assert (image(hub, "member1"), image(hub, "member2")) == ("nginx", "nginx")


def test_a_policy_selecting_other_templates_leaves_the_works_alone() -> None:
    hub = Hub(["member1"])
    hub.binding(hub.deployment(), [("member1", 1)])
    work = hub.work("member1")
    other = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "other"}]
    hub.store.create(
        policy("OverridePolicy", "other", [registry_rule("member1", "eu.example.io")], other)
    )
    hub.settle()
    assert hub.work("member1") == work


def test_an_override_that_does_not_apply_fails_that_clusters_work() -> None:
    hub = Hub(["member1", "member2"])
    broken = {
        "targetCluster": {"clusterNames": ["member2"]},
        "overriders": {
            "plaintext": [{"path": "/spec/missing/x", "operator": "replace", "value": 1}]
        },
    }
    hub.store.create(policy("OverridePolicy", "broken", [broken], NGINX))
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    assert hub.work("member1") is not None
    assert hub.work("member2") is None
    (failed,) = {e["message"] for e in hub.events("ApplyOverridePolicyFailed")}
    assert failed == "Apply override policy(default/broken) for cluster(member2) failed."
    (sync,) = {e["message"] for e in hub.events("SyncWorkFailed")}
    assert "/spec/missing/x" in sync


def test_cluster_scoped_templates_take_cluster_override_policies() -> None:
    hub = Hub(["member1"])
    hub.store.create(
        policy(
            "ClusterOverridePolicy",
            "label-roles",
            [{"overriders": {"labelsOverrider": [{"operator": "add", "value": {"x": "y"}}]}}],
            [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"}],
        )
    )
    hub.cluster_role_binding(["member1"])
    (work,) = hub.store.list(REGISTRY.info("work.karmada.io/v1alpha1", "Work")).items
    assert work["spec"]["workload"]["manifests"][0]["metadata"]["labels"]["x"] == "y"
    assert hub.store.get(CRB, "system.reader-clusterrole")["metadata"]["name"]


def test_a_render_that_fails_after_a_policy_change_is_retried_until_every_work_has_it() -> None:
    """The policy's re-render writes member1's Work, then member2's write loses a race (in
    `up`, a create the Work cache had not seen yet): the retry renders member2's too."""
    hub = Hub(["member1", "member2"])
    hub.binding(hub.deployment(), [("member1", 1), ("member2", 2)])
    update, lost = hub.store.update, []

    def losing_once(obj: Obj, **options: Any) -> Obj:
        if (
            obj["kind"] == "Work"
            and obj["metadata"]["namespace"] == "karmada-es-member2"
            and not lost
        ):
            lost.append(obj["metadata"]["name"])
            raise Conflict(WORK.plural, WORK.group, obj["metadata"]["name"])
        return update(obj, **options)

    hub.store.update = losing_once  # type: ignore[method-assign]
    team = [{"overriders": {"labelsOverrider": [{"operator": "add", "value": {"team": "web"}}]}}]
    hub.store.create(policy("OverridePolicy", "team", team, NGINX))
    hub.run(5)  # the retry's backoff
    assert lost
    labels = {m: hub.manifest(m)["metadata"]["labels"].get("team") for m in ("member1", "member2")}
    assert labels == {"member1": "web", "member2": "web"}
