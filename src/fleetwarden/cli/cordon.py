"""`fleetwarden cordon|uncordon CLUSTER`: karmadactl's cordon, the unschedulable taint.

Cordoning adds the `cluster.karmada.io/unschedulable:NoSchedule` taint to a Karmada
Cluster, so the scheduler places nothing new there; uncordoning removes it. What is
already there stays (NoSchedule evicts nothing). OCM has no such command: taint the
ManagedCluster with a NoSelect taint instead (`fleetwarden taint managedclusters ...`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from fleetwarden.cli.hub import ContextOption, KubeconfigOption, fail, hub

if TYPE_CHECKING:
    from fleetwarden.client import Client

ClusterArgument = Annotated[list[str] | None, typer.Argument(help="The cluster's name.")]
DryRunOption = Annotated[
    bool, typer.Option(help="Say what would be done, without changing the cluster.")
]


def cordon(
    cluster: ClusterArgument = None,
    dry_run: DryRunOption = False,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Mark a cluster as unschedulable."""
    _cordon_or_uncordon(True, cluster, dry_run, kubeconfig, context)


def uncordon(
    cluster: ClusterArgument = None,
    dry_run: DryRunOption = False,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Mark a cluster as schedulable."""
    _cordon_or_uncordon(False, cluster, dry_run, kubeconfig, context)


def _cordon_or_uncordon(
    cordoned: bool,
    names: list[str] | None,
    dry_run: bool,
    kubeconfig: str | None,
    context: str | None,
) -> None:
    if not names:
        fail("cluster name is required")
    if len(names) > 1:
        fail("more than one cluster name is not supported")
    from fleetwarden.client import retry_on_conflict

    verb = "cordon" if cordoned else "uncordon"
    with hub(kubeconfig, context) as client:
        changed = retry_on_conflict(lambda: _update(client, names[0], cordoned, dry_run))
    typer.echo(
        f"{names[0]} cluster {verb}ed" if changed else f"{names[0]} cluster already {verb}ed"
    )


def _update(client: Client, name: str, cordoned: bool, dry_run: bool) -> bool:
    """Whether the cluster needed the change (made unless dry_run)."""
    from fleetwarden.api.core import NO_SCHEDULE
    from fleetwarden.api.karmada.cluster import TAINT_CLUSTER_UNSCHEDULABLE
    from fleetwarden.api.registry import REGISTRY

    cluster_kind = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
    cluster = client.get(cluster_kind, name)
    taints: list[dict[str, Any]] = list((cluster.get("spec") or {}).get("taints") or [])
    found = next((i for i, t in enumerate(taints) if _is_unschedulable(t)), None)
    if (found is not None) == cordoned:
        return False
    if cordoned:
        taints.append({"key": TAINT_CLUSTER_UNSCHEDULABLE, "effect": NO_SCHEDULE})
    else:
        # As karmadactl removes it: the last taint takes its place.
        assert found is not None
        taints[found] = taints[-1]
        taints.pop()
    if not dry_run:
        version = cluster["metadata"]["resourceVersion"]
        patch = {"metadata": {"resourceVersion": version}, "spec": {"taints": taints}}
        client.patch(cluster_kind, name, "", patch)
    return True


def _is_unschedulable(taint: dict[str, Any]) -> bool:
    """Taint.MatchTaint: the same key and effect."""
    from fleetwarden.api.core import NO_SCHEDULE
    from fleetwarden.api.karmada.cluster import TAINT_CLUSTER_UNSCHEDULABLE

    return taint.get("key") == TAINT_CLUSTER_UNSCHEDULABLE and taint.get("effect") == NO_SCHEDULE
