"""The real kubectl asking for Events by field selector: `kubectl get events
--field-selector`, and `kubectl describe`, whose describers ask for an object's Events by
its involvedObject, as `fleetwarden describe` does. kubectl must be installed, as for
test_kubectl.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleetwarden.api.registry import REGISTRY
from fleetwarden.cli import app
from fleetwarden.runtime.clock import RealClock
from fleetwarden.runtime.events import NORMAL, WARNING, EventRecorder

from .conftest import CLUSTERS, Api, Kubectl, cluster


@pytest.fixture
def clusters_with_events(api: Api) -> None:
    """member1 with a Normal and a Warning Event, member2 with one of its own."""
    recorder = EventRecorder(api.store, RealClock(), "cluster-controller")
    for name in ("member1", "member2"):
        created = REGISTRY.decode(api.post(CLUSTERS, cluster(name)).json)
        recorder.event(created, NORMAL, "TaintClusterSucceed", f"tainted {name}")
        if name == "member1":
            recorder.event(created, WARNING, "SyncFailed", "member1 is out of reach")


def event_rows(output: str) -> list[list[str]]:
    """(object, reason) of each row of `kubectl get events -o custom-columns`."""
    return [line.split() for line in output.splitlines()[1:]]


@pytest.mark.usefixtures("clusters_with_events")
def test_get_events_by_field_selector(kubectl: Kubectl) -> None:
    columns = "-o=custom-columns=OBJECT:.involvedObject.name,REASON:.reason"
    about = kubectl(
        "get", "events", "-A", "--field-selector", "involvedObject.name=member1", columns
    )
    assert about.returncode == 0, about.stderr
    assert sorted(event_rows(about.stdout)) == [
        ["member1", "SyncFailed"],
        ["member1", "TaintClusterSucceed"],
    ]
    warnings = kubectl("get", "events", "-A", "--field-selector", "type=Warning", columns)
    assert event_rows(warnings.stdout) == [["member1", "SyncFailed"]]
    others = "involvedObject.kind=Cluster,involvedObject.name!=member1"
    rest = kubectl("get", "events", "-A", "--field-selector", others, columns)
    assert event_rows(rest.stdout) == [["member2", "TaintClusterSucceed"]]


def test_an_unsupported_field_label_is_refused(kubectl: Kubectl) -> None:
    result = kubectl("get", "events", "-A", "--field-selector", "spec.x=1")
    assert result.returncode == 1
    assert result.stderr == (
        'Error from server (BadRequest): Unable to find "/v1, Resource=events" that match label '
        'selector "", field selector "spec.x=1": field label not supported: spec.x\n'
    )


@pytest.mark.usefixtures("clusters_with_events")
def test_describe_shows_the_events_about_the_object_only(kubectl: Kubectl) -> None:
    described = kubectl("describe", "cluster", "member1")
    assert described.returncode == 0, described.stderr
    assert sorted(events_section(described.stdout)) == [  # both in the same second
        ["Normal", "TaintClusterSucceed"],
        ["Warning", "SyncFailed"],
    ]
    assert "member2" not in described.stdout


def events_section(described: str) -> list[list[str]]:
    """Type and reason of each Event a describe lists."""
    rows = described.split("\nEvents:\n", 1)[1].splitlines()[2:]
    return [row.split()[:2] for row in rows]


def test_fleetwarden_describe_shows_what_kubectl_describe_does(
    api: Api, kubectl: Kubectl, tmp_path: Path
) -> None:
    recorder = EventRecorder(api.store, RealClock(), "cluster-controller")
    before = REGISTRY.decode(api.post(CLUSTERS, cluster()).json)
    recorder.event(before, WARNING, "Gone", "about the member1 that was")
    assert api.delete(f"{CLUSTERS}/member1").status == 200
    now = REGISTRY.decode(api.post(CLUSTERS, cluster()).json)  # the same name, a new uid
    recorder.event(now, NORMAL, "TaintClusterSucceed", "about this member1")
    ours = CliRunner().invoke(
        app, ["describe", "cluster", "member1", "--kubeconfig", str(tmp_path / "kubeconfig")]
    )
    theirs = kubectl("describe", "cluster", "member1")
    assert ours.exit_code == 0, ours.output
    assert events_section(ours.stdout) == [["Normal", "TaintClusterSucceed"]]
    assert events_section(theirs.stdout) == events_section(ours.stdout)
