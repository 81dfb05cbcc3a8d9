"""The resource detector: upstream's pkg/detector cases, and its behaviour running in a
ControllerManager on a virtual clock over an in-memory store."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from fleetwarden.admission import default_chain
from fleetwarden.api.errors import NotFound
from fleetwarden.api.karmada import well_known as wk
from fleetwarden.api.registry import REGISTRY
from fleetwarden.controllers.karmada import detector
from fleetwarden.controllers.karmada.detector import (
    CLUSTER_PROPAGATION_POLICY,
    CLUSTER_RESOURCE_BINDING,
    PROPAGATION_POLICY,
    RESOURCE_BINDING,
    detector_controllers,
    is_template_kind,
    object_key,
    parse_key,
    propagatable,
    template_kinds,
)
from fleetwarden.controllers.karmada.names import generate_binding_name
from fleetwarden.runtime.clock import VirtualClock
from fleetwarden.runtime.events import EVENT
from fleetwarden.runtime.manager import (
    DONE,
    Context,
    Controller,
    ControllerManager,
    Result,
    VirtualDriver,
    Watches,
)
from fleetwarden.runtime.settings import FeatureGates, Settings
from fleetwarden.store import MemoryStore

DEPLOYMENT = REGISTRY.info("apps/v1", "Deployment")
CLUSTER_ROLE = REGISTRY.info("rbac.authorization.k8s.io/v1", "ClusterRole")
_SECOND = timedelta(seconds=1)
PP_ID = wk.PROPAGATION_POLICY_PERMANENT_ID_LABEL
CPP_ID = wk.CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL
PP_CLAIM_ANNOTATIONS = (
    wk.PROPAGATION_POLICY_NAMESPACE_ANNOTATION,
    wk.PROPAGATION_POLICY_NAME_ANNOTATION,
)

# --- upstream's unit cases -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "name", "expect"),
    [
        ("Pods", "pod", "pod-pods"),
        ("pods", "Pod", "pod-pods"),
        ("Role", "system:controller:tom", "system.controller.tom-role"),
        ("ClusterRole", "system::tom", "system..tom-clusterrole"),
        ("RoleBinding", "system::tt:tom", "system..tt.tom-rolebinding"),
        ("ClusterRoleBinding", "system:tt:tom", "system.tt.tom-clusterrolebinding"),
    ],
)
def test_generate_binding_name(kind: str, name: str, expect: str) -> None:
    assert generate_binding_name(kind, name) == expect


@pytest.mark.parametrize(
    ("namespace", "kind", "name", "propagated"),
    [
        ("karmada-system", "Deployment", "d", False),
        ("karmada-cluster", "Deployment", "d", False),
        ("karmada-es-member1", "Deployment", "d", False),
        ("kube-public", "Deployment", "d", False),  # --skipped-propagating-namespaces=kube-.*
        ("kube-system", "ConfigMap", "extension-apiserver-authentication", False),
        ("default", "Deployment", "d", True),
        ("", "ClusterRole", "admin", True),
    ],
)
def test_event_filter(namespace: str, kind: str, name: str, propagated: bool) -> None:
    api_version = "rbac.authorization.k8s.io/v1" if kind == "ClusterRole" else "apps/v1"
    obj = REGISTRY.decode(
        {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": name, "namespace": namespace},
        }
    )
    assert propagatable(obj) is propagated


@pytest.mark.parametrize(
    ("api_version", "kind", "propagated"),
    [
        ("apps/v1", "Deployment", True),
        ("v1", "ConfigMap", True),
        ("v1", "Namespace", True),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition", True),
        ("apps.kruise.io/v1alpha1", "CloneSet", True),
        ("cluster.karmada.io/v1alpha1", "Cluster", False),
        ("policy.karmada.io/v1alpha1", "PropagationPolicy", False),
        ("work.karmada.io/v1alpha2", "ResourceBinding", False),
        ("config.karmada.io/v1alpha1", "ResourceInterpreterCustomization", False),
        ("v1", "Event", False),
        ("events.k8s.io/v1", "Event", False),
        ("coordination.k8s.io/v1", "Lease", False),
        ("cluster.open-cluster-management.io/v1", "ManagedCluster", False),
    ],
)
def test_skipped_apis(api_version: str, kind: str, propagated: bool) -> None:
    assert is_template_kind(REGISTRY.info(api_version, kind)) is propagated


def test_template_kinds_are_the_registrys_plus_the_extra_ones_once_each() -> None:
    clone_set = REGISTRY.info("apps.kruise.io/v1alpha1", "CloneSet")
    kinds = template_kinds([clone_set, DEPLOYMENT])
    assert DEPLOYMENT in kinds and CLUSTER_ROLE in kinds and clone_set in kinds
    assert len(kinds) == len({(k.group, k.plural) for k in kinds})
    assert not any(k.group.endswith("karmada.io") for k in kinds)


@pytest.mark.parametrize(
    ("parts", "text"),
    [
        (("apps/v1", "Deployment", "default", "nginx"), "apps/v1, kind=Deployment, default/nginx"),
        (("v1", "Namespace", "", "foo"), "v1, kind=Namespace, foo"),
        (
            ("rbac.authorization.k8s.io/v1", "ClusterRole", "", "system:tom"),
            "rbac.authorization.k8s.io/v1, kind=ClusterRole, system:tom",
        ),
    ],
)
def test_keys_are_cluster_wide_keys(parts: tuple[str, str, str, str], text: str) -> None:
    assert object_key(*parts) == text
    assert parse_key(text) == parts


# --- the detector in a controller manager ------------------------------------------------------


def release_binding_finalizers(ctx: Context, key: str) -> Result:
    """What the binding controller does for a binding being deleted (not under test here)."""
    namespace, _, name = key.rpartition("/")
    for info in (RESOURCE_BINDING, CLUSTER_RESOURCE_BINDING):
        binding = ctx.cache.informer(info).get(name, namespace if info.namespaced else "")
        if binding is not None and binding.metadata.deletion_timestamp is not None:
            released = binding.to_dict()
            released["metadata"].pop("finalizers", None)
            ctx.store.update(released)
    return DONE


class Hub:
    def __init__(self, gates: str = "", binding_controller: bool = False) -> None:
        self.clock = VirtualClock()
        uids = itertools.count(1)
        self.store = MemoryStore(now=self.clock.now, new_uid=lambda: f"uid-{next(uids)}")
        settings = Settings(feature_gates=FeatureGates.parse(gates))
        manager = ControllerManager(self.store, self.clock, settings)
        for controller in detector_controllers():
            manager.add(controller)
        if binding_controller:
            watches = [Watches(RESOURCE_BINDING), Watches(CLUSTER_RESOURCE_BINDING)]
            manager.add(
                Controller(
                    "binding-controller", watches, lambda k, c: release_binding_finalizers(c, k)
                )
            )
        self.driver = VirtualDriver(manager)
        self.driver.start()
        self.chain = default_chain()

    def apply(self, *docs: dict[str, Any]) -> None:
        """Create each object as the API server would admit it, then let controllers settle."""
        for doc in docs:
            self.store.create(self.chain.admit(doc, now=self.clock.now()).to_dict())
        self.settle()

    def change(
        self,
        info: Any,
        name: str,
        change: Callable[[dict[str, Any]], None],
        namespace: str = "default",
    ) -> None:
        obj = self.store.get(info, name, namespace if info.namespaced else "")
        old = REGISTRY.decode(obj)
        change(obj)
        self.store.update(self.chain.admit(obj, old, now=self.clock.now()).to_dict())
        self.settle()

    def delete(self, info: Any, name: str, namespace: str = "default") -> None:
        self.store.delete(info, name, namespace if info.namespaced else "")
        self.settle()

    def settle(self) -> None:
        self.driver.run_until(self.clock.now() + _SECOND * 60)

    def get(self, info: Any, name: str, namespace: str = "default") -> dict[str, Any] | None:
        try:
            return self.store.get(info, name, namespace if info.namespaced else "")
        except NotFound:
            return None

    def binding(self, name: str = "nginx-deployment", namespace: str = "default") -> dict[str, Any]:
        binding = self.get(RESOURCE_BINDING, name, namespace)
        assert binding is not None, f"no ResourceBinding {namespace}/{name}"
        return binding

    def events(self, reason: str | None = None) -> list[tuple[str, str, str]]:
        """(involved object name, reason, message) of the Events recorded, first recorded
        first: by the instant in their names (a repeat bumps an Event's resourceVersion)."""
        events = sorted(
            self.store.list(EVENT).items,
            key=lambda e: int(e["metadata"]["name"].rpartition(".")[2], 16),
        )
        return [
            (e["involvedObject"]["name"], e["reason"], e["message"])
            for e in events
            if reason is None or e["reason"] == reason
        ]


def deployment(name: str = "nginx", replicas: int = 3, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name, **labels}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {
                            "name": name,
                            "image": "nginx",
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                        }
                    ]
                },
            },
        },
    }


