"""`fleetwarden explain`: why a workload is where it is, read from a simulated fleet, from
what `simulate --dump` wrote and through a hub's API (with RBAC)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from copy import deepcopy
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from fleetwarden.admission import default_chain
from fleetwarden.cli import app
from fleetwarden.explain import DumpSource, explain
from fleetwarden.runtime.clock import RealClock
from fleetwarden.server import Server, create_app
from fleetwarden.sim.report import to_json, to_text
from fleetwarden.sim.runner import Simulation
from fleetwarden.sim.scenario import parse
from fleetwarden.store import MemoryStore

EXAMPLES = Path(__file__).parents[2] / "examples" / "scenarios"
runner = CliRunner()


def scenario(name: str, until: str | None = None, steps: int | None = None) -> dict[str, Any]:
    """An example scenario, cut short: its first `steps` steps, run `until` then, without
    its final expectations."""
    doc = yaml.safe_load((EXAMPLES / name).read_text())
    spec = doc["spec"]
    if until is not None:
        spec["until"] = until
        spec.pop("expect", None)
    if steps is not None:
        spec["steps"] = spec["steps"][:steps]
    return doc


def simulated(doc: dict[str, Any]) -> Simulation:
    simulation = Simulation(parse(deepcopy(doc), "test.yaml"))
    report = simulation.run()
    assert report.failed == 0, [o for o in report.outcomes if not o.passed]
    return simulation


def dumped(doc: dict[str, Any], path: Path, *, text: bool = False) -> str:
    """`simulate --dump` of the scenario, in a file: -o json, or the text output."""
    report = Simulation(parse(deepcopy(doc), "test.yaml")).run()
    path.write_text(to_text(report, dump=True) if text else to_json(report, dump=True))
    return str(path)


def run(*args: str) -> Any:
    return runner.invoke(app, ["explain", *args])


@contextmanager
def served(store: MemoryStore, path: Path) -> Iterator[str]:
    """The store behind the hub's API server; a kubeconfig for it."""
    with Server(create_app(store, default_chain(), RealClock())) as server:
        yield kubeconfig(path, server.url)


def kubeconfig(path: Path, url: str, token: str = "unused") -> str:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "hub", "cluster": {"server": url}}],
        "users": [{"name": "user", "user": {"token": token}}],
        "contexts": [{"name": "hub", "context": {"cluster": "hub", "user": "user"}}],
        "current-context": "hub",
    }
    path.write_text(yaml.safe_dump(config))
    return str(path)


def section(output: str, title: str) -> list[str]:
    """The lines of a section of the text output, its title left out."""
    block = output.split(f"\n\n{title}:\n", 1)[1].split("\n\n", 1)[0]
    return block.splitlines()


# --- Karmada ---------------------------------------------------------------------------


