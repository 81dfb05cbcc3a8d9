"""The clusters of ManagedClusterSets as the placement controller finds them, kept from the
informers' events: they follow label, selector, deletion and set changes, and agree with a
walk over every cluster after any sequence of writes."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fleetwarden.runtime.clock import DEFAULT_EPOCH
from fleetwarden.scheduling.ocm.kinds import MANAGED_CLUSTER, MANAGED_CLUSTER_SET
from fleetwarden.scheduling.ocm.scheduling_controller import ClusterSetError, available_clusters

from .placement_hub import CLUSTER_SET_LABEL, PlacementHub

Obj = dict[str, Any]


@pytest.fixture
def hub() -> PlacementHub:
    return PlacementHub()


def available(hub: PlacementHub, *cluster_sets: str) -> list[str]:
    return [c.metadata.name for c in available_clusters(hub.manager.cache, cluster_sets)]


def set_selector(hub: PlacementHub, name: str, cluster_selector: Obj) -> None:
    obj = hub.store.get(MANAGED_CLUSTER_SET, name)
    obj["spec"] = {"clusterSelector": cluster_selector}
    hub.store.update(obj)
    hub.settle()


def test_a_cluster_moving_between_sets_leaves_one_for_the_other(hub: PlacementHub) -> None:
    hub.cluster_set("a")
    hub.cluster_set("b")
    hub.clusters("c", 3, "a")
    assert available(hub, "a") == ["c-1", "c-2", "c-3"]
    hub.label("c-2", **{CLUSTER_SET_LABEL: "b"})
    assert available(hub, "a") == ["c-1", "c-3"]
    assert available(hub, "b") == ["c-2"]
    assert available(hub, "a", "b") == ["c-1", "c-2", "c-3"]


def test_a_cluster_in_two_sets_is_listed_once(hub: PlacementHub) -> None:
    hub.cluster_set("a")
    hub.cluster_set("gold", {"matchLabels": {"tier": "gold"}})
    hub.cluster("c-1", "a", {"tier": "gold"})
    hub.cluster("c-2", "a")
    hub.cluster("c-3", labels={"tier": "gold"})
    hub.settle()
    assert available(hub, "a", "gold") == ["c-1", "c-2", "c-3"]
    assert available(hub, "gold") == ["c-1", "c-3"]


def test_an_edited_selector_selects_anew(hub: PlacementHub) -> None:
    hub.cluster_set("s", {"matchLabels": {"tier": "gold"}})
    hub.cluster("c-1", labels={"tier": "gold"})
    hub.cluster("c-2", labels={"tier": "silver"})
    hub.settle()
    assert available(hub, "s") == ["c-1"]
    set_selector(
        hub,
        "s",
        {"selectorType": "LabelSelector", "labelSelector": {"matchLabels": {"tier": "silver"}}},
    )
    assert available(hub, "s") == ["c-2"]


def test_a_selector_made_invalid_stops_scheduling_until_fixed(hub: PlacementHub) -> None:
    hub.cluster_set("s")
    hub.cluster("c-1", "s")
    hub.settle()
    set_selector(hub, "s", {"selectorType": "errorType"})
    with pytest.raises(ClusterSetError, match='ClusterSet "s": selectorType is not right'):
        available(hub, "s")
    set_selector(hub, "s", {"selectorType": "ExclusiveClusterSetLabel"})
    assert available(hub, "s") == ["c-1"]


def test_a_set_deleted_and_made_again(hub: PlacementHub) -> None:
    hub.cluster_set("s")
    hub.cluster("c-1", "s")
    hub.settle()
    hub.delete(MANAGED_CLUSTER_SET, "s")
    assert available(hub, "s") == []
    hub.cluster_set("s")
    assert available(hub, "s") == ["c-1"]


def test_a_cluster_being_deleted_then_gone(hub: PlacementHub) -> None:
    hub.cluster_set("s")
    hub.clusters("c", 2, "s")
    cluster = hub.store.get(MANAGED_CLUSTER, "c-1")
    cluster["metadata"]["finalizers"] = ["test"]
    hub.store.update(cluster)
    hub.delete(MANAGED_CLUSTER, "c-1")
    assert available(hub, "s") == ["c-2"]
    cluster = hub.store.get(MANAGED_CLUSTER, "c-1")
    cluster["metadata"]["finalizers"] = []
    hub.store.update(cluster)
    hub.settle()
    assert available(hub, "s") == ["c-2"]


def test_the_clusters_are_the_latest_seen(hub: PlacementHub) -> None:
    """A change that moves no cluster between sets still shows in the objects listed."""
    hub.cluster_set("s")
    hub.cluster("c-1", "s")
    hub.settle()
    assert available_clusters(hub.manager.cache, ["s"])[0].spec.taints == []
    hub.taint("c-1", "maintenance", "NoSelect", DEFAULT_EPOCH)
    (cluster,) = available_clusters(hub.manager.cache, ["s"])
    assert [t.key for t in cluster.spec.taints or []] == ["maintenance"]


# --- against a walk over every cluster -----------------------------------------------------------

SETS = ["a", "b", "gold", "prod"]
SELECTORS: dict[str, Obj] = {
    "a": {"selectorType": "ExclusiveClusterSetLabel"},
    "b": {"selectorType": "ExclusiveClusterSetLabel"},
    "gold": {"selectorType": "LabelSelector", "labelSelector": {"matchLabels": {"tier": "gold"}}},
    "prod": {
        "selectorType": "LabelSelector",
        "labelSelector": {
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}]
        },
    },
}


def walked(hub: PlacementHub, cluster_sets: list[str]) -> list[str]:
    """Every cluster not being deleted matched against each existing set, as upstream does."""
    existing = {s["metadata"]["name"]: s for s in hub.store.list(MANAGED_CLUSTER_SET).items}
    found = []
    for cluster in hub.store.list(MANAGED_CLUSTER).items:
        meta = cluster["metadata"]
        labels = meta.get("labels") or {}
        if meta.get("deletionTimestamp"):
            continue
        if any(_selects(existing[s], labels) for s in cluster_sets if s in existing):
            found.append(meta["name"])
    return sorted(found)


def _selects(cluster_set: Obj, labels: dict[str, str]) -> bool:
    name = cluster_set["metadata"]["name"]
    selector = cluster_set["spec"]["clusterSelector"]
    if selector["selectorType"] == "ExclusiveClusterSetLabel":
        return labels.get(CLUSTER_SET_LABEL) == name
    match = selector["labelSelector"]
    if "matchLabels" in match:
        return all(labels.get(k) == v for k, v in match["matchLabels"].items())
    return labels.get("env") == "prod"


def random_labels(rng: random.Random) -> dict[str, str | None]:
    return {
        CLUSTER_SET_LABEL: rng.choice(["a", "b", "default", None]),
        "tier": rng.choice(["gold", "silver", None]),
        "env": rng.choice(["prod", "dev", None]),
    }


@pytest.mark.parametrize("seed", range(3))
def test_membership_agrees_with_a_walk_after_random_writes(hub: PlacementHub, seed: int) -> None:
    rng = random.Random(seed)
    names = [f"c-{i:02d}" for i in range(30)]
    for name in names:
        labels = {k: v for k, v in random_labels(rng).items() if v is not None}
        hub.cluster(name, labels=labels)
    hub.settle()
    for _ in range(60):
        action = rng.random()
        if action < 0.5:
            hub.label(rng.choice(names), **random_labels(rng))
        elif action < 0.75:
            name = rng.choice(SETS)
            if hub.exists(MANAGED_CLUSTER_SET, name):
                hub.delete(MANAGED_CLUSTER_SET, name)
            else:
                spec = {"clusterSelector": SELECTORS[name]}
                hub.store.create(
                    {"apiVersion": MANAGED_CLUSTER_SET.api_version, "kind": "ManagedClusterSet",
                     "metadata": {"name": name}, "spec": spec}
                )  # fmt: skip
                hub.settle()
        else:
            name = rng.choice(names)
            if hub.exists(MANAGED_CLUSTER, name):
                hub.store.patch(MANAGED_CLUSTER, name, "", {"metadata": {"finalizers": ["hold"]}})
                hub.delete(MANAGED_CLUSTER, name)
        chosen = rng.sample(SETS, rng.randint(1, len(SETS)))
        assert available(hub, *chosen) == walked(hub, chosen)