PLACEMENT = {
    "clusterAffinity": {"clusterNames": ["member1", "member2"]},
    "replicaScheduling": {
        "replicaSchedulingType": "Divided",
        "weightPreference": {
            "staticWeightList": [
                {"targetCluster": {"clusterNames": ["member1"]}, "weight": 1},
                {"targetCluster": {"clusterNames": ["member2"]}, "weight": 2},
            ]
        },
    },
}


def policy(
    name: str = "nginx-propagation",
    selectors: list[dict[str, Any]] | None = None,
    cluster: bool = False,
    **spec: Any,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if not cluster:
        metadata["namespace"] = "default"
    selectors = selectors or [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}]
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "ClusterPropagationPolicy" if cluster else "PropagationPolicy",
        "metadata": metadata,
        "spec": {"resourceSelectors": selectors, "placement": PLACEMENT, **spec},
    }


def claim(obj: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """The claim labels and annotations an object carries."""
    meta = obj["metadata"]
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if "propagationpolicy" in k}
    annotations = {
        k: v for k, v in (meta.get("annotations") or {}).items() if "propagationpolicy" in k
    }
    return labels, annotations


def pp_claim(hub: Hub, name: str = "nginx-propagation") -> tuple[dict[str, str], dict[str, str]]:
    pp = hub.get(PROPAGATION_POLICY, name)
    assert pp is not None
    labels = {PP_ID: pp["metadata"]["labels"][PP_ID]}
    return labels, dict(zip(PP_CLAIM_ANNOTATIONS, ("default", name), strict=True))


