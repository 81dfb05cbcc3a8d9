"""`fleetwarden what-if`: what the hub would do if clusters failed, on a copy of the live
fleet run on the virtual clock (sim/whatif.py says what is copied and what is not)."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fleetwarden.cli.hub import ContextOption, KubeconfigOption, fail, hub

if TYPE_CHECKING:
    from fleetwarden.client import Client
    from fleetwarden.sim.whatif import Fault, Fleet

Obj = dict[str, Any]


def what_if(
    clusters: Annotated[
        list[str] | None, typer.Argument(help="The clusters the fault hits (or -l).")
    ] = None,
    unreachable: Annotated[
        bool, typer.Option("--unreachable", help="They stop answering (lost network).")
    ] = False,
    not_ready: Annotated[
        bool, typer.Option("--not-ready", help="They answer, but report Ready=False.")
    ] = False,
    cordon: Annotated[
        bool, typer.Option("--cordon", help="They get the unschedulable taint (Karmada).")
    ] = False,
    taint: Annotated[
        str | None,
        typer.Option("--taint", metavar="KEY[=VALUE]:EFFECT", help="They get this taint."),
    ] = None,
    selector: Annotated[
        str | None,
        typer.Option("--selector", "-l", help="The clusters by label, e.g. region=eu-west."),
    ] = None,
    region: Annotated[
        str | None,
        typer.Option("--region", help="The Karmada clusters of this region (spec.region)."),
    ] = None,
    at: Annotated[str, typer.Option("--at", help="When the fault begins, e.g. 2m.")] = "0s",
    lasts: Annotated[
        str | None, typer.Option("--for", help="How long it lasts (default: to the end).")
    ] = None,
    faults: Annotated[
        list[str] | None,
        typer.Option(
            "--fault",
            help='One more fault, in the same words: "unreachable --region eu-west --at 5m '
            '--for 15m", "taint maintenance:NoExecute member3 --at 1m". Repeatable.',
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(help="How long to run (default: 10m after the last fault begins or ends)."),
    ] = None,
    workload_ready_after: Annotated[
        str,
        typer.Option(help="How long a workload takes to be healthy on the cluster it moves to."),
    ] = "0s",
    output: Annotated[str, typer.Option("--output", "-o", help="text (default) or json.")] = "text",
    export: Annotated[
        str | None,
        typer.Option(
            "--export",
            metavar="FILE",
            help="Write the scenario (fleet, faults, what was observed as expectations), "
            "for `fleetwarden simulate` in CI.",
        ),
    ] = None,
    html: Annotated[
        str | None,
        typer.Option("--html", metavar="FILE", help="Write the run as a page, as simulate does."),
    ] = None,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Copy the hub's fleet into a scenario, add the faults, and say what would happen:
    which workloads move where and when, which have nowhere to go, which eviction tasks
    wait on health, and what fleet protection does. The hub is only read."""
    from fleetwarden.cli.simulate import progress_bar, write_page
    from fleetwarden.runtime.manager import collector_done, collector_paused
    from fleetwarden.sim.runner import Simulation
    from fleetwarden.sim.scenario import ScenarioError, parse
    from fleetwarden.sim.whatif import (
        WhatIfError,
        answer,
        answer_text,
        build_scenario,
    )
    from fleetwarden.sim.whatif import (
        export as exported,
    )

    if output not in ("text", "json"):
        fail(f'unknown output format "{output}": use text or json')
    try:
        chosen = _Chosen(clusters or [], selector or "", region or "")
        wanted = _faults(chosen, unreachable, not_ready, cordon, taint, at, lasts)
        wanted += _more_faults(faults or [])
        if not wanted:
            fail("what fault? give --unreachable, --not-ready, --cordon, --taint or --fault")
        ready_after = _ready_after(workload_ready_after)
        # One batch, as the run is: the copy's objects live on into the run or are freed
        # by refcounting, and collections as the heap grows would walk them again and again.
        with collector_paused():
            with hub(kubeconfig, context, timeout=60.0) as client:
                fleet, settings = _read_hub(client, ready_after)
            doc = build_scenario(fleet, wanted, settings, _now(), _until(until))
            scenario = parse(doc, "what-if")
            shown = output == "text" and sys.stderr.isatty()
            with progress_bar(scenario, shown=shown) as progress:
                report = Simulation(scenario, restore=fleet.stored).run(progress)
    except (WhatIfError, ScenarioError) as exc:
        fail(str(exc))
    result = answer(doc, report.recording, report.timeline)
    if export is not None:
        _write_scenario(export, exported(doc, report.objects, result))
    if html is not None:
        write_page(html, report.recording)
    if output == "json":
        import json

        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        typer.echo(answer_text(result))
    collector_done()


@dataclass(frozen=True)
class _Chosen:
    """The clusters the flags' fault hits: by name, by label, by region."""

    names: list[str]
    selector: str
    region: str


def _faults(
    chosen: _Chosen,
    unreachable: bool,
    not_ready: bool,
    cordon: bool,
    taint: str | None,
    at: str,
    lasts: str | None,
) -> list[Fault]:
    """The faults the flags give: one per flag set, on the same clusters, at the same time."""
    from fleetwarden.sim.whatif import make_fault

    flags = {"unreachable": unreachable, "not-ready": not_ready, "cordon": cordon}
    kinds = [kind for kind, on in flags.items() if on] + (["taint"] if taint else [])
    fault = functools.partial(
        make_fault, selector=chosen.selector, names=chosen.names, region=chosen.region, at=at,
        lasts=lasts, taint=taint,
    )  # fmt: skip
    return [fault(kind) for kind in kinds]


def _more_faults(texts: list[str]) -> list[Fault]:
    from fleetwarden.sim.whatif import parse_fault

    return [parse_fault(text) for text in texts]


def _ready_after(text: str) -> timedelta:
    from fleetwarden.sim.whatif import flag_duration

    return flag_duration("--workload-ready-after", text)


def _until(text: str | None) -> timedelta | None:
    from fleetwarden.sim.whatif import flag_duration

    return None if text is None else flag_duration("--until", text)


def _now() -> datetime:
    """The run's t=0: now, to the second, so the copied taints and conditions keep their age."""
    return datetime.now(UTC).replace(microsecond=0)


def _read_hub(client: Client, ready_after: timedelta) -> tuple[Fleet, dict[str, str]]:
    from fleetwarden.api.registry import REGISTRY
    from fleetwarden.explain.source import ApiSource
    from fleetwarden.sim.whatif import (
        SETTINGS_CONFIGMAP,
        SETTINGS_NAMESPACE,
        copy_fleet,
    )

    source = ApiSource(client)
    config_map = source.get(
        REGISTRY.info("v1", "ConfigMap"), SETTINGS_CONFIGMAP, SETTINGS_NAMESPACE
    )
    if config_map is None:
        typer.echo(
            f"warning: no ConfigMap {SETTINGS_NAMESPACE}/{SETTINGS_CONFIGMAP} on the hub "
            "(written by `fleetwarden up`): running with the default settings",
            err=True,
        )
    settings = {str(k): str(v) for k, v in ((config_map or {}).get("data") or {}).items()}
    return copy_fleet(source, ready_after), settings


def _write_scenario(path: str, doc: Obj) -> None:
    import yaml

    try:
        with open(path, "w", encoding="utf-8") as out:
            yaml.safe_dump(doc, out, sort_keys=False)
    except OSError as exc:
        fail(f"cannot write the scenario {path}: {exc.strerror}")
