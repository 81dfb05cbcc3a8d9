"""The Tables kubectl prints: CRD printer columns, the built-in printers, includeObject."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fleetwarden.api import core
from fleetwarden.api.errors import BadRequest
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.registry import REGISTRY
from fleetwarden.semantics.jsonpath import JSONPathError, compile_path
from fleetwarden.server import printer_columns
from fleetwarden.server.printer_columns import PrinterColumn
from fleetwarden.server.tables import table

NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)


def stamp(ago: timedelta) -> str:
    return (NOW - ago).isoformat().replace("+00:00", "Z")


def obj(name: str = "a", ago: timedelta = timedelta(minutes=5), **fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "creationTimestamp": stamp(ago)}, **fields}


def headers(info: KindInfo) -> list[tuple[str, str, int]]:
    return [
        (c["name"], c["type"], c["priority"]) for c in table(info, [], now=NOW)["columnDefinitions"]
    ]


def cells(info: KindInfo, *objects: dict[str, Any]) -> list[list[Any]]:
    return [row["cells"] for row in table(info, objects, now=NOW)["rows"]]


def condition(type_: str, status: str, reason: str = "") -> dict[str, str]:
    return {"type": type_, "status": status, "reason": reason}


# --- custom resources ---------------------------------------------------------------------

BINDINGS = REGISTRY.info("work.karmada.io/v1alpha2", "ResourceBinding")
MANAGED_CLUSTERS = REGISTRY.info("cluster.open-cluster-management.io/v1", "ManagedCluster")
PLACEMENTS = REGISTRY.info("cluster.open-cluster-management.io/v1beta1", "Placement")
WORKS = REGISTRY.info("work.karmada.io/v1alpha1", "Work")


def test_a_crd_table_is_name_then_its_printer_columns() -> None:
    assert headers(BINDINGS) == [
        ("Name", "string", 0),
        ("SCHEDULED", "string", 0),
        ("FULLYAPPLIED", "string", 0),
        ("AGE", "date", 0),
    ]
    column = table(BINDINGS, [], now=NOW)["columnDefinitions"][1]
    assert column == {
        "name": "SCHEDULED",
        "type": "string",
        "format": "",
        "description": 'Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Scheduled")].status',
        "priority": 0,
    }


def test_condition_columns_pick_the_condition_by_type() -> None:
    status = {"conditions": [condition("Scheduled", "True"), condition("FullyApplied", "False")]}
    assert cells(BINDINGS, obj("web-deployment", timedelta(hours=3, minutes=2), status=status)) == [
        ["web-deployment", "True", "False", "3h2m"]
    ]


def test_missing_values_are_empty_cells() -> None:
    assert cells(BINDINGS, obj("b", timedelta(days=2))) == [["b", None, None, "2d"]]


def test_managed_cluster_columns() -> None:
    cluster = obj(
        "cluster1",
        timedelta(days=9),
        spec={
            "hubAcceptsClient": True,
            "managedClusterClientConfigs": [{"url": "https://a:6443"}, {"url": "https://b:6443"}],
        },
        status={
            "conditions": [
                condition("ManagedClusterJoined", "True"),
                condition("ManagedClusterConditionAvailable", "Unknown"),
            ]
        },
    )
    assert [h[0] for h in headers(MANAGED_CLUSTERS)] == [
        "Name", "Hub Accepted", "Managed Cluster URLs", "Joined", "Available", "Age",
    ]  # fmt: skip
    # A JSONPath matching several values shows the first, as the API server does.
    assert cells(MANAGED_CLUSTERS, cluster) == [
        ["cluster1", True, "https://a:6443", "True", "Unknown", "9d"]
    ]


def test_placement_columns_have_no_age() -> None:
    status = {
        "numberOfSelectedClusters": 2,
        "conditions": [condition("PlacementSatisfied", "True", "AllDecisionsScheduled")],
    }
    assert [h[0] for h in headers(PLACEMENTS)] == [
        "Name",
        "Succeeded",
        "Reason",
        "SelectedClusters",
    ]
    assert cells(PLACEMENTS, obj("p", status=status)) == [["p", "True", "AllDecisionsScheduled", 2]]


def test_work_shows_the_first_manifests_kind() -> None:
    manifests = [{"kind": "Deployment"}, {"kind": "Service"}]
    status = {"conditions": [condition("Applied", "True")]}
    work = obj("w", spec={"workload": {"manifests": manifests}}, status=status)
    assert cells(WORKS, work) == [["w", "Deployment", "True", "5m"]]


def test_a_crd_without_printer_columns_shows_name_and_age() -> None:
    taint_policies = REGISTRY.info("policy.karmada.io/v1alpha1", "ClusterTaintPolicy")
    assert headers(taint_policies) == [("Name", "string", 0), ("Age", "date", 0)]
    assert cells(taint_policies, obj("t", timedelta(seconds=42))) == [["t", "42s"]]


def test_an_unregistered_kind_shows_name_and_age() -> None:
    info = REGISTRY.info("example.com/v1", "Widget")
    assert cells(info, obj("w", timedelta(minutes=70))) == [["w", "70m"]]


# apiextensions-apiserver tableconvertor_test.go Test_cellForJSONValue (string columns print
# any value, as the convertor's JSONPath printer does).
CELL_CASES = [
    ("integer", 42, 42),
    ("integer", 3.14, 3),
    ("integer", True, None),
    ("integer", "foo", None),
    ("number", 42, 42.0),
    ("number", 3.14, 3.14),
    ("number", True, None),
    ("number", "foo", None),
    ("boolean", 42, None),
    ("boolean", 3.14, None),
    ("boolean", True, True),
    ("boolean", "foo", None),
    ("string", 42, "42"),
    ("string", 3.14, "3.14"),
    ("string", 1234567.5, "1.2345675e+06"),
    ("string", True, "true"),
    ("string", "foo", "foo"),
    ("string", {"b": 1, "a": "<x>"}, '{"a":"\\u003cx\\u003e","b":1}'),
    ("date", 42, None),
    ("date", 3.14, None),
    ("date", True, None),
    ("date", stamp(timedelta(hours=12, minutes=30)), "12h"),
    ("date", stamp(-timedelta(hours=12, minutes=30)), "<invalid>"),
    ("date", "", "<unknown>"),
    ("date", "yesterday", "<invalid>"),
    ("unknown", "foo", None),
]


@pytest.mark.parametrize(("type_", "value", "cell"), CELL_CASES)
def test_a_column_shows_its_value_as_its_type(
    type_: str, value: Any, cell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kind = f"Gadget{type_.title()}"  # a kind per column type: tables are made once per kind
    info = KindInfo("example.com", "v1", kind, kind.lower() + "s", True, core.Unstructured)
    column = PrinterColumn("Value", type_, ".spec.value")
    monkeypatch.setitem(printer_columns.PRINTER_COLUMNS, ("example.com", "v1", kind), (column,))
    [[_, shown]] = cells(info, obj(spec={"value": value}))
    assert shown == cell
    assert type(shown) is type(cell)


# apimachinery duration_test.go TestHumanDuration and TestHumanDurationBoundaries (a
# nanosecond less is a millisecond less here: timestamps carry microseconds).
MS = timedelta(milliseconds=1)
H, D, Y = timedelta(hours=1), timedelta(days=1), timedelta(days=365)
DURATIONS = [
    (timedelta(seconds=1), "1s"),
    (timedelta(seconds=70), "70s"),
    (timedelta(seconds=190), "3m10s"),
    (timedelta(minutes=70), "70m"),
    (47 * H, "47h"),
    (49 * H, "2d1h"),
    ((8 * 24 + 2) * H, "8d"),
    (367 * D, "367d"),
    (2 * Y + 25 * H, "2y1d"),
    (8 * Y + 2 * H, "8y"),
    (timedelta(seconds=-2), "<invalid>"),
    (timedelta(seconds=-2) + MS, "0s"),
    (timedelta(0), "0s"),
    (timedelta(seconds=1) - MS, "0s"),
    (timedelta(minutes=2) - MS, "119s"),
    (timedelta(minutes=2), "2m"),
    (timedelta(minutes=2, seconds=1), "2m1s"),
    (timedelta(minutes=10) - MS, "9m59s"),
    (timedelta(minutes=10), "10m"),
    (timedelta(minutes=10, seconds=1), "10m"),
    (3 * H - MS, "179m"),
    (3 * H, "3h"),
    (timedelta(hours=3, minutes=1), "3h1m"),
    (8 * H - MS, "7h59m"),
    (8 * H, "8h"),
    (timedelta(hours=8, minutes=59), "8h"),
    (2 * D - MS, "47h"),
    (2 * D, "2d"),
    (2 * D + H, "2d1h"),
    (8 * D - MS, "7d23h"),
    (8 * D, "8d"),
    (8 * D + 23 * H, "8d"),
    (2 * Y - MS, "729d"),
    (2 * Y, "2y"),
    (2 * Y + 23 * H, "2y"),
    (2 * Y + D - MS, "2y"),
    (2 * Y + D, "2y1d"),
    (7 * Y, "7y"),
    (8 * Y - MS, "7y364d"),
    (8 * Y, "8y"),
    (8 * Y + 364 * D, "8y"),
    (9 * Y, "9y"),
]


@pytest.mark.parametrize(("ago", "age"), DURATIONS)
def test_ages_read_as_kubectl_shows_them(ago: timedelta, age: str) -> None:
    info = REGISTRY.info("policy.karmada.io/v1alpha1", "ClusterTaintPolicy")
    assert cells(info, obj(ago=ago)) == [["a", age]]


# --- built-in printers ------------------------------------------------------------------------


def test_deployment_columns_and_wide_columns() -> None:
    info = REGISTRY.info("apps/v1", "Deployment")
    assert headers(info) == [
        ("Name", "string", 0), ("Ready", "string", 0), ("Up-to-date", "string", 0),
        ("Available", "string", 0), ("Age", "string", 0), ("Containers", "string", 1),
        ("Images", "string", 1), ("Selector", "string", 1),
    ]  # fmt: skip
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
    }
    containers = [{"name": "app", "image": "app:1"}, {"name": "proxy", "image": "envoy:1"}]
    deployment = obj(
        "web",
        spec={
            "replicas": 3,
            "selector": selector,
            "template": {"spec": {"containers": containers}},
        },
        status={"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    )
    assert cells(info, deployment) == [
        ["web", "2/3", 3, 2, "5m", "app,proxy", "app:1,envoy:1", "app=web,tier in (a,b)"]
    ]
    # A new Deployment: one replica by default, nothing ready yet.
    assert cells(info, obj("new"))[0][:4] == ["new", "0/1", 0, 0]


def test_pod_columns_and_where_it_runs_in_the_wide_ones() -> None:
    info = REGISTRY.info("v1", "Pod")
    assert [name for name, _, _ in headers(info)] == [
        "Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node",
        "Readiness Gates",
    ]  # fmt: skip
    containers = [{"name": "a"}, {"name": "b"}]
    running = obj(
        "web-1",
        spec={"containers": containers, "nodeName": "node2"},
        status={"phase": "Running", "podIP": "10.0.0.7", "containerStatuses": [
            {"name": "a", "ready": True, "restartCount": 2}, {"name": "b", "ready": False}]},
    )  # fmt: skip
    pending = obj("web-2", spec={"containers": containers}, status={"phase": "Pending"})
    leaving = obj("web-3", spec={"containers": containers}, status={"phase": "Running"})
    leaving["metadata"]["deletionTimestamp"] = stamp(timedelta(0))
    assert cells(info, running, pending, leaving) == [
        ["web-1", "1/2", "Running", "2", "5m", "10.0.0.7", "node2", "<none>", "<none>"],
        ["web-2", "0/2", "Pending", "0", "5m", "<none>", "<none>", "<none>", "<none>"],
        ["web-3", "0/2", "Terminating", "0", "5m", "<none>", "<none>", "<none>", "<none>"],
    ]


def test_node_columns_show_readiness_cordoning_and_roles() -> None:
    info = REGISTRY.info("v1", "Node")
    assert [name for name, _, p in headers(info) if p == 0] == [
        "Name",
        "Status",
        "Roles",
        "Age",
        "Version",
    ]
    ready = obj(
        "node1",
        status={"conditions": [condition("Ready", "True")],
                "nodeInfo": {"kubeletVersion": "v1.31.0"}},
    )  # fmt: skip
    cordoned = obj("node2", spec={"unschedulable": True},
                   status={"conditions": [condition("Ready", "False")]})  # fmt: skip
    cordoned["metadata"]["labels"] = {"node-role.kubernetes.io/worker": "", "zone": "a"}
    unknown = obj("node3")
    assert [row[:5] for row in cells(info, ready, cordoned, unknown)] == [
        ["node1", "Ready", "<none>", "5m", "v1.31.0"],
        ["node2", "NotReady,SchedulingDisabled", "worker", "5m", ""],
        ["node3", "Unknown", "<none>", "5m", ""],
    ]


def test_namespace_columns() -> None:
    info = REGISTRY.info("v1", "Namespace")
    assert [h[0] for h in headers(info)] == ["Name", "Status", "Age"]
    terminating = obj("old", status={"phase": "Terminating"})
    assert cells(info, obj("new"), terminating) == [
        ["new", "Active", "5m"],
        ["old", "Terminating", "5m"],
    ]


def test_event_columns() -> None:
    info = REGISTRY.info("v1", "Event")
    assert [(h[0], h[2]) for h in headers(info)] == [
        ("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Subobject", 1),
        ("Source", 1), ("Message", 0), ("First Seen", 1), ("Count", 1), ("Name", 1),
    ]  # fmt: skip
    event = obj(
        "member1.1812a",
        involvedObject={"kind": "Cluster", "name": "member1"},
        type="Warning",
        reason="TaintClusterSucceed",
        message="Taint cluster succeed.\n",
        source={"component": "cluster-controller"},
        firstTimestamp=stamp(timedelta(minutes=30)),
        lastTimestamp=stamp(timedelta(minutes=4)),
        count=3,
    )
    assert cells(info, event) == [
        [
            "4m", "Warning", "TaintClusterSucceed", "cluster/member1", "", "cluster-controller",
            "Taint cluster succeed.", "30m", 3, "member1.1812a",
        ]
    ]  # fmt: skip
    # An events.k8s.io-style event: eventTime, a reporting controller, no count.
    new_style = obj(
        "e2",
        involvedObject={"kind": "Node"},
        eventTime=stamp(timedelta(seconds=20)),
        reportingController="kubelet",
        reportingInstance="node-1",
    )
    [row] = cells(info, new_style)
    assert (row[0], row[3], row[5], row[7], row[8]) == ("20s", "node", "kubelet, node-1", "20s", 1)


def test_lease_and_config_map_and_secret_columns() -> None:
    lease = REGISTRY.info("coordination.k8s.io/v1", "Lease")
    assert cells(lease, obj("member1", spec={"holderIdentity": "member1"})) == [
        ["member1", "member1", "5m"]
    ]
    config_maps = REGISTRY.info("v1", "ConfigMap")
    assert cells(config_maps, obj("c", data={"a": "1"}, binaryData={"b": "Ag=="})) == [
        ["c", 2, "5m"]
    ]
    secrets = REGISTRY.info("v1", "Secret")
    assert cells(secrets, obj("s", data={"a": "MQ=="})) == [["s", "Opaque", 1, "5m"]]


def test_karmada_cluster_columns() -> None:
    info = REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster")
    assert [(h[0], h[2]) for h in headers(info)] == [
        ("Name", 0), ("Version", 0), ("Mode", 0), ("Ready", 0), ("Age", 0), ("Zones", 1),
        ("Region", 1), ("Provider", 1), ("API-Endpoint", 1), ("Proxy-URL", 1),
    ]  # fmt: skip
    cluster = obj(
        "member1",
        spec={"syncMode": "Push", "apiEndpoint": "https://m1:6443", "zones": ["z1", "z2"]},
        status={"kubernetesVersion": "v1.31.0", "conditions": [condition("Ready", "False")]},
    )
    assert cells(info, cluster, obj("member2")) == [
        [
            "member1",
            "v1.31.0",
            "Push",
            "False",
            "5m",
            "z1,z2",
            "<none>",
            "<none>",
            "https://m1:6443",
            "<none>",
        ],
        ["member2", "", "", "Unknown", "5m", "<none>", "<none>", "<none>", "", "<none>"],
    ]


# --- the Table itself -----------------------------------------------------------------------


def test_rows_carry_partial_object_metadata_by_default() -> None:
    info = REGISTRY.info("v1", "Namespace")
    ns = {"apiVersion": "v1", "kind": "Namespace", **obj("n", ago=timedelta(0)), "spec": {}}
    reply = table(info, [ns], now=NOW, resource_version="42", continue_="abc")
    assert {k: v for k, v in reply.items() if k not in ("columnDefinitions", "rows")} == {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": "42", "continue": "abc"},
    }
    assert reply["rows"][0]["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": ns["metadata"],
    }
    assert table(info, [ns], now=NOW, include_object="Object")["rows"][0]["object"] == ns
    assert table(info, [ns], now=NOW, include_object="None")["rows"][0]["object"] is None
    with pytest.raises(BadRequest, match='unrecognized includeObject value: "All"'):
        table(info, [ns], now=NOW, include_object="All")


# --- JSONPath -------------------------------------------------------------------------------

DOC = {
    "metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "web"}},
    "items": [
        {"name": "a", "n": 1, "tags": ["t1"]},
        {"name": "b", "n": 5},
        {"name": "c", "n": 10, "ready": True},
    ],
}

PATHS = [
    (".metadata.name", ["x"]),
    ("{.metadata.name}", ["x"]),
    ("$.metadata.name", ["x"]),
    (".metadata['labels']['app.kubernetes.io/name']", ["web"]),
    (".metadata.labels.app\\.kubernetes\\.io/name", ["web"]),
    (".items[*].name", ["a", "b", "c"]),
    (".items[0].name", ["a"]),
    (".items[-1].name", ["c"]),
    (".items[7].name", []),
    (".items[0:2].name", ["a", "b"]),
    (".items[0,2].name", ["a", "c"]),
    ('.items[?(@.name=="b")].n', [5]),
    (".items[?(@.name!='b')].n", [1, 10]),
    (".items[?(@.n > 1)].name", ["b", "c"]),
    (".items[?(@.n<=5)].name", ["a", "b"]),
    (".items[?(@.ready)].name", ["c"]),
    ('.items[?(@.n=="5")].name', []),
    ("..tags[0]", ["t1"]),
    (".missing.field", []),
    (".metadata.name.deeper", []),
]


@pytest.mark.parametrize(("path", "found"), PATHS)
def test_jsonpath(path: str, found: list[Any]) -> None:
    assert compile_path(path).find(DOC) == found


@pytest.mark.parametrize("path", [".items[", ".items[?(@.n > )]", ".a b"])
def test_a_malformed_jsonpath_is_refused(path: str) -> None:
    with pytest.raises(JSONPathError):
        compile_path(path)