def cpp_claim(hub: Hub, name: str) -> tuple[dict[str, str], dict[str, str]]:
    cpp = hub.get(CLUSTER_PROPAGATION_POLICY, name)
    assert cpp is not None
    labels = {CPP_ID: cpp["metadata"]["labels"][CPP_ID]}
    return labels, {wk.CLUSTER_PROPAGATION_POLICY_ANNOTATION: name}


@pytest.fixture
def hub() -> Hub:
    return Hub()


def test_a_deployment_and_its_policy_make_a_resource_binding(hub: Hub) -> None:
    hub.apply(deployment(), policy())

    template = hub.get(DEPLOYMENT, "nginx")
    assert template is not None
    binding = hub.binding()
    meta = binding["metadata"]
    assert claim(template) == pp_claim(hub)
    assert claim(binding) == pp_claim(hub)
    assert meta["labels"][wk.RESOURCE_BINDING_PERMANENT_ID_LABEL] == wk.permanent_id(
        "ResourceBinding", "default", "nginx-deployment"
    )
    assert meta["finalizers"] == ["karmada.io/binding-controller"]
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "nginx",
            "uid": template["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    pp = hub.get(PROPAGATION_POLICY, "nginx-propagation")
    assert pp is not None
    assert binding["spec"] == {
        "resource": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "namespace": "default",
            "name": "nginx",
            "uid": template["metadata"]["uid"],
            "resourceVersion": template["metadata"]["resourceVersion"],
        },
        "replicas": 3,
        "replicaRequirements": {"resourceRequest": {"cpu": "100m", "memory": "128Mi"}},
        "placement": pp["spec"]["placement"],
        "schedulerName": "default-scheduler",
        "conflictResolution": "Abort",
    }
    assert hub.events() == [
        ("nginx", "GetReplicasSucceed", "Get replicas of resource template successfully."),
        ("nginx", "ApplyPolicySucceed", "Apply policy(default/nginx-propagation) succeed"),
    ]