# graceful-failover at 1m50s: member2 went unreachable at 1m, was tainted NoExecute and
# evicted at 1m40s; member3 runs nginx but is not Healthy yet (workloadReadyAfter 20s).
WAITING_FOR_HEALTH = """\
Deployment default/nginx
(read from DUMP at 2025-01-01T00:01:50Z)

Resource template:  Deployment default/nginx
Binding:            ResourceBinding default/nginx-deployment
Policy:             PropagationPolicy default/nginx-propagation
Placement:          {"clusterAffinity":{"clusterNames":["member1","member2","member3"]},"spreadConstraints":[{"spreadByField":"cluster","maxGroups":2,"minGroups":2}],"replicaScheduling":{"replicaSchedulingType":"Duplicated"}}
Replicas:           2
Scheduled:          True Success: Binding has been scheduled successfully. (since 2025-01-01T00:00:00Z)
Generation:         5, observed by the scheduler: 5
Result:             member1(2), member3(2)

Clusters:
  CLUSTER  SELECTED  WHY
  member1  yes (2)   selected
                     scores: ClusterLocality=100
                     applied, Healthy
  member2  no        does not fit
                     ClusterEviction: cluster(s) is in the process of eviction
                     TaintToleration: cluster(s) had untolerated taint {not-ready:NoExecute}
                     Ready=Unknown (ClusterStatusUnknown)
                     being evicted (purge mode Gracefully): its Work stays while the task waits
  member3  yes (2)   selected
                     scores: ClusterLocality=100
                     applied, Unhealthy

Eviction tasks:
  CLUSTER  STATE    PRODUCER      REASON            PURGE MODE  CREATED               RETIRED
  member2  waiting  TaintManager  TaintUntolerated  Gracefully  2025-01-01T00:01:40Z  <none>
  member2 (waiting): the workload to be Healthy on member3 (Unhealthy), since 2025-01-01T00:01:40Z, or until 2025-01-01T00:11:40Z (graceful-eviction-timeout 10m0s)

Waiting for:
  - member3 to report the workload Healthy (it is Unhealthy)
  - the graceful eviction of member2 (TaintManager, TaintUntolerated): the workload to be Healthy on member3 (Unhealthy), since 2025-01-01T00:01:40Z, or until 2025-01-01T00:11:40Z (graceful-eviction-timeout 10m0s)"""


def test_a_deployment_waiting_for_health_from_a_dump(tmp_path: Path) -> None:
    dump = dumped(scenario("graceful-failover.yaml", "1m50s", 3), tmp_path / "dump.json")
    result = run("deployment/nginx", "--local", "-f", dump)
    assert result.exit_code == 0, result.output
    assert result.output == WAITING_FOR_HEALTH.replace("DUMP", dump) + "\n"


def test_the_text_output_of_simulate_dump_and_type_name_work_too(tmp_path: Path) -> None:
    doc = scenario("graceful-failover.yaml", "1m50s", 3)
    dump = dumped(doc, tmp_path / "dump.txt", text=True)
    by_binding = run("rb", "nginx-deployment", "-n", "default", "--local", "-f", dump)
    assert by_binding.exit_code == 0, by_binding.output
    assert by_binding.output.startswith("ResourceBinding default/nginx-deployment\n")
    # The same clusters, tasks and waits as for the Deployment: its binding is explained.
    expected = WAITING_FOR_HEALTH.replace("DUMP", dump)
    assert by_binding.output.split("\n\n", 2)[2] == expected.split("\n\n", 2)[2] + "\n"


def test_a_retired_task_through_the_api_is_read_from_the_hubs_history(tmp_path: Path) -> None:
    """At 2m30s the task is gone from the binding; its Event names the binding's version the
    graceful eviction controller judged, which the hub still holds: the task and why it was
    retired. member2's Work waits for member2 to come back before it goes."""
    simulation = simulated(scenario("graceful-failover.yaml", "2m30s", 5))
    with served(simulation.store, tmp_path / "kubeconfig") as config:
        result = run("deployment/nginx", "--kubeconfig", config)
    assert result.exit_code == 0, result.output
    assert section(result.output, "Eviction tasks") == [
        "  CLUSTER  STATE    PRODUCER      REASON            PURGE MODE  CREATED               RETIRED",
        "  member2  retired  TaintManager  TaintUntolerated  Gracefully  2025-01-01T00:01:40Z  2025-01-01T00:02:00Z",
        "  member2 (retired): the workload was Healthy on every cluster of the result (member1, member3)",
    ]
    assert section(result.output, "Waiting for") == [
        "  - member2 to be Ready again: the Work karmada-es-member2/nginx-687f7fb96f is being "
        "deleted since 2025-01-01T00:02:00Z, and the execution controller keeps it until the "
        "workload is removed there"
    ]
    assert "\n  member2  no        does not fit\n" in result.output


