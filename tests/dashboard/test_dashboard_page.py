"""The hub's dashboard in a real browser, against a real `fleetwarden up`: a person signs in
with a token, sees the fleet, watches a taint appear as `fleetwarden taint` adds it, is
refused what their role forbids in the API's words, and taints and cordons through the
page's confirmation when their role allows it; another signs in with a client certificate
(which Playwright presents for the browser)."""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, Playwright, expect
from typer.testing import CliRunner
from up.test_up import CLUSTER, Hub, eventually, kill_leftover_agents, ready
from up.test_up_ocm import PLACEMENT_OBJECTS

from fleetwarden.auth.pki import KeyPair, client_certificate
from fleetwarden.cli import app
from fleetwarden.client.client import Client

from .conftest import CHROMIUM, FLAGS, Visit, keep_screenshot
from .test_report_page import HOSTILE, LANES_JS

SETTINGS = [
    "--cluster-lease-duration=2s", "--cluster-status-update-frequency=1s",
    "--cluster-monitor-grace-period=3s",
    # A NoExecute taint evicts: the live timeline shows the eviction and the reschedule.
    "--feature-gates=Failover=true", "--enable-no-execute-taint-eviction=true",
]  # fmt: skip
TOKENS = 'operator-token,olivia,1001,"fleet-operators"\nviewer-token,victor,1002,"fleet-viewers"\n'
# What the page reads: both dialects' clusters, bindings, placements, events, leases and the
# fleet-protection status.
READ = [
    {"apiGroups": ["cluster.karmada.io"], "resources": ["clusters"]},
    {"apiGroups": ["cluster.open-cluster-management.io"],
     "resources": ["managedclusters", "placements", "placementdecisions"]},
    {"apiGroups": ["work.karmada.io"], "resources": ["resourcebindings"]},
    {"apiGroups": [""], "resources": ["events", "configmaps"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"]},
]  # fmt: skip


# A Deployment on both Karmada members, and an OCM Placement of the managed clusters.
WORKLOAD: list[dict[str, Any]] = [
    {"apiVersion": "apps/v1", "kind": "Deployment",
     "metadata": {"name": "web", "namespace": "default"},
     "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
              "template": {"metadata": {"labels": {"app": "web"}},
                           "spec": {"containers": [{"image": "nginx", "name": "web"}]}}}},
    {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
     "metadata": {"name": "web", "namespace": "default"},
     "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
              "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]},
                            "replicaScheduling": {"replicaSchedulingType": "Duplicated"}}}},
]  # fmt: skip


def role(name: str, group: str, *, patch: bool) -> list[dict[str, Any]]:
    rules = [{**r, "verbs": ["get", "list", "watch"]} for r in READ]
    if patch:
        rules += [{"apiGroups": ["cluster.karmada.io"], "resources": ["clusters"], "verbs": ["patch"]},
                  {"apiGroups": ["cluster.open-cluster-management.io"],
                   "resources": ["managedclusters"], "verbs": ["patch"]}]  # fmt: skip
    rbac = "rbac.authorization.k8s.io/v1"
    return [
        {"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules},
        {"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": name},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]},
    ]  # fmt: skip


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    data_dir = tmp_path_factory.mktemp("hub")
    tokens = data_dir.parent / "tokens.csv"
    tokens.write_text(TOKENS)
    hub = Hub(
        data_dir, ["--members=2", "--ocm-members=1", f"--token-auth-file={tokens}", *SETTINGS]
    )
    try:
        client = hub.start()
        eventually(
            lambda: all(ready(client, m) for m in ("member1", "member2")), 30, "Ready members"
        )
        for obj in [*role("fleet-operator", "fleet-operators", patch=True),
                    *role("fleet-viewer", "fleet-viewers", patch=False),
                    *WORKLOAD, *PLACEMENT_OBJECTS]:  # fmt: skip
            client.create(obj)
        yield hub
    finally:
        hub.stop()
        kill_leftover_agents(data_dir / "members")


def admin(hub: Hub) -> Client:
    assert hub.client is not None
    return hub.client


def dashboard_address(hub: Hub) -> str | None:
    """Where `up` says the dashboard is (once it has said so)."""
    log = (hub.data_dir / "hub.log").read_text()
    said = [line for line in log.splitlines() if line.startswith("dashboard: ")]
    return said[0].removeprefix("dashboard: ") if said else None