def test_the_policy_may_come_first(hub: Hub) -> None:
    hub.apply(policy(), deployment())
    assert claim(hub.binding()) == pp_claim(hub)


def test_template_changes_reach_the_binding_and_status_changes_do_not(hub: Hub) -> None:
    hub.apply(deployment(), policy())
    spread = {"clusters": [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 2}]}
    hub.change(RESOURCE_BINDING, "nginx-deployment", lambda b: b["spec"].update(spread))

    hub.change(DEPLOYMENT, "nginx", lambda d: d["spec"].update(replicas=5))
    binding = hub.binding()
    assert binding["spec"]["replicas"] == 5
    assert binding["spec"]["clusters"] == spread["clusters"]  # the scheduler's, left alone

    before = binding["metadata"]["resourceVersion"]
    template = hub.get(DEPLOYMENT, "nginx")
    assert template is not None
    template["status"] = {"replicas": 5, "readyReplicas": 5}
    hub.store.update(template, subresource="status")
    hub.settle()
    assert hub.binding()["metadata"]["resourceVersion"] == before


def test_deleting_the_template_deletes_its_binding() -> None:
    hub = Hub(binding_controller=True)
    hub.apply(deployment(), policy())
    hub.delete(DEPLOYMENT, "nginx")
    assert hub.get(RESOURCE_BINDING, "nginx-deployment") is None


def test_the_binding_waits_for_the_binding_controller_to_let_it_go(hub: Hub) -> None:
    hub.apply(deployment(), policy())
    hub.delete(DEPLOYMENT, "nginx")
    assert hub.binding()["metadata"].get("deletionTimestamp")


def test_a_cluster_role_and_a_cluster_policy_make_a_cluster_resource_binding(hub: Hub) -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "system:tom"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
    }
    selectors = [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"}]
    hub.store.create(role)  # RBAC names are path segments: ':' is allowed
    hub.apply(policy("roles", selectors, cluster=True))

    crb = hub.get(CLUSTER_RESOURCE_BINDING, "system.tom-clusterrole")
    template = hub.get(CLUSTER_ROLE, "system:tom")
    assert crb is not None and template is not None
    assert claim(template) == claim(crb) == cpp_claim(hub, "roles")
    assert crb["metadata"]["finalizers"] == ["karmada.io/cluster-resource-binding-controller"]
    assert wk.CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL in crb["metadata"]["labels"]
    assert crb["spec"]["resource"] == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "name": "system:tom",
        "uid": template["metadata"]["uid"],
        "resourceVersion": template["metadata"]["resourceVersion"],
    }
    assert "replicas" not in crb["spec"]
    assert hub.events("ApplyPolicySucceed") == [
        ("system:tom", "ApplyPolicySucceed", "Apply cluster policy(roles) succeed")
    ]


def test_a_cluster_policy_binds_namespaced_templates_with_a_resource_binding(hub: Hub) -> None:
    hub.apply(
        deployment(),
        policy("all-deployments", [{"apiVersion": "apps/v1", "kind": "Deployment"}], cluster=True),
    )
    assert claim(hub.binding()) == cpp_claim(hub, "all-deployments")


def test_a_propagation_policy_beats_a_cluster_policy(hub: Hub) -> None:
    everything = [{"apiVersion": "apps/v1", "kind": "Deployment"}]
    hub.apply(policy("all", everything, cluster=True, priority=100), policy(), deployment())
    assert claim(hub.binding()) == pp_claim(hub)


def test_the_most_specific_selector_wins_then_the_explicit_priority(hub: Hub) -> None:
    by_label = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "labelSelector": {"matchLabels": {"app": "nginx"}},
        }
    ]
    by_kind = [{"apiVersion": "apps/v1", "kind": "Deployment"}]
    hub.apply(policy("a-by-kind", by_kind), policy("b-by-label", by_label), policy("c-by-name"))
    hub.apply(deployment())
    assert claim(hub.binding()) == pp_claim(hub, "c-by-name")

    hub.apply(
        policy("a-by-kind", by_kind, priority=1)
        | {"metadata": {"name": "d-high", "namespace": "default"}}
    )
    hub.apply(deployment("web"))
    assert claim(hub.binding("web-deployment")) == pp_claim(hub, "d-high")


