"""The commands that talk to a hub (get, describe, apply, delete, taint, cordon), run as a
user runs them, against the real API server on a thread, through a kubeconfig."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from fleetwarden.admission import default_chain
from fleetwarden.api.registry import REGISTRY
from fleetwarden.cli import app
from fleetwarden.cli.describe import content_lines, describe_object, smart_label
from fleetwarden.cli.printers import TablePrinter, tabbed
from fleetwarden.client import Client
from fleetwarden.runtime.clock import RealClock
from fleetwarden.runtime.events import NORMAL, EventRecorder
from fleetwarden.semantics.durations import human_duration
from fleetwarden.server import Server, create_app
from fleetwarden.store import MemoryStore

CLUSTER = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
MANAGED_CLUSTER = REGISTRY.info("cluster.open-cluster-management.io/v1", "ManagedCluster")
runner = CliRunner()


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def server(store: MemoryStore) -> Iterator[Server]:
    with Server(create_app(store, default_chain(), RealClock())) as running:
        yield running


@pytest.fixture
def hub(server: Server) -> Iterator[Client]:
    """A client to set the scene and check the outcome with."""
    with Client(server.url) as client:
        yield client


@pytest.fixture
def kubeconfig(server: Server, tmp_path: Path) -> str:
    return write_kubeconfig(tmp_path / "kubeconfig", server.url)


def write_kubeconfig(path: Path, url: str) -> str:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "hub", "cluster": {"server": url}}],
        "users": [{"name": "admin", "user": {"token": "unused"}}],
        "contexts": [{"name": "hub", "context": {"cluster": "hub", "user": "admin"}}],
        "current-context": "hub",
    }
    path.write_text(yaml.safe_dump(config))
    return str(path)


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()


@pytest.fixture
def run(kubeconfig: str) -> Any:
    def invoke(*args: str, stdin: str | None = None) -> Result:
        result = runner.invoke(app, list(args), input=stdin, env={"KUBECONFIG": kubeconfig})
        return Result(result.exit_code, result.stdout, result.stderr)

    return invoke


def cluster(name: str = "member1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "labels": {"location": "us"}},
        "spec": {"syncMode": "Push", **spec},
    }


def managed_cluster(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": name},
        "spec": {"hubAcceptsClient": True},
    }


def deployment(name: str, namespace: str = "default") -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            },
        },
    }


def taints(hub: Client, info: Any, name: str) -> list[tuple[str, str]]:
    stored = hub.get(info, name).get("spec", {}).get("taints") or []
    return [(t["key"], t["effect"]) for t in stored]


# get ----------------------------------------------------------------------------------------


def test_get_prints_the_servers_table(run: Any, hub: Client) -> None:
    for name in ("member1", "member2"):
        hub.create(cluster(name))
    result = run("get", "clusters")
    assert result.code == 0
    header, *rows = result.lines
    # Karmada's printer columns for clusters, as the server's Table gives them.
    assert header.split() == ["NAME", "VERSION", "MODE", "READY", "AGE"]
    assert [row.split()[0] for row in rows] == ["member1", "member2"]
    assert all(re.fullmatch(r"\d+s", row.split()[-1]) for row in rows)


def test_get_by_short_name_and_name_with_yaml_json_and_name_output(run: Any, hub: Client) -> None:
    hub.create(managed_cluster("spoke1"))
    hub.create(managed_cluster("spoke2"))
    one = yaml.safe_load(run("get", "mcl", "spoke1", "-o", "yaml").out)
    assert (one["kind"], one["metadata"]["name"]) == ("ManagedCluster", "spoke1")
    listed = yaml.safe_load(
        run("get", "managedclusters.cluster.open-cluster-management.io", "-o", "json").out
    )
    assert listed["kind"] == "List"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["spoke1", "spoke2"]
    assert run("get", "mcl", "-o", "name").lines == [
        "managedcluster.cluster.open-cluster-management.io/spoke1",
        "managedcluster.cluster.open-cluster-management.io/spoke2",
    ]


def test_get_namespaced_kinds_in_a_namespace_or_all_with_a_selector(run: Any, hub: Client) -> None:
    hub.create(deployment("web"))
    hub.create(deployment("db"))
    hub.create(deployment("web", "kube-system"))
    assert [line.split()[0] for line in run("get", "deploy").lines[1:]] == ["db", "web"]
    everywhere = run("get", "deployments.apps", "-A", "-l", "app=web").lines
    assert everywhere[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert [line.split()[:2] for line in everywhere[1:]] == [
        ["default", "web"],
        ["kube-system", "web"],
    ]


def test_get_of_nothing_says_so(run: Any) -> None:
    assert (run("get", "clusters").err, run("get", "deploy", "-n", "kube-public").err) == (
        "No resources found\n",
        "No resources found in kube-public namespace.\n",
    )


def test_get_prints_what_it_found_and_fails_on_what_it_did_not(run: Any, hub: Client) -> None:
    hub.create(cluster())
    result = run("get", "clusters", "member1", "ghost", "-o", "name")
    assert (result.code, result.out) == (1, "cluster.cluster.karmada.io/member1\n")
    assert (
        result.err
        == 'Error from server (NotFound): clusters.cluster.karmada.io "ghost" not found\n'
    )


def test_get_watch_prints_the_listing_then_each_change(run: Any, hub: Client) -> None:
    hub.create(cluster("member1"))
    later = threading.Timer(0.5, lambda: hub.create(cluster("member2")))
    later.start()
    result = run("get", "clusters", "-w", "--request-timeout", "2s")
    later.join()
    assert result.code == 0
    assert [line.split()[0] for line in result.lines] == ["NAME", "member1", "member2"]


def test_unknown_resource_types_and_output_formats_are_refused(run: Any) -> None:
    assert (run("get", "clusterz").code, run("get", "clusterz").err) == (
        1,
        'error: the server doesn\'t have a resource type "clusterz"\n',
    )
    assert "unable to match a printer" in run("get", "clusters", "-o", "xml").err


def test_an_absent_hub_is_reported_as_kubectl_reports_it(tmp_path: Path) -> None:
    config = write_kubeconfig(tmp_path / "config", "http://127.0.0.1:1")
    result = runner.invoke(app, ["get", "clusters", "--kubeconfig", config])
    assert (result.exit_code, result.stderr) == (
        1,
        "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n",
    )


# describe -----------------------------------------------------------------------------------


def test_describe_shows_the_object_and_the_events_about_it(
    run: Any, hub: Client, store: MemoryStore
) -> None:
    created = hub.create(cluster(taints=[{"key": "dedicated", "effect": "NoSchedule"}]))
    recorder = EventRecorder(store, RealClock(), "cluster-controller")
    recorder.event(REGISTRY.decode(created), NORMAL, "TaintClusterSucceed", "Taint cluster succeed")
    other = hub.create(cluster("member2"))
    recorder.event(REGISTRY.decode(other), NORMAL, "Unrelated", "about member2")
    result = run("describe", "cluster", "member1")
    assert result.code == 0
    lines = result.lines
    assert lines[:5] == [
        "Name:         member1",
        "Namespace:    ",
        "Labels:       location=us",
        "Annotations:  <none>",
        "API Version:  cluster.karmada.io/v1alpha1",
    ]
    assert "    Key:     dedicated" in lines
    assert lines[-4:-1] == [
        "Events:",
        "  Type    Reason               Age   From                Message",
        "  ----    ------               ----  ----                -------",
    ]
    assert re.fullmatch(
        r"  Normal  TaintClusterSucceed  \d+s +cluster-controller  Taint cluster succeed", lines[-1]
    )


def test_describe_of_a_cluster_shows_its_regions_state(run: Any, hub: Client) -> None:
    from fleetwarden.controllers.karmada.region_disruption import (
        CONFIG_MAP,
        STATUS_NAME,
        Region,
        RegionStatus,
    )
    from fleetwarden.semantics.region_disruption import Pace, RegionState

    hub.create(cluster(region="eu-west"))
    hub.create(cluster("member2"))
    assert "Region:       eu-west: Normal" in run("describe", "cluster", "member1").lines
    since = datetime(2025, 1, 1, 0, 2, tzinfo=UTC)
    partial = Region(RegionState.PARTIAL_DISRUPTION, 12, 7, Pace.SLOWED, 0.1, since)
    hub.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "karmada-system"}})
    hub.create(
        {"apiVersion": CONFIG_MAP.api_version, "kind": CONFIG_MAP.kind,
         "metadata": {"name": STATUS_NAME, "namespace": "karmada-system"},
         "data": RegionStatus({"eu-west": partial}).to_data()}
    )  # fmt: skip
    lines = run("describe", "cluster").lines
    assert [line for line in lines if line.startswith("Region:")] == [
        "Region:       eu-west: PartialDisruption since 2025-01-01T00:02:00Z: 7 of 12 clusters "
        "not Ready; evictions slowed to 0.1/s",
        'Region:       "": Normal',
    ]
    assert lines[lines.index('Region:       "": Normal') + 1] == "Events:       <none>"


def test_describe_without_names_describes_every_object(run: Any, hub: Client) -> None:
    hub.create(deployment("web"))
    hub.create(deployment("db"))
    hub.create(deployment("api", "kube-system"))
    described = run("describe", "deploy").out.split("\n\n\n")  # as kubectl: two blank lines
    assert [block.splitlines()[0] for block in described] == [
        "Name:         db",
        "Name:         web",
    ]
    assert all("Kind:         Deployment" in block for block in described)


def test_describe_of_a_missing_object_fails(run: Any) -> None:
    result = run("describe", "clusters", "ghost")
    assert (result.code, result.err) == (
        1,
        'Error from server (NotFound): clusters.cluster.karmada.io "ghost" not found\n',
    )


NOW = datetime(2024, 1, 1, 0, 10, tzinfo=UTC)


def test_describe_lays_out_a_custom_resource_as_kubectls_generic_describer() -> None:
    obj = {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {
            "name": "member1",
            "uid": "u-1",
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "labels": {"location": "us", "zone": "a"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "note": "hi"},
        },
        "spec": {
            "syncMode": "Push",
            "taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoExecute"}],
        },
        "status": {
            "conditions": [{"type": "Ready", "status": "False", "reason": "ClusterNotReachable"}],
            "kubernetesVersion": "v1.28.0",
        },
    }
    repeated = {
        "type": "Warning",
        "reason": "TaintClusterSucceed",
        "message": "Taint cluster succeed",
        "source": {"component": "cluster-controller"},
        "count": 3,
        "firstTimestamp": "2024-01-01T00:00:10Z",
        "lastTimestamp": "2024-01-01T00:05:10Z",
    }
    once = {
        "type": "Normal",
        "reason": "Created",
        "message": "hello ",
        "source": {"component": "x"},
        "firstTimestamp": "2024-01-01T00:00:00Z",
        "lastTimestamp": "2024-01-01T00:00:00Z",
    }
    described = describe_object(obj, [repeated, once], NOW)
    assert described == (
        "Name:         member1\n"
        "Namespace:    \n"
        "Labels:       location=us\n"
        "              zone=a\n"
        "Annotations:  note: hi\n"
        "API Version:  cluster.karmada.io/v1alpha1\n"
        "Kind:         Cluster\n"
        "Metadata:\n"
        "  Creation Timestamp:  2024-01-01T00:00:00Z\n"
        "  UID:                 u-1\n"
        "Spec:\n"
        "  Sync Mode:  Push\n"
        "  Taints:\n"
        "    Effect:  NoSchedule\n"
        "    Key:     a\n"
        "    Effect:  NoExecute\n"
        "    Key:     b\n"
        "Status:\n"
        "  Conditions:\n"
        "    Reason:            ClusterNotReachable\n"
        "    Status:            False\n"
        "    Type:              Ready\n"
        "  Kubernetes Version:  v1.28.0\n"
        "Events:\n"
        "  Type     Reason               Age                    From                Message\n"
        "  ----     ------               ----                   ----                -------\n"
        "  Normal   Created              10m                    x                   hello\n"
        "  Warning  TaintClusterSucceed  4m50s (x3 over 9m50s)  cluster-controller  Taint cluster succeed\n"
    )
    # Without Events nothing flushes the tabwriter: `Events:` joins the last block.
    assert describe_object(obj, [], NOW).endswith(
        "  Kubernetes Version:  v1.28.0\nEvents:                <none>\n"
    )


def test_unstructured_content_as_kubectls_describe_test() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "Test",
        "dummyDummy": "present",
        "dummy/dummy": "present",
        "dummy-dummy@dummy": "present",
        "dummy-dummy": "present",
        "dummy1": "present",
        "dummy2": "present",
        "metadata": {
            "name": "MyName",
            "namespace": "MyNamespace",
            "creationTimestamp": "2017-04-01T00:00:00Z",
            "resourceVersion": 123,
            "uid": "00000000-0000-0000-0000-000000000001",
            "dummy3": "present",
        },
        "items": [{"itemBool": True, "itemInt": 42}],
        "url": "http://localhost",
        "status": "ok",
    }
    assert "\n".join(content_lines(obj, skip=(".dummy1", ".metadata.dummy3"))) + "\n" == (
        "API Version:\tv1\n"
        "Dummy - Dummy:\tpresent\n"
        "dummy-dummy@dummy:\tpresent\n"
        "dummy/dummy:\tpresent\n"
        "dummy2:\tpresent\n"
        "Dummy Dummy:\tpresent\n"
        "Items:\n"
        "  Item Bool:\ttrue\n"
        "  Item Int:\t42\n"
        "Kind:\tTest\n"
        "Metadata:\n"
        "  Creation Timestamp:\t2017-04-01T00:00:00Z\n"
        "  Name:\tMyName\n"
        "  Namespace:\tMyNamespace\n"
        "  Resource Version:\t123\n"
        "  UID:\t00000000-0000-0000-0000-000000000001\n"
        "Status:\tok\n"
        "URL:\thttp://localhost\n"
    )


@pytest.mark.parametrize(
    ("field", "label"),
    [
        ("simpleField", "Simple Field"),
        ("respectPDBs", "Respect PDBs"),
        ("respectPDB", "Respect PDB"),
        ("apiURL", "API URL"),
        ("kubeAPI", "Kube API"),
        ("userUID", "User UID"),
        ("HTTPSProxy", "HTTPSProxy"),
        ("customCRDs", "Custom CRDs"),
        ("dummy/dummy", "dummy/dummy"),
    ],
)
def test_smart_label_as_kubectl(field: str, label: str) -> None:
    assert smart_label(field) == label


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (1, "1s"),
        (70, "70s"),
        (190, "3m10s"),
        (70 * 60, "70m"),
        (47 * 3600, "47h"),
        (49 * 3600, "2d1h"),
        ((8 * 24 + 2) * 3600, "8d"),
        (367 * 24 * 3600, "367d"),
        ((365 * 2 * 24 + 25) * 3600, "2y1d"),
        ((365 * 8 * 24 + 2) * 3600, "8y"),
        (-2, "<invalid>"),
        (-1.999999, "0s"),
        (0, "0s"),
        (0.999, "0s"),
        (119.999, "119s"),
        (120, "2m"),
        (121, "2m1s"),
        (599.999, "9m59s"),
        (600, "10m"),
        (601, "10m"),
        (3 * 3600 - 0.001, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 60, "3h1m"),
        (8 * 3600 - 0.001, "7h59m"),
        (8 * 3600, "8h"),
        (8 * 3600 + 59 * 60, "8h"),
        (48 * 3600 - 0.001, "47h"),
        (48 * 3600, "2d"),
        (49 * 3600, "2d1h"),
        (8 * 86400 - 0.001, "7d23h"),
        (8 * 86400, "8d"),
        (8 * 86400 + 23 * 3600, "8d"),
        (730 * 86400 - 0.001, "729d"),
        (730 * 86400, "2y"),
        (731 * 86400 - 0.001, "2y"),
        (731 * 86400, "2y1d"),
        (8 * 365 * 86400 - 0.001, "7y364d"),
        (8 * 365 * 86400, "8y"),
        ((8 * 365 + 364) * 86400, "8y"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_ages_as_apimachinerys_human_duration(seconds: float, text: str) -> None:
    assert human_duration(timedelta(seconds=seconds)) == text


def test_tables_pad_columns_as_kubectl_and_keep_widths_for_watched_rows() -> None:
    table = {
        "columnDefinitions": [
            {"name": "Name", "priority": 0},
            {"name": "Mode", "priority": 1},
            {"name": "Ready", "priority": 0},
            {"name": "Age", "priority": 0},
        ],
        "rows": [
            {
                "cells": ["member1", "Push", "True", "5m"],
                "object": {"metadata": {"namespace": "a"}},
            },
            {"cells": ["m2", "Pull", None, "10s"], "object": {"metadata": {"namespace": "bb"}}},
        ],
    }
    printer = TablePrinter()
    assert printer.lines(table) == [
        "NAME      READY   AGE",
        "member1   True    5m",
        "m2                10s",
    ]
    watched = {
        "columnDefinitions": table["columnDefinitions"],
        "rows": [{"cells": ["a-longer-name", "Push", "False", "1s"]}],
    }
    assert printer.lines(watched) == ["a-longer-name   False   1s"]
    wide = TablePrinter(wide=True, with_namespace=True)
    assert wide.lines(table)[:2] == [
        "NAMESPACE   NAME      MODE   READY   AGE",
        "a           member1   Push   True    5m",
    ]


def test_tabbed_aligns_each_column_block_as_go_tabwriter() -> None:
    assert tabbed("a:\tb\nlonger:\tc\nno tab\nx:\ty\n") == "a:       b\nlonger:  c\nno tab\nx:  y\n"


# apply --------------------------------------------------------------------------------------


def test_apply_creates_leaves_unchanged_and_configures(
    run: Any, hub: Client, tmp_path: Path
) -> None:
    manifest = tmp_path / "member1.yaml"
    manifest.write_text(yaml.safe_dump(cluster(provider="aws", region="us-east-1")))
    assert run("apply", "-f", str(manifest)).out == "cluster.cluster.karmada.io/member1 created\n"
    assert run("apply", "-f", str(manifest)).out == "cluster.cluster.karmada.io/member1 unchanged\n"
    manifest.write_text(yaml.safe_dump(cluster(provider="gcp")))
    assert (
        run("apply", "-f", str(manifest)).out == "cluster.cluster.karmada.io/member1 configured\n"
    )
    spec = hub.get(CLUSTER, "member1")["spec"]
    assert (spec["provider"], "region" in spec) == ("gcp", False)


def test_apply_over_an_object_it_did_not_create_warns(
    run: Any, hub: Client, tmp_path: Path
) -> None:
    hub.create(cluster())
    (tmp_path / "member1.yaml").write_text(yaml.safe_dump(cluster()))
    result = run("apply", "-f", str(tmp_path / "member1.yaml"))
    assert result.out == "cluster.cluster.karmada.io/member1 configured\n"
    assert result.err.startswith(
        "Warning: resource clusters.cluster.karmada.io/member1 is missing the "
        "kubectl.kubernetes.io/last-applied-configuration annotation"
    )


def test_apply_a_directory_and_stdin(run: Any, hub: Client, tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(deployment("web")))
    (tmp_path / "a.yml").write_text(yaml.safe_dump_all([cluster("m1"), managed_cluster("spoke1")]))
    (tmp_path / "notes.txt").write_text("not a manifest")
    assert run("apply", "-f", str(tmp_path)).lines == [
        "cluster.cluster.karmada.io/m1 created",
        "managedcluster.cluster.open-cluster-management.io/spoke1 created",
        "deployment.apps/web created",
    ]
    piped = run(
        "apply",
        "-f",
        "-",
        "-n",
        "kube-system",
        stdin=yaml.safe_dump(deployment("api", "kube-system")),
    )
    assert piped.out == "deployment.apps/api created\n"
    assert (
        hub.get(REGISTRY.info("apps/v1", "Deployment"), "api", "kube-system")["spec"]["replicas"]
        == 1
    )


def test_apply_reports_a_refused_object_with_its_field_and_goes_on(
    run: Any, hub: Client, tmp_path: Path
) -> None:
    bad = cluster("bad", taints=[{"key": "a", "effect": "NoRun"}])
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([bad, cluster("good")]))
    result = run("apply", "-f", str(tmp_path / "all.yaml"))
    assert (result.code, result.out) == (1, "cluster.cluster.karmada.io/good created\n")
    assert result.err == (
        'The Cluster "bad" is invalid: spec.taints[0].effect: Unsupported value: "NoRun": '
        'supported values: "NoSchedule", "NoExecute"\n'
    )


def test_apply_lists_several_causes_one_per_line_and_several_errors_one_per_line(
    run: Any, tmp_path: Path
) -> None:
    twice_bad = cluster(
        "bad", taints=[{"key": "a", "effect": "NoRun"}, {"key": "-b", "effect": "NoSchedule"}]
    )
    (tmp_path / "one.yaml").write_text(yaml.safe_dump(twice_bad))
    lines = run("apply", "-f", str(tmp_path / "one.yaml")).err.splitlines()
    assert lines[0] == 'The Cluster "bad" is invalid: '
    assert [line[:24] for line in lines[1:]] == [
        "* spec.taints[0].effect:",
        "* spec.taints[1].key: In",
    ]
    (tmp_path / "two.yaml").write_text(yaml.safe_dump({**twice_bad, "metadata": {"name": "worse"}}))
    both = run("apply", "-f", str(tmp_path)).err.splitlines()
    assert len(both) == 2
    for line, (file, name) in zip(both, (("one.yaml", "bad"), ("two.yaml", "worse")), strict=True):
        assert line.startswith(
            f'Error from server (Invalid): error when applying "{tmp_path / file}": '
            f'Cluster.cluster.karmada.io "{name}" is invalid: [spec.taints[0].effect: '
        )


def test_apply_refuses_a_namespace_other_than_the_one_given(run: Any, tmp_path: Path) -> None:
    (tmp_path / "web.yaml").write_text(yaml.safe_dump(deployment("web", "default")))
    result = run("apply", "-f", str(tmp_path / "web.yaml"), "-n", "kube-system")
    assert result.code == 1
    assert (
        "does not match the namespace \"kube-system\". You must pass '--namespace=default'"
        in result.err
    )


def test_apply_of_a_missing_path_fails(run: Any, tmp_path: Path) -> None:
    result = run("apply", "-f", str(tmp_path / "absent.yaml"))
    assert (result.code, result.err) == (
        1,
        f'error: the path "{tmp_path / "absent.yaml"}" does not exist\n',
    )


# delete -------------------------------------------------------------------------------------


def test_delete_by_name_and_by_file(run: Any, hub: Client, tmp_path: Path) -> None:
    hub.create(cluster())
    hub.create(deployment("web"))
    assert (
        run("delete", "clusters", "member1").out == 'cluster.cluster.karmada.io "member1" deleted\n'
    )
    missing = run("delete", "clusters", "member1")
    assert (missing.code, missing.err) == (
        1,
        'Error from server (NotFound): clusters.cluster.karmada.io "member1" not found\n',
    )
    assert run("delete", "clusters", "member1", "--ignore-not-found").code == 0
    (tmp_path / "web.yaml").write_text(yaml.safe_dump(deployment("web")))
    assert run("delete", "-f", str(tmp_path / "web.yaml")).out == (
        'deployment.apps "web" deleted from default namespace\n'
    )
    again = run("delete", "-f", str(tmp_path / "web.yaml"))
    assert again.err == (
        f'Error from server (NotFound): error when deleting "{tmp_path / "web.yaml"}": '
        'deployments.apps "web" not found\n'
    )


def test_delete_needs_names(run: Any) -> None:
    assert (
        run("delete", "clusters").err
        == "error: resource(s) were provided, but no name was specified\n"
    )


# taint --------------------------------------------------------------------------------------


def test_taint_and_untaint_a_cluster_on_the_hub(run: Any, hub: Client) -> None:
    hub.create(cluster(taints=[{"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}]))
    assert run("taint", "clusters", "member1", "dedicated=special:NoSchedule").out == (
        "cluster/member1 tainted\n"
    )
    assert taints(hub, CLUSTER, "member1") == [
        ("dedicated", "NoSchedule"),
        ("cluster.karmada.io/not-ready", "NoSchedule"),
    ]
    assert (
        run("taint", "cluster", "member1", "dedicated:NoSchedule-").out
        == "cluster/member1 untainted\n"
    )
    assert taints(hub, CLUSTER, "member1") == [("cluster.karmada.io/not-ready", "NoSchedule")]


def test_a_no_execute_taint_gets_its_time_added_from_the_hub(run: Any, hub: Client) -> None:
    hub.create(cluster())
    result = run("taint", "clusters", "member1", "evict=now:NoExecute", "-o", "yaml")
    assert result.code == 0
    (added,) = yaml.safe_load(result.out)["spec"]["taints"]
    assert (added["key"], added["effect"]) == ("evict", "NoExecute")
    assert added["timeAdded"].endswith("Z")


def test_taint_refusals_from_the_command_and_from_admission(run: Any, hub: Client) -> None:
    hub.create(cluster(taints=[{"key": "dedicated", "effect": "NoSchedule"}]))
    again = run("taint", "clusters", "member1", "dedicated=x:NoSchedule")
    assert again.err == (
        "error: cluster member1 already has dedicated taint(s) with same effect(s) and --overwrite is false\n"
    )
    refused = run("taint", "clusters", "member1", "soft:PreferNoSchedule")
    assert refused.code == 1
    assert refused.err == (
        'The Cluster "member1" is invalid: spec.taints[0].effect: Unsupported value: '
        '"PreferNoSchedule": supported values: "NoSchedule", "NoExecute"\n'
    )
    assert run("taint", "clusters", "ghost", "a:NoSchedule").err == (
        'Error from server (NotFound): clusters.cluster.karmada.io "ghost" not found\n'
    )
    assert run("taint", "deploy", "web", "a:NoSchedule").err == (
        "error: invalid resource type deploy, only clusters and managedclusters can be tainted\n"
    )


def test_taint_a_managed_cluster_with_ocms_effects(run: Any, hub: Client) -> None:
    hub.create(managed_cluster("spoke1"))
    assert (
        run("taint", "mcl", "spoke1", "maintenance:NoSelect").out
        == "managedcluster/spoke1 tainted\n"
    )
    assert taints(hub, MANAGED_CLUSTER, "spoke1") == [("maintenance", "NoSelect")]
    assert run("taint", "mcl", "spoke1", "x:NoSchedule").err == (
        "error: invalid taint effect: NoSchedule, unsupported taint effect\n"
    )


def test_taint_reads_again_when_someone_wrote_in_between(
    run: Any, hub: Client, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub.create(cluster())
    reads: list[str] = []
    read = Client.get

    def get_then_race(self: Client, info: Any, name: str, namespace: str = "") -> dict[str, Any]:
        obj = read(self, info, name, namespace)
        if not reads:  # the cluster controller taints the cluster right after our first read
            store.patch(
                CLUSTER,
                name,
                "",
                {
                    "spec": {
                        "taints": [{"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}]
                    }
                },
            )
        reads.append(name)
        return obj

    monkeypatch.setattr(Client, "get", get_then_race)
    assert (
        run("taint", "clusters", "member1", "dedicated=special:NoSchedule").out
        == "cluster/member1 tainted\n"
    )
    assert len(reads) == 2
    assert taints(hub, CLUSTER, "member1") == [
        ("dedicated", "NoSchedule"),
        ("cluster.karmada.io/not-ready", "NoSchedule"),
    ]


def test_taint_local_and_file_go_together(run: Any) -> None:
    assert run("taint", "clusters", "member1", "a:NoSchedule", "--local").err == (
        "error: --local and -f FILE go together: --local edits the manifest -f names\n"
    )


# cordon -------------------------------------------------------------------------------------


def test_cordon_and_uncordon_as_karmadactl(run: Any, hub: Client) -> None:
    hub.create(
        cluster(taints=[{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoExecute"}])
    )
    assert run("cordon", "member1").out == "member1 cluster cordoned\n"
    unschedulable = ("cluster.karmada.io/unschedulable", "NoSchedule")
    assert taints(hub, CLUSTER, "member1") == [
        ("a", "NoSchedule"),
        ("b", "NoExecute"),
        unschedulable,
    ]
    assert run("cordon", "member1").out == "member1 cluster already cordoned\n"
    # karmadactl moves the last taint into the place of the one it removes.
    hub.patch(
        CLUSTER,
        "member1",
        "",
        {
            "spec": {
                "taints": [
                    {"key": unschedulable[0], "effect": "NoSchedule"},
                    {"key": "a", "effect": "NoSchedule"},
                    {"key": "b", "effect": "NoExecute"},
                ]
            }
        },
    )
    assert run("uncordon", "member1").out == "member1 cluster uncordoned\n"
    assert taints(hub, CLUSTER, "member1") == [("b", "NoExecute"), ("a", "NoSchedule")]
    assert run("uncordon", "member1").out == "member1 cluster already uncordoned\n"


def test_cordon_dry_run_changes_nothing(run: Any, hub: Client) -> None:
    hub.create(cluster())
    assert run("cordon", "member1", "--dry-run").out == "member1 cluster cordoned\n"
    assert taints(hub, CLUSTER, "member1") == []


def test_cordon_needs_one_existing_cluster(run: Any) -> None:
    assert run("cordon").err == "error: cluster name is required\n"
    assert run("cordon", "a", "b").err == "error: more than one cluster name is not supported\n"
    assert run("uncordon", "ghost").err == (
        'Error from server (NotFound): clusters.cluster.karmada.io "ghost" not found\n'
    )