def signed_in(visit: Any, hub: Hub, token: str) -> Visit:
    address = eventually(lambda: dashboard_address(hub), 10, "the dashboard's address")
    assert address == f"{admin(hub).server}/"
    seen: Visit = visit(address)
    seen.page.get_by_label("bearer token").fill(token)
    seen.page.get_by_role("button", name="Sign in with the token").click()
    seen.page.wait_for_selector("tr[data-cluster=member2]", timeout=10_000)
    seen.page.wait_for_selector("html[data-drawn=true]", state="attached", timeout=10_000)
    return seen


def row(page: Page, name: str) -> Any:
    return page.locator(f"tr[data-cluster={name}]")


def taint_keys(hub: Hub, name: str) -> list[str]:
    return [t["key"] for t in admin(hub).get(CLUSTER, name)["spec"].get("taints", [])]


def test_the_page_lists_the_fleet_and_shows_a_taint_within_2s_of_fleetwarden_taint(
    visit: Any, hub: Hub, tmp_path: Path
) -> None:
    seen = signed_in(visit, hub, "operator-token")
    page = seen.page
    expect(page.locator(".whoami")).to_contain_text("Signed in as olivia")
    eventually(lambda: page.locator("tr[data-cluster=cluster1]").count() == 1, 30, "cluster1")
    assert page.locator("tbody tr[data-cluster]").evaluate_all(
        "rows => rows.map((r) => r.dataset.kind + '/' + r.dataset.cluster)"
    ) == ["ManagedCluster/cluster1", "Cluster/member1", "Cluster/member2"]  # by region, then name
    expect(row(page, "member1").locator(".health")).to_contain_text("True")
    # The workloads: the Deployment's binding on both members, the Placement's decision.
    web = page.locator('tr[data-workload="Deployment default/web"]')
    expect(web).to_contain_text("member1 ×2, member2 ×2", timeout=20_000)
    expect(web).to_contain_text("web")  # its policy
    placement = page.locator('tr[data-placement="Placement default/everywhere"]')
    expect(placement.locator("td").nth(1)).to_have_text("cluster1", timeout=30_000)
    # Its scores, from the scheduler's ScoreUpdate Event.
    expect(placement.locator("td").nth(3)).to_have_text(re.compile(r"^cluster1:\d+$"))
    kubeconfig = hub.data_dir / "kubeconfig"
    tainted = CliRunner().invoke(app, ["taint", "clusters", "member1", "dashboard-test=yes:NoSchedule",
                                       f"--kubeconfig={kubeconfig}"])  # fmt: skip
    assert tainted.exit_code == 0, tainted.output
    added = time.monotonic()
    chip = row(page, "member1").locator('[data-taint="dashboard-test=yes:NoSchedule"]')
    chip.wait_for(timeout=2_000)
    print(f"taint shown {time.monotonic() - added:.2f}s after `fleetwarden taint` returned")
    # The live timeline draws it too, from now on (its text cut to the bar's width), with the
    # renderer of simulate --html; hovering it tells the whole taint.
    bar = page.locator("svg text").filter(has_text=re.compile(r"^das")).first
    bar.wait_for(timeout=10_000)
    bar.hover()
    tooltip = page.locator("div", has_text="taint dashboard-test=yes:NoSchedule on member1").last
    tooltip.wait_for(timeout=5_000)
    page.mouse.move(0, 0)
    keep_screenshot(page, tmp_path, "dashboard.png")
    assert seen.problems == []


def test_an_action_the_role_forbids_shows_the_apis_refusal(visit: Any, hub: Hub) -> None:
    seen = signed_in(visit, hub, "viewer-token")
    page = seen.page
    row(page, "member2").get_by_role("button", name="Taint…").click()
    dialog = page.locator("dialog[open]")
    dialog.get_by_label("key").fill("forbidden")
    dialog.get_by_role("button", name="Confirm").click()
    expect(dialog.locator(".error")).to_have_text(
        'Error from server: clusters.cluster.karmada.io "member2" is forbidden: User "victor" '
        'cannot patch resource "clusters" in API group "cluster.karmada.io" at the cluster scope',
        timeout=5_000,
    )
    assert "forbidden" not in taint_keys(hub, "member2")
    # The browser's own line about the refused request, and nothing else.
    assert [p for p in seen.problems if "403" not in p] == []


