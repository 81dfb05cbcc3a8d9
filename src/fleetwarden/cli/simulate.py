"""`fleetwarden simulate`: run a scenario on a virtual clock and check its expectations."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from fleetwarden.sim.recording import Recording
    from fleetwarden.sim.scenario import Scenario

# Seconds of real time between two redraws of the progress bar: a scenario writes
# thousands of times a second.
PROGRESS_INTERVAL = 0.1


def simulate(
    file: Annotated[str, typer.Argument(help="The scenario file.")],
    output: Annotated[str, typer.Option("--output", "-o", help="text (default) or json.")] = "text",
    dump: Annotated[bool, typer.Option(help="Add every object's final state.")] = False,
    html: Annotated[
        str | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="Also write the run as a page: lanes for clusters and workloads over time.",
        ),
    ] = None,
) -> None:
    """Run a scenario: the hub's real admission, controllers and members on a virtual clock.

    Exit status 0 when every expectation passed, 1 when any failed, 2 when the scenario
    itself is invalid or the page cannot be written. On a terminal, a bar on standard
    error shows how far it got.
    """
    from fleetwarden.runtime.manager import collector_done
    from fleetwarden.sim.report import to_json, to_text
    from fleetwarden.sim.runner import Simulation
    from fleetwarden.sim.scenario import ScenarioError, load

    if output not in ("text", "json"):
        typer.echo(f'error: unknown output format "{output}": use text or json', err=True)
        raise typer.Exit(2)
    try:
        scenario = load(file)
        # Not for -o json: that is read by programs, whatever their standard error is.
        with progress_bar(scenario, shown=output == "text" and sys.stderr.isatty()) as progress:
            report = Simulation(scenario).run(progress)
    except ScenarioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if html is not None:
        write_page(html, report.recording)
    typer.echo(to_json(report, dump=dump) if output == "json" else to_text(report, dump=dump))
    collector_done()
    raise typer.Exit(1 if report.failed else 0)


def write_page(path: str, recording: Recording) -> None:
    from fleetwarden.dashboard.report import render_report

    try:
        with open(path, "w", encoding="utf-8") as page:
            page.write(render_report(recording))
    except OSError as exc:
        typer.echo(f"error: cannot write the page {path}: {exc.strerror}", err=True)
        raise typer.Exit(2) from None


@contextmanager
def progress_bar(
    scenario: Scenario, *, shown: bool
) -> Iterator[Callable[[timedelta], None] | None]:
    """When shown, a bar on standard error, labelled with the virtual time reached of the
    scenario's end; yields what to tell the time reached, or None."""
    if not shown:
        yield None
        return
    length = max(int(scenario.until.total_seconds()), 1)
    with typer.progressbar(length=length, label=_reached(scenario, 0), file=sys.stderr) as bar:
        last_drawn = 0.0

        def reached(elapsed: timedelta) -> None:
            nonlocal last_drawn
            if time.monotonic() - last_drawn >= PROGRESS_INTERVAL:
                last_drawn = time.monotonic()
                seconds = int(elapsed.total_seconds())
                bar.label = _reached(scenario, seconds)
                bar.update(seconds - bar.pos)

        yield reached
        bar.label = _reached(scenario, length)
        bar.update(length - bar.pos)


def _reached(scenario: Scenario, seconds: int) -> str:
    """`graceful-failover 2m30s / 4m0s`."""
    from fleetwarden.semantics.durations import format_duration

    reached = format_duration(timedelta(seconds=seconds))
    return f"{scenario.name} {reached} / {format_duration(scenario.until)}"
