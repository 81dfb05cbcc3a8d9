"""`fleetwarden simulate`: run a scenario on a virtual clock and check its expectations."""

from __future__ import annotations

from typing import Annotated

import typer


def simulate(
    file: Annotated[str, typer.Argument(help="The scenario file.")],
    output: Annotated[str, typer.Option("--output", "-o", help="text (default) or json.")] = "text",
    dump: Annotated[bool, typer.Option(help="Add every object's final state.")] = False,
) -> None:
    """Run a scenario: the hub's real admission, controllers and members on a virtual clock.

    Exit status 0 when every expectation passed, 1 when any failed, 2 when the scenario
    itself is invalid.
    """
    from fleetwarden.sim.report import to_json, to_text
    from fleetwarden.sim.runner import Simulation
    from fleetwarden.sim.scenario import ScenarioError, load

    if output not in ("text", "json"):
        typer.echo(f'error: unknown output format "{output}": use text or json', err=True)
        raise typer.Exit(2)
    try:
        report = Simulation(load(file)).run()
    except ScenarioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(to_json(report, dump=dump) if output == "json" else to_text(report, dump=dump))
    raise typer.Exit(1 if report.failed else 0)