def test_claimed_templates_keep_their_policy_when_a_better_one_comes(hub: Hub) -> None:
    by_kind = [{"apiVersion": "apps/v1", "kind": "Deployment"}]
    hub.apply(deployment(), policy("by-kind", by_kind))
    hub.apply(policy("by-name", priority=10))
    assert claim(hub.binding()) == pp_claim(hub, "by-kind")


def test_a_policy_change_updates_its_bindings(hub: Hub) -> None:
    hub.apply(deployment(), policy())
    placement = {"clusterAffinity": {"clusterNames": ["member3"]}}

    hub.change(
        PROPAGATION_POLICY,
        "nginx-propagation",
        lambda p: p["spec"].update(placement=placement, propagateDeps=True),
    )
    spec = hub.binding()["spec"]
    assert spec["placement"] == placement
    assert spec["propagateDeps"] is True


def test_a_policys_reconcile_passes_over_templates_applied_at_its_generation(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each template is looked at when it is listed or changed: the policy's reconcile
    does not apply the policy to it again at the generation it was applied at (a restored
    hub's first listing syncs each template once, not once more per policy)."""
    hub.apply(deployment(), policy())
    bound: list[str] = []
    bind = detector._Run.bind

    def counted(run: Any, template: Any, kind: Any, policy: Any) -> bool:
        bound.append(template.metadata.name)
        return bind(run, template, kind, policy)

    monkeypatch.setattr(detector._Run, "bind", counted)
    hub.change(PROPAGATION_POLICY, "nginx-propagation", lambda p: p["metadata"].update(
        labels={**p["metadata"].get("labels", {}), "team": "a"}))  # fmt: skip
    assert bound == []
    placement = {"clusterAffinity": {"clusterNames": ["member3"]}}
    hub.change(
        PROPAGATION_POLICY, "nginx-propagation", lambda p: p["spec"].update(placement=placement)
    )
    assert bound == ["nginx"]
    assert hub.binding()["spec"]["placement"] == placement


def test_a_policy_that_no_longer_selects_a_template_releases_it(hub: Hub) -> None:
    hub.apply(deployment(), policy())
    other = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "other"}]
    hub.change(
        PROPAGATION_POLICY, "nginx-propagation", lambda p: p["spec"].update(resourceSelectors=other)
    )

    template = hub.get(DEPLOYMENT, "nginx")
    assert template is not None
    assert claim(template) == ({}, {})
    binding = hub.binding()  # stays until the template goes, unclaimed
    assert claim(binding) == ({}, {})
    assert (
        binding["spec"]["placement"]
        == hub.get(PROPAGATION_POLICY, "nginx-propagation")["spec"]["placement"]
    )  # type: ignore[index]

    hub.apply(policy("second"))
    assert claim(hub.get(DEPLOYMENT, "nginx")) == claim(hub.binding()) == pp_claim(hub, "second")  # type: ignore[arg-type]


def test_template_labels_that_stop_matching_leave_the_claim_until_the_policy_changes(
    hub: Hub,
) -> None:
    by_label = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "labelSelector": {"matchLabels": {"tier": "web"}},
        }
    ]
    hub.apply(deployment(tier="web"), policy(selectors=by_label))
    hub.change(DEPLOYMENT, "nginx", lambda d: d["metadata"]["labels"].update(tier="db"))
    assert claim(hub.binding()) == pp_claim(hub)

    hub.change(PROPAGATION_POLICY, "nginx-propagation", lambda p: p["spec"].update(priority=1))
    assert claim(hub.binding()) == ({}, {})