def test_a_permitted_taint_and_cordon_through_the_confirmation_land_on_the_cluster(
    visit: Any, hub: Hub, tmp_path: Path
) -> None:
    seen = signed_in(visit, hub, "operator-token")
    page = seen.page
    member2 = row(page, "member2")
    member2.get_by_role("button", name="Taint…").click()
    dialog = page.locator("dialog[open]")
    dialog.get_by_label("key").fill("maintenance")
    dialog.get_by_label("value").fill("true")
    dialog.get_by_label("effect").select_option("NoSchedule")
    keep_screenshot(page, tmp_path, "dashboard-taint-dialog.png")
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.locator("dialog[open]")).to_have_count(0)
    eventually(lambda: "maintenance" in taint_keys(hub, "member2"), 5, "the taint on member2")
    member2.locator('[data-taint="maintenance=true:NoSchedule"]').wait_for(timeout=2_000)

    member2.get_by_role("button", name="Cordon").click()
    page.locator("dialog[open]").get_by_role("button", name="Confirm").click()
    expect(member2.locator(".cordon")).to_have_text("cordoned", timeout=2_000)
    assert "cluster.karmada.io/unschedulable" in taint_keys(hub, "member2")

    # The × of a taint removes it, after the same confirmation.
    member2.get_by_title("remove maintenance=true:NoSchedule").click()
    page.locator("dialog[open]").get_by_role("button", name="Confirm").click()
    eventually(lambda: "maintenance" not in taint_keys(hub, "member2"), 5, "the taint gone")
    member2.get_by_role("button", name="Uncordon").click()
    page.locator("dialog[open]").get_by_role("button", name="Confirm").click()
    expect(member2.locator(".cordon")).to_have_text("", timeout=2_000)
    assert taint_keys(hub, "member2") == []
    assert seen.problems == []


def test_the_browsers_client_certificate_signs_in(
    playwright: Playwright, hub: Hub, tmp_path: Path
) -> None:
    # A certificate from the hub's CA, as an administrator would issue a person one.
    pki = hub.data_dir / "pki"
    ca = KeyPair.read(pki / "ca.crt", pki / "ca.key")
    client_certificate(ca, "carla", ["fleet-viewers"], datetime.now(UTC)).write(
        tmp_path / "carla.crt", tmp_path / "carla.key"
    )
    address = dashboard_address(hub)
    assert address is not None
    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
    try:
        context = browser.new_context(
            ignore_https_errors=True,
            client_certificates=[{"origin": address.rstrip("/"), "certPath": tmp_path / "carla.crt",
                                  "keyPath": tmp_path / "carla.key"}],
        )  # fmt: skip
        page = context.new_page()
        page.goto(address)
        page.get_by_role("button", name="Sign in with my client certificate").click()
        expect(page.locator(".whoami")).to_contain_text("Signed in as carla", timeout=10_000)
        page.wait_for_selector("tr[data-cluster=member1]", timeout=10_000)
    finally:
        browser.close()


def test_an_eviction_appears_on_the_live_timeline(visit: Any, hub: Hub) -> None:
    seen = signed_in(visit, hub, "operator-token")
    page = seen.page
    web = page.locator('tr[data-workload="Deployment default/web"]')
    expect(web).to_contain_text("member1 ×2, member2 ×2", timeout=20_000)
    member1 = row(page, "member1")
    member1.get_by_role("button", name="Taint…").click()
    dialog = page.locator("dialog[open]")
    dialog.get_by_label("key").fill("evict")
    dialog.get_by_label("effect").select_option("NoExecute")
    dialog.get_by_role("button", name="Confirm").click()
    # The Deployment leaves member1: its binding's clusters, and on the timeline its lane's
    # eviction task (a purple mark).
    expect(web.locator("td").nth(2)).to_have_text("member2 ×2", timeout=20_000)
    eviction = "rgb(125, 60, 152)"  # the eviction task's colour (timeline.ts's EVICTION)
    eventually(
        lambda: any(lane["name"] == "Deployment default/web" and eviction in lane["fills"]
                    for lane in page.evaluate(LANES_JS)),
        10, "the eviction on the workload's lane",
    )  # fmt: skip
    assert seen.problems == []
    admin(hub).patch(CLUSTER, "member1", "", {"spec": {"taints": [
        t for t in admin(hub).get(CLUSTER, "member1")["spec"]["taints"] if t["key"] != "evict"]}})  # fmt: skip