def test_a_dump_holds_no_history_so_a_retired_task_has_only_its_event(tmp_path: Path) -> None:
    dump = dumped(scenario("graceful-failover.yaml", "2m30s", 5), tmp_path / "dump.json")
    result = run("deployment/nginx", "--local", "-f", dump, "-o", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["evictions"] == [
        {
            "cluster": "member2",
            "state": "retired",
            "producer": "",
            "reason": "",
            "message": "",
            "purge_mode": "",
            "replicas": None,
            "created": None,
            "retired": "2025-01-01T00:02:00Z",
            "why": "retired (Event EvictWorkloadFromClusterSucceed); a dump holds no earlier "
            "versions of the binding, so the task's producer, reason and creation are not "
            "known (Karmada records only the Event)",
            "count": 1,
        }
    ]


def test_a_cluster_in_the_result_passes_a_taint_and_waits_for_its_toleration(
    tmp_path: Path,
) -> None:
    """seed-002-duplicated-failover at 8m: member2 is unreachable since 1m40s (NoSchedule)
    and 6m (NoExecute, tolerated for 300 s). TaintToleration spares it, being in the result;
    the taint manager evicts at 11m. member3 and member5 fit but spread allows two."""
    dump = dumped(scenario("seed-002-duplicated-failover.yaml", "8m", 4), tmp_path / "d.json")
    result = run("deployment/nginx", "--local", "-f", dump)
    assert result.exit_code == 0, result.output
    assert section(result.output, "Clusters")[4:] == [
        "  member2  yes (2)   selected",
        "                     TaintToleration: cluster(s) had untolerated taint "
        "{cluster.karmada.io/unreachable:NoSchedule} (passes: already in the result)",
        "                     scores: ClusterLocality=100",
        "                     Ready=Unknown (ClusterStatusUnknown)",
        "                     applied, Healthy",
        "                     NoExecute taints tolerated until 2025-01-01T00:11:00Z",
        "  member3  no        fits, but not chosen: spreadConstraints (cluster minGroups=2 "
        "maxGroups=2) let the scheduler choose member1, member2, ranked first by score, then "
        "available replicas, then name",
        "                     scores: ClusterLocality=0",
        "  member4  no        does not fit",
        "                     ClusterAffinity: cluster(s) did not match the placement cluster "
        "affinity constraint",
        "  member5  no        fits, but not chosen: spreadConstraints (cluster minGroups=2 "
        "maxGroups=2) let the scheduler choose member1, member2, ranked first by score, then "
        "available replicas, then name",
        "                     scores: ClusterLocality=0",
    ]
    assert section(result.output, "Waiting for") == [
        "  - the tolerationSeconds on member2 to run out at 2025-01-01T00:11:00Z: then the "
        "taint manager evicts the workload from member2, unless the taints are gone"
    ]


def test_a_template_no_policy_claims(tmp_path: Path) -> None:
    doc = scenario("graceful-failover.yaml", "10s", 0)
    doc["spec"]["objects"] = [o for o in doc["spec"]["objects"] if o["kind"] != "PropagationPolicy"]
    dump = dumped(doc, tmp_path / "dump.json")
    result = run("deploy/nginx", "--local", "-f", dump)
    assert result.exit_code == 0, result.output
    assert "\nBinding:  <none>\n" in result.output
    assert section(result.output, "Waiting for") == [
        "  - a PropagationPolicy or ClusterPropagationPolicy: none claims this template, so the "
        "resource detector makes no binding and nothing is scheduled"
    ]


def test_a_cluster_scoped_template_through_the_api(tmp_path: Path) -> None:
    """A Namespace propagated by a ClusterPropagationPolicy: its ClusterResourceBinding."""
    doc = {
        "apiVersion": "fleetwarden.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "crb"},
        "spec": {
            "members": {"member1": {}, "member2": {}},
            "objects": [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
                {
                    "apiVersion": "policy.karmada.io/v1alpha1",
                    "kind": "ClusterPropagationPolicy",
                    "metadata": {"name": "namespaces"},
                    "spec": {
                        "resourceSelectors": [
                            {"apiVersion": "v1", "kind": "Namespace", "name": "shop"}
                        ],
                        "placement": {"clusterAffinity": {"clusterNames": ["member1"]}},
                    },
                },
            ],
            "until": "30s",
        },
    }
    simulation = simulated(doc)
    with served(simulation.store, tmp_path / "kubeconfig") as config:
        by_template = run("ns", "shop", "--kubeconfig", config)
        by_binding = run("clusterresourcebindings/shop-namespace", "--kubeconfig", config)
    assert by_template.exit_code == 0, by_template.output
    assert by_template.output.startswith("Namespace shop\n")
    assert "\nBinding:            ClusterResourceBinding shop-namespace\n" in by_template.output
    assert "\nPolicy:             ClusterPropagationPolicy namespaces\n" in by_template.output
    assert section(by_template.output, "Clusters") == [
        "  CLUSTER  SELECTED  WHY",
        "  member1  yes       selected",
        "                     scores: ClusterLocality=100",
        "                     applied, Healthy",
        "  member2  no        does not fit",
        "                     ClusterAffinity: cluster(s) did not match the placement cluster "
        "affinity constraint",
    ]
    assert by_binding.output.split("\n\n", 1)[1] == by_template.output.split("\n\n", 1)[1]


# --- OCM -------------------------------------------------------------------------------


def test_a_placement_tolerating_a_taint_for_a_while(tmp_path: Path) -> None:
    """ocm-placement-toleration-seconds at 8m: cluster1 is unreachable since 6m, tolerated
    for 300 s; demo4-single (numberOfClusters 1) keeps it until 11m."""
    doc = scenario("ocm-placement-toleration-seconds.yaml", "8m", 3)
    dump = dumped(doc, tmp_path / "dump.json")
    result = run("placement", "demo4-single", "-n", "demo1", "--local", "-f", dump)
    assert result.exit_code == 0, result.output
    assert section(result.output, "Clusters") == [
        "  CLUSTER   SELECTED  WHY",
        "  cluster1  yes       selected: ranked 1 of 2",
        "                      scores: Balance(x1)=-100, Steady(x1)=100, total=0",
        "                      cluster sets: default, global",
        "                      taint {cluster.open-cluster-management.io/unreachable:NoSelect} "
        "tolerated until 2025-01-01T00:11:00Z",
        "  cluster2  no        fits, but ranked 2 of 2 and numberOfClusters is 1",
        "                      scores: Balance(x1)=-100, Steady(x1)=0, total=-100",
        "                      cluster sets: default, global",
    ]
    assert section(result.output, "Waiting for") == [
        "  - the toleration of taint {cluster.open-cluster-management.io/unreachable:NoSelect} "
        "on cluster1 to run out at 2025-01-01T00:11:00Z: then the scheduler drops cluster1"
    ]
    assert "DecisionCreate: Decision demo4-single-decision-1 is created" in result.output


def test_predicates_and_cluster_sets_say_why_a_cluster_is_left_out(tmp_path: Path) -> None:
    dump = dumped(scenario("ocm-placement-predicates.yaml"), tmp_path / "dump.json")
    result = run("placement/placement1", "-n", "ns1", "--local", "-f", dump)
    assert result.exit_code == 0, result.output
    assert (
        "  cluster4  no        does not fit\n"
        "                      Predicate: matches none of the predicates: predicates[0]: "
        "labelSelector vendor=OpenShift not met\n"
    ) in result.output
    unbound = run("placement/unbound-set", "-n", "ns1", "--local", "-f", dump)
    assert (
        "  cluster1  no        its bound ManagedClusterSets (clusterset1) are not among "
        "spec.clusterSets (clusterset4)\n"
    ) in unbound.output
    assert section(unbound.output, "Waiting for") == [
        "  - clusters to select (NoIntersection): None of ManagedClusterSets [clusterset4] is "
        "bound to placement namespace"
    ]


def test_a_placement_through_the_api(tmp_path: Path) -> None:
    simulation = simulated(scenario("ocm-placement-predicates.yaml"))
    with served(simulation.store, tmp_path / "kubeconfig") as config:
        result = run("placements", "placement1", "-n", "ns1", "--kubeconfig", config)
    assert result.exit_code == 0, result.output
    assert "\nDecisions:               cluster1, cluster2, cluster3, cluster5, cluster6\n" in (
        result.output
    )
    assert (
        "  cluster4  no        does not fit\n"
        "                      Predicate: matches none of the predicates: predicates[0]: "
        "labelSelector vendor=OpenShift not met\n"
    ) in result.output
    assert "Scheduler now" not in result.output


# --- explain and the scheduler agree ----------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_explain_agrees_with_the_scheduler_on_every_example(name: str) -> None:
    """At the end of each example, explain's selected clusters are the scheduler's result,
    and the scheduler asked again would choose the same (no `Scheduler now` line)."""
    simulation = simulated(scenario(name))
    objects = simulation._dump()
    source = DumpSource(objects)
    kinds = {"ResourceBinding": "rb", "ClusterResourceBinding": "crb", "Placement": "placement"}
    for obj in objects:
        if obj["kind"] not in kinds:
            continue
        meta = obj["metadata"]
        explained = explain(source, kinds[obj["kind"]], meta["name"], meta.get("namespace", ""))
        selected = sorted(c.name for c in explained.clusters if c.selected)
        if obj["kind"] == "Placement":
            decided = sorted(
                d["clusterName"]
                for pd in objects
                if pd["kind"] == "PlacementDecision"
                and pd["metadata"]["namespace"] == meta["namespace"]
                and pd["metadata"]["labels"]["cluster.open-cluster-management.io/placement"]
                == meta["name"]
                for d in (pd.get("status") or {}).get("decisions") or []
            )
        else:
            decided = sorted(t["name"] for t in obj["spec"].get("clusters") or [])
        assert selected == decided, (name, meta["name"])
        assert "Scheduler now" not in dict(explained.facts), (name, meta["name"], explained.facts)
        for cluster in explained.clusters:
            if not cluster.selected and any(not v.passed for v in cluster.verdicts):
                assert cluster.why == "does not fit" or "being deleted" in cluster.why


# --- RBAC, errors, output ---------------------------------------------------------------


def test_explain_reads_as_the_user_and_rbac_decides(tmp_path: Path) -> None:
    """alice may read the Deployment, its binding, its Events and the clusters, but not the
    Works nor watch bindings: explain says so and explains the rest. bob may read nothing:
    the hub's Forbidden, as kubectl prints it."""
    from fleetwarden.auth.authn import Authenticator, load_token_file
    from fleetwarden.auth.bootstrap import kubernetes_policy
    from fleetwarden.controllers.rbac.bootstrap import ensure_bootstrap_policy
    from fleetwarden.runtime.access import rbac_authorizer
    from fleetwarden.server.security import Security

    simulation = simulated(scenario("graceful-failover.yaml", "2m30s", 5))
    store = simulation.store
    ensure_bootstrap_policy(store, kubernetes_policy())  # discovery for every user
    for obj in rbac_objects():
        store.create(obj)
    (tmp_path / "tokens.csv").write_text("tok-alice,alice,1001\ntok-bob,bob,1002\n")
    security = Security(
        Authenticator(tokens=load_token_file(tmp_path / "tokens.csv")), rbac_authorizer(store)
    )
    app_ = create_app(store, default_chain(), RealClock(), security=security)
    with Server(app_) as server:
        alice = kubeconfig(tmp_path / "alice", server.url, "tok-alice")
        bob = kubeconfig(tmp_path / "bob", server.url, "tok-bob")
        allowed = run("deployment/nginx", "--kubeconfig", alice)
        refused = run("deployment/nginx", "--kubeconfig", bob)
    assert allowed.exit_code == 0, allowed.output
    notes = section(allowed.output + "\n\n", "Notes")
    assert any(
        note.startswith("  - the binding's earlier versions could not be read: Forbidden")
        for note in notes
    ), notes
    assert any(
        note.startswith("  - the binding's Works could not be read: Forbidden") for note in notes
    ), notes
    assert (
        "  member2 (retired): retired (Event EvictWorkloadFromClusterSucceed); the binding as it was then could not be read (see Notes), so the task's producer, reason and creation are not known (Karmada records only the Event)"
        in section(allowed.output, "Eviction tasks")
    )
    assert section(allowed.output, "Waiting for") == [
        "  - nothing: the workload runs where it is scheduled, as far as what could be read "
        "says (see Notes)"
    ]
    assert refused.exit_code == 1
    assert refused.output.startswith(
        'Error from server (Forbidden): deployments.apps "nginx" is forbidden: User "bob" '
        'cannot get resource "deployments" in API group "apps" in the namespace "default"'
    )


def rbac_objects() -> list[dict[str, Any]]:
    rules = [
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"]},
        {
            "apiGroups": ["work.karmada.io"],
            "resources": ["resourcebindings"],
            "verbs": ["get", "list"],
        },
        {"apiGroups": [""], "resources": ["events"], "verbs": ["list"]},
    ]
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "explainer", "namespace": "default"},
            "rules": rules,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "explainer", "namespace": "default"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "explainer",
            },
            "subjects": [
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "cluster-reader"},
            "rules": [
                {"apiGroups": ["cluster.karmada.io"], "resources": ["clusters"], "verbs": ["list"]}
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "alice-cluster-reader"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-reader",
            },
            "subjects": [
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}
            ],
        },
    ]


