"""The `default` and `global` ManagedClusterSets (ocm pkg/registration/hub/managedclusterset/
default_managedclusterset_controller.go and global_managedclusterset_controller.go).

Upstream keeps both behind its DefaultClusterSet feature gate, on by default: `default`
selects by the exclusive clusterset label, which the ManagedCluster webhook gives every
cluster without a set; `global` selects every cluster with an empty label selector. Each
is created when missing and its spec.clusterSelector put back when changed; the rest
(labels, annotations, managedNamespaces, status) is the user's, and the annotation
`cluster.open-cluster-management.io/autoupdate: "false"` leaves the selector alone too.
Upstream guards neither set in admission.

A deleted set is recreated as its delete event comes; creating it at start needs a key
nobody announces: the set's name is the controller's start key (upstream resyncs every
10 s for the same end). Upstream only logs what it did
(its recorder is klog's), and so does this.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fleetwarden.api.meta import Resource
from fleetwarden.api.ocm.cluster import (
    DEFAULT_CLUSTER_SET,
    EXCLUSIVE_CLUSTER_SET_LABEL,
    GLOBAL_CLUSTER_SET,
    LABEL_SELECTOR,
    LEGACY_CLUSTER_SET_LABEL,
    ManagedClusterSelector,
    ManagedClusterSet,
)
from fleetwarden.controllers.ocm.cluster_set import MANAGED_CLUSTER_SET
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches

logger = logging.getLogger(__name__)

AUTO_UPDATE_ANNOTATION = "cluster.open-cluster-management.io/autoupdate"

DEFAULT_MANAGED_CLUSTER_SET_CONTROLLER = "DefaultManagedClusterSetController"
GLOBAL_MANAGED_CLUSTER_SET_CONTROLLER = "GlobalManagedClusterSetController"


@dataclass(frozen=True)
class _KeptSet:
    """A set the hub keeps: its name, upstream's word for it, its clusterSelector."""

    name: str
    title: str  # "DefaultManagedClusterSet": the start of upstream's log reasons
    cluster_selector: dict[str, Any]

    def manifest(self) -> dict[str, Any]:
        return {
            "apiVersion": MANAGED_CLUSTER_SET.api_version,
            "kind": MANAGED_CLUSTER_SET.kind,
            "metadata": {"name": self.name},
            "spec": {"clusterSelector": copy.deepcopy(self.cluster_selector)},
        }


DEFAULT_MANAGED_CLUSTER_SET = _KeptSet(
    DEFAULT_CLUSTER_SET,
    "DefaultManagedClusterSet",
    {"selectorType": EXCLUSIVE_CLUSTER_SET_LABEL},
)
GLOBAL_MANAGED_CLUSTER_SET = _KeptSet(
    GLOBAL_CLUSTER_SET,
    "GlobalManagedClusterSet",
    {"selectorType": LABEL_SELECTOR, "labelSelector": {}},
)


def semantic_selector(selector: ManagedClusterSelector | None) -> tuple[str, object]:
    """What equality.Semantic compares of a clusterSelector: nil and empty lists and maps
    alike, an absent labelSelector unlike an empty one, and v1beta1's LegacyClusterSetLabel
    as the ExclusiveClusterSetLabel it converts to."""
    selector = selector or ManagedClusterSelector()
    selector_type = selector.selector_type or ""
    if selector_type == LEGACY_CLUSTER_SET_LABEL:
        selector_type = EXCLUSIVE_CLUSTER_SET_LABEL
    label_selector = selector.label_selector
    if label_selector is None:
        return selector_type, None
    expressions = [
        (e.key, e.operator, tuple(e.values or ())) for e in label_selector.match_expressions or []
    ]
    return selector_type, (label_selector.match_labels or {}, expressions)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _auto_update_disabled(cluster_set: ManagedClusterSet) -> bool:
    return (cluster_set.metadata.annotations or {}).get(AUTO_UPDATE_ANNOTATION) == "false"


def _reconciler(kept: _KeptSet) -> Callable[[str, Context], Result]:
    wanted = semantic_selector(ManagedClusterSelector.model_validate(kept.cluster_selector))

    def reconcile(_key: str, ctx: Context) -> Result:
        current = ctx.cache.informer(MANAGED_CLUSTER_SET).get(kept.name)
        if current is None:
            ctx.store.create(kept.manifest())
            logger.info(
                "%sCreated: Set the %s name to %s. spec to %s",
                kept.title, kept.title, kept.name, _json(kept.manifest()["spec"]),
            )  # fmt: skip
            return DONE
        assert isinstance(current, ManagedClusterSet)
        selector = semantic_selector(current.spec.cluster_selector)
        if selector == wanted or _auto_update_disabled(current):
            return DONE
        # Written back in v1beta2, the version upstream's controller reads and writes.
        restored = current.to_dict()
        restored["apiVersion"] = MANAGED_CLUSTER_SET.api_version
        restored.setdefault("spec", {}).update(kept.manifest()["spec"])
        ctx.store.update(restored)
        logger.info(
            "%sSpecRollbacked: Rollback the %sSpec to %s",
            kept.title,
            kept.title,
            _json(restored["spec"]),
        )
        return DONE

    return reconcile


def _kept_set_controller(controller: str, kept: _KeptSet) -> Controller:
    def only_kept(cluster_set: Resource) -> list[str]:
        return [kept.name] if cluster_set.name == kept.name else []

    return Controller(
        name=controller,
        watches=[Watches(MANAGED_CLUSTER_SET, only_kept)],
        reconcile=_reconciler(kept),
        start_keys=(kept.name,),
    )


def default_managed_cluster_set_controller() -> Controller:
    """Keeps the `default` set (upstream's NewDefaultManagedClusterSetController)."""
    return _kept_set_controller(DEFAULT_MANAGED_CLUSTER_SET_CONTROLLER, DEFAULT_MANAGED_CLUSTER_SET)


def global_managed_cluster_set_controller() -> Controller:
    """Keeps the `global` set (upstream's NewGlobalManagedClusterSetController)."""
    return _kept_set_controller(GLOBAL_MANAGED_CLUSTER_SET_CONTROLLER, GLOBAL_MANAGED_CLUSTER_SET)
