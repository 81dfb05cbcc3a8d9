"""`fleetwarden accept managedclusters NAME...`: accept OCM clusters, as `clusteradm accept`."""

from __future__ import annotations

from typing import Annotated

import typer

from fleetwarden.cli.hub import ContextOption, KubeconfigOption, fail, hub

_RESOURCES = ("managedclusters", "managedcluster", "mcl", "mcls")


def accept(
    resource: Annotated[str, typer.Argument(help="managedclusters")],
    names: Annotated[list[str], typer.Argument(help="The clusters to accept.")],
    wait: Annotated[
        float,
        typer.Option(help="Seconds to wait for a cluster's certificate request (0: none)."),
    ] = 0.0,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Approve the clusters' bootstrap certificate requests and accept them (hubAcceptsClient)."""
    from fleetwarden.client.errors import ClientError
    from fleetwarden.members.accept import accept as accept_cluster

    if resource.lower() not in _RESOURCES:
        fail(f'only managedclusters can be accepted, not "{resource}"')
    with hub(kubeconfig, context) as client:
        for name in names:
            try:
                accept_cluster(client, name, wait=wait, say=typer.echo)
            except ClientError as exc:
                fail(str(exc))