def test_yaml_output_has_every_plugins_verdict(tmp_path: Path) -> None:
    dump = dumped(scenario("graceful-failover.yaml", "1m50s", 3), tmp_path / "dump.json")
    result = run("deployment/nginx", "--local", "-f", dump, "-o", "yaml")
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(result.output)
    member2 = next(c for c in doc["clusters"] if c["name"] == "member2")
    assert [(v["plugin"], v["passed"], v["reason"]) for v in member2["verdicts"]] == [
        ("ClusterAffinity", True, ""),
        ("ClusterEviction", False, "cluster(s) is in the process of eviction"),
        ("TaintToleration", False, "cluster(s) had untolerated taint {not-ready:NoExecute}"),
        ("APIEnablement", True, ""),
        ("SpreadConstraint", True, ""),
    ]
    assert doc["facts"]["Result"] == "member1(2), member3(2)"


def test_refusals(tmp_path: Path) -> None:
    dump = dumped(scenario("graceful-failover.yaml", "10s", 0), tmp_path / "dump.json")
    missing = run("deployment/nope", "--local", "-f", dump)
    assert (missing.exit_code, missing.output) == (
        1,
        'Error from server (NotFound): deployments.apps "nope" not found\n',
    )
    assert run("deployment/nginx", "--local").output == (
        "error: --local and -f FILE go together: --local reads the objects -f names\n"
    )
    assert run("deployment", "--local", "-f", dump).output.startswith("error: explain one object")
    assert run("nonsense/x", "--local", "-f", dump).output == (
        'error: the server doesn\'t have a resource type "nonsense"\n'
    )
    assert run("deploy/nginx", "-o", "wide", "--local", "-f", dump).output == (
        'error: unknown output format "wide": use text, json, yaml\n'
    )
    bad = run("deploy/nginx", "--graceful-eviction-timeout", "soon", "--local", "-f", dump)
    assert bad.output.startswith("error: invalid --graceful-eviction-timeout: ")