def test_deleting_a_policy_releases_its_templates_and_then_the_policy(hub: Hub) -> None:
    everything = [{"apiVersion": "apps/v1", "kind": "Deployment"}]
    hub.apply(deployment(), policy())
    hub.delete(PROPAGATION_POLICY, "nginx-propagation")

    assert hub.get(PROPAGATION_POLICY, "nginx-propagation") is None
    template = hub.get(DEPLOYMENT, "nginx")
    assert template is not None and claim(template) == ({}, {})
    assert claim(hub.binding()) == ({}, {})

    hub.apply(policy("fallback", everything, cluster=True))
    assert claim(hub.binding()) == cpp_claim(hub, "fallback")


def test_a_template_claimed_by_another_owner_is_left_alone(hub: Hub) -> None:
    hub.apply(
        policy(),
        deployment()
        | {
            "metadata": {
                "name": "nginx",
                "namespace": "default",
                "labels": {wk.RESOURCE_TEMPLATE_CLAIMED_BY_LABEL: "mcs"},
            }
        },
    )
    assert hub.get(RESOURCE_BINDING, "nginx-deployment") is None


def test_objects_in_reserved_namespaces_are_never_propagated(hub: Hub) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "karmada-system"},
    }
    selectors = [{"apiVersion": "v1", "kind": "ConfigMap"}]
    hub.apply(config, policy("configs", selectors, cluster=True))
    assert hub.get(RESOURCE_BINDING, "c-configmap", "karmada-system") is None


def test_a_binding_of_a_deleted_template_blocks_the_new_one_until_it_is_gone(hub: Hub) -> None:
    hub.apply(deployment(), policy())
    hub.delete(DEPLOYMENT, "nginx")
    hub.apply(deployment())  # the old binding still waits for the binding controller
    message = (
        "Apply policy(default/nginx-propagation) failed: failed to update binding due to "
        "different owner reference UID, will try again later after binding is garbage "
        "collected, see https://github.com/karmada-io/karmada/issues/2090"
    )
    assert ("nginx", "ApplyPolicyFailed", message) in hub.events()

    terminating = hub.binding()
    terminating["metadata"].pop("finalizers")  # as the binding controller will
    hub.store.update(terminating)
    hub.settle()
    template = hub.get(DEPLOYMENT, "nginx")
    assert template is not None
    assert hub.binding()["spec"]["resource"]["uid"] == template["metadata"]["uid"]


def test_a_workload_whose_replicas_do_not_read_fails_with_events(hub: Hub) -> None:
    broken = deployment()
    broken["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    # Admission refuses such a quantity now; one stored past it (before, or by a writer that
    # skips admission) must still not break the detector.
    hub.store.create(broken)
    hub.apply(policy())
    assert hub.get(RESOURCE_BINDING, "nginx-deployment") is None
    reasons = [reason for _, reason, _ in hub.events()]
    assert reasons[:2] == ["GetReplicasFailed", "ApplyPolicyFailed"]
    assert 'resources.cpu: Invalid value: "lots"' in hub.events("ApplyPolicyFailed")[0][2]


def test_a_policy_waits_for_the_overrides_it_depends_on(hub: Hub) -> None:
    hub.apply(deployment(), policy(dependentOverrides=["nginx-override"]))
    assert hub.get(RESOURCE_BINDING, "nginx-deployment") is None
    override = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "OverridePolicy",
        "metadata": {"name": "nginx-override", "namespace": "default"},
        "spec": {},
    }
    hub.store.create(override)
    hub.driver.run_until(hub.clock.now() + _SECOND * 3600)
    assert claim(hub.binding()) == pp_claim(hub)


def test_a_lazy_policy_reaches_its_bindings_only_when_the_template_changes(hub: Hub) -> None:
    hub.apply(deployment(), policy(activationPreference="Lazy"))
    placement = {"clusterAffinity": {"clusterNames": ["member3"]}}
    hub.change(
        PROPAGATION_POLICY, "nginx-propagation", lambda p: p["spec"].update(placement=placement)
    )
    assert hub.binding()["spec"]["placement"] == PLACEMENT | {
        "replicaScheduling": hub.binding()["spec"]["placement"]["replicaScheduling"]
    }

    hub.change(DEPLOYMENT, "nginx", lambda d: d["spec"].update(replicas=4))
    assert hub.binding()["spec"]["placement"] == placement


