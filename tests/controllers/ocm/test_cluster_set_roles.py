"""The per-set ClusterRoles (ACM's clusterset clusterrole controller): admin, bind and view
for a set that selects by the exclusive label; bind and view only otherwise."""

from __future__ import annotations

from typing import Any

from ocm_harness import Bench

from fleetwarden.api.rbac import CLUSTER_ROLE_KIND
from fleetwarden.controllers.ocm.cluster_set import MANAGED_CLUSTER_SET
from fleetwarden.controllers.ocm.cluster_set_roles import reconcile, role_name


def cluster_set(selector_type: str | None = None) -> dict[str, Any]:
    spec = {"clusterSelector": {"selectorType": selector_type}} if selector_type else {}
    return {
        "apiVersion": MANAGED_CLUSTER_SET.api_version,
        "kind": MANAGED_CLUSTER_SET.kind,
        "metadata": {"name": "prod"},
        "spec": spec,
    }


def roles(bench: Bench) -> list[str]:
    return sorted(r["metadata"]["name"] for r in bench.store.list(CLUSTER_ROLE_KIND).items)


def test_an_exclusive_set_has_admin_bind_and_view_roles_owned_by_it() -> None:
    bench = Bench(cluster_set())
    bench.run(reconcile, "prod")
    assert roles(bench) == [role_name(r, "prod") for r in ("admin", "bind", "view")]
    owner = bench.store.get(CLUSTER_ROLE_KIND, role_name("admin", "prod"))["metadata"]
    assert owner["ownerReferences"][0]["name"] == "prod"


def test_a_set_that_turns_to_a_label_selector_loses_its_admin_role() -> None:
    bench = Bench(cluster_set())
    bench.run(reconcile, "prod")
    stored = bench.store.get(MANAGED_CLUSTER_SET, "prod")
    stored["spec"] = cluster_set("LabelSelector")["spec"]
    stored["spec"]["clusterSelector"]["labelSelector"] = {}
    bench.store.update(stored)
    bench.run(reconcile, "prod")
    assert roles(bench) == [role_name(r, "prod") for r in ("bind", "view")]