def test_the_label_filter_narrows_the_fleet(visit: Any, hub: Hub) -> None:
    admin(hub).patch(CLUSTER, "member2", "", {"metadata": {"labels": {"env": "prod"}}})
    page = signed_in(visit, hub, "operator-token").page
    clusters = page.locator("tbody tr[data-cluster]")
    filter = page.get_by_label("label selector")
    for selector, shown in [("env=prod", ["member2"]), ("!env", ["cluster1", "member1"]),
                            ("env!=prod", ["cluster1", "member1"]), ("", ["cluster1", "member1", "member2"])]:  # fmt: skip
        filter.fill(selector)
        expect(clusters).to_have_count(len(shown))
        assert clusters.evaluate_all("rows => rows.map((r) => r.dataset.cluster)") == shown, (
            selector
        )


def test_hostile_strings_in_an_event_stay_text(visit: Any, hub: Hub) -> None:
    admin(hub).create({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "hostile", "namespace": "default"},
        "involvedObject": {"kind": "Cluster", "name": "member1"},
        "reason": "Hostile", "message": HOSTILE, "type": "Warning",
        "lastTimestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    })  # fmt: skip
    seen = signed_in(visit, hub, "operator-token")
    page = seen.page
    warning = "rgb(214, 69, 65)"  # an Event of type Warning (timeline.ts's EVENT)
    eventually(
        lambda: any(lane["name"] == "events" and warning in lane["fills"]
                    for lane in page.evaluate(LANES_JS)),
        10, "the Warning on the events lane",
    )  # fmt: skip
    # Hovered, its tooltip shows the message as written.
    page.locator('svg [fill="#d64541"]').last.hover()
    tooltip = page.locator("div", has_text="Warning Hostile").last
    tooltip.wait_for(timeout=5_000)
    assert HOSTILE in (tooltip.text_content() or "")
    assert page.evaluate("window.pwned") is None
    assert page.locator("img").count() == 0
    assert seen.problems == []


def test_a_second_tab_waits_for_the_first_and_says_why(visit: Any, hub: Hub) -> None:
    first = signed_in(visit, hub, "operator-token")
    second: Visit = visit(dashboard_address(hub))
    second.page.get_by_label("bearer token").fill("operator-token")
    second.page.get_by_role("button", name="Sign in with the token").click()
    expect(second.page.locator(".waiting")).to_contain_text(
        "The dashboard is open in another tab of this browser"
    )
    first.page.close()
    second.page.wait_for_selector("tr[data-cluster=member2]", timeout=10_000)
    assert second.problems == []


def test_fleet_protection_shows_each_regions_state(visit: Any, hub: Hub, tmp_path: Path) -> None:
    client = admin(hub)
    client.patch(CLUSTER, "member1", "", {"spec": {"region": "eu"}})
    client.patch(CLUSTER, "member2", "", {"spec": {"region": "us"}})
    seen = signed_in(visit, hub, "operator-token")
    page = seen.page
    expect(row(page, "member1").locator("td").nth(2)).to_have_text("eu")
    agent = hub.agent_pid("member1")
    os.kill(agent, signal.SIGSTOP)  # member1 stops reporting: eu, its only cluster, is lost
    try:
        # The region-disruption controller's status, listed again on its Event.
        expect(page.locator('.regions li[data-region="eu"]')).to_have_text(
            "eu: FullDisruption, 1 of 1 not Ready; evictions Normal", timeout=20_000
        )
        expect(row(page, "member1").locator(".health")).to_contain_text("Unknown")
        keep_screenshot(page, tmp_path, "dashboard-fleet-protection.png")
    finally:
        os.kill(agent, signal.SIGCONT)
    eventually(lambda: ready(client, "member1"), 30, "member1 Ready again")
    assert seen.problems == []