def test_suspension_follows_the_policy_and_keeps_the_schedulers_part(hub: Hub) -> None:
    hub.apply(deployment(), policy(suspension={"dispatching": True}))
    assert hub.binding()["spec"]["suspension"] == {"dispatching": True}

    hub.change(
        RESOURCE_BINDING,
        "nginx-deployment",
        lambda b: b["spec"]["suspension"].update(scheduling=True),
    )
    hub.change(PROPAGATION_POLICY, "nginx-propagation", lambda p: p["spec"].pop("suspension"))
    assert hub.binding()["spec"]["suspension"] == {"scheduling": True}


def test_schedule_priority_comes_from_the_kube_priority_class(hub: Hub) -> None:
    priority = {
        "schedulePriority": {
            "priorityClassSource": "KubePriorityClass",
            "priorityClassName": "high",
        }
    }
    hub.apply(deployment(), policy(**priority))
    assert hub.get(RESOURCE_BINDING, "nginx-deployment") is None
    assert (
        'priorityclasses.scheduling.k8s.io "high" not found'
        in hub.events("ApplyPolicyFailed")[0][2]
    )

    hub.store.create(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        }
    )
    hub.driver.run_until(hub.clock.now() + _SECOND * 3600)
    assert hub.binding()["spec"]["schedulePriority"] == {"priority": 1000}


# --- preemption ----------------------------------------------------------------------------------

PREEMPTION = "PropagationPolicyPreemption=true"
BY_KIND = [{"apiVersion": "apps/v1", "kind": "Deployment"}]


def test_a_preempting_policy_takes_a_template_from_a_lower_one() -> None:
    hub = Hub(PREEMPTION)
    hub.apply(deployment(), policy("low", BY_KIND, priority=1))
    hub.apply(policy("high", priority=2, preemption="Always"))

    assert claim(hub.get(DEPLOYMENT, "nginx")) == claim(hub.binding()) == pp_claim(hub, "high")  # type: ignore[arg-type]
    assert hub.events("PreemptPolicySucceed") == [
        (
            "nginx",
            "PreemptPolicySucceed",
            "Propagation policy(default/high) preempted propagation policy(default/low) successfully",
        )
    ]


def test_no_preemption_without_the_gate_or_the_priority() -> None:
    for gates, priority in (("", 2), (PREEMPTION, 1)):
        hub = Hub(gates)
        hub.apply(deployment(), policy("low", BY_KIND, priority=1))
        hub.apply(policy("high", priority=priority, preemption="Always"))
        assert claim(hub.binding()) == pp_claim(hub, "low")


def test_a_propagation_policy_preempts_any_cluster_policy() -> None:
    hub = Hub(PREEMPTION)
    hub.apply(deployment(), policy("everything", BY_KIND, cluster=True, priority=100))
    hub.apply(policy("mine", priority=0, preemption="Always"))
    assert claim(hub.binding()) == pp_claim(hub, "mine")
    assert hub.events("PreemptPolicySucceed")[0][2] == (
        "Propagation policy(default/mine) preempted cluster propagation policy(everything) successfully"
    )


def test_a_cluster_policy_preempts_a_lower_cluster_policy() -> None:
    hub = Hub(PREEMPTION)
    named = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx"}
    ]
    hub.apply(deployment(), policy("low", BY_KIND, cluster=True, priority=1))
    hub.apply(policy("high", named, cluster=True, priority=5, preemption="Always"))
    assert claim(hub.binding()) == cpp_claim(hub, "high")
    assert hub.events("PreemptPolicySucceed")[0][2] == (
        "Cluster propagation policy(high) preempted cluster propagation policy(low) successfully"
    )


def test_a_policy_that_loses_its_priority_is_preempted() -> None:
    hub = Hub(PREEMPTION)
    hub.apply(deployment(), policy("claimer", BY_KIND, priority=10))
    hub.apply(policy("waiting", priority=5, preemption="Always"))
    assert claim(hub.binding()) == pp_claim(hub, "claimer")

    hub.change(PROPAGATION_POLICY, "claimer", lambda p: p["spec"].update(priority=3))
    assert claim(hub.binding()) == pp_claim(hub, "waiting")
