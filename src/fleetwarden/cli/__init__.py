"""Layer 7: the `fleetwarden` command."""

from __future__ import annotations

import typer

from fleetwarden import __version__
from fleetwarden.cli import simulate, taint, validate

app = typer.Typer(
    name="fleetwarden",
    help="Keep applications running across a fleet of Kubernetes clusters when clusters fail.\n\n"
    "Speaks Karmada (Cluster taints, ClusterTaintPolicy, PropagationPolicy) and Open Cluster "
    "Management (ManagedCluster taints, ManagedClusterSet, Placement).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command(name="simulate", no_args_is_help=True)(simulate.simulate)
app.command(name="taint", no_args_is_help=True)(taint.taint)
app.command(name="validate", no_args_is_help=True)(validate.validate)


@app.command()
def version() -> None:
    """Print the fleetwarden version."""
    typer.echo(__version__)


def main() -> None:
    app()
