"""Layer 7: the `fleetwarden` command."""

from __future__ import annotations

import typer

from fleetwarden import __version__
from fleetwarden.cli import (
    accept,
    agent,
    apply,
    cordon,
    delete,
    describe,
    explain,
    get,
    simulate,
    taint,
    token,
    up,
    validate,
    whatif,
)
from fleetwarden.cli.sections import SectionedCommand

app = typer.Typer(
    name="fleetwarden",
    help="Keep applications running across a fleet of Kubernetes clusters when clusters fail.\n\n"
    "Speaks Karmada (Cluster taints, ClusterTaintPolicy, PropagationPolicy) and Open Cluster "
    "Management (ManagedCluster taints, ManagedClusterSet, Placement).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's help, not Rich's: Rich's tables cut long flag names to the terminal's width.
    rich_markup_mode=None,
)
app.command(name="simulate", no_args_is_help=True)(simulate.simulate)
app.command(name="taint", no_args_is_help=True)(taint.taint)
app.command(name="validate", no_args_is_help=True)(validate.validate)
# Talking to a hub, as kubectl and karmadactl do.
app.command(name="get", no_args_is_help=True)(get.get)
app.command(name="describe", no_args_is_help=True)(describe.describe)
app.command(name="explain", no_args_is_help=True)(explain.explain)
app.command(name="apply")(apply.apply)
app.command(name="delete")(delete.delete)
app.command(name="what-if", no_args_is_help=True)(whatif.what_if)
app.command(name="cordon")(cordon.cordon)
app.command(name="uncordon")(cordon.uncordon)


@app.command()
def version() -> None:
    """Print the fleetwarden version."""
    typer.echo(__version__)


def main() -> None:
    app()


# The hub and its agents.
app.command(name="up", cls=SectionedCommand)(up.up)
app.command(name="agent", cls=SectionedCommand, no_args_is_help=True)(agent.agent)
app.add_typer(token.app, name="token")
app.command(name="accept", no_args_is_help=True)(accept.accept)
