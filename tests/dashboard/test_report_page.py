"""`fleetwarden simulate --html`: the page, in a real browser, as a person would look at it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from fleetwarden.cli import app
from fleetwarden.dashboard.report import render_report
from fleetwarden.sim.recording import Recording
from fleetwarden.sim.scenario import load

from .conftest import Visit, keep_screenshot

SCENARIOS = Path(__file__).parents[2] / "examples" / "scenarios"

# Each lane (by its label on the left) with the fill colours and the texts drawn on it.
LANES_JS = """() => {
  const labels = [...document.querySelectorAll('svg text[text-anchor="end"]')].map((t) => {
    const r = t.getBoundingClientRect();
    return { name: t.textContent, y: r.top + r.height / 2, right: r.right };
  });
  const band = labels[1].y - labels[0].y;
  const plotLeft = Math.max(...labels.map((l) => l.right));
  const lanes = labels.map((l) => ({ name: l.name, fills: [], texts: [] }));
  for (const el of document.querySelectorAll("svg path, svg circle, svg rect, svg text")) {
    const r = el.getBoundingClientRect();
    const y = r.top + r.height / 2;
    if (r.right <= plotLeft || y < labels[0].y - band / 2 || y > labels.at(-1).y + band / 2) {
      continue;
    }
    let lane = 0;
    labels.forEach((l, i) => { if (Math.abs(l.y - y) < Math.abs(labels[lane].y - y)) lane = i; });
    if (el.tagName === "text") lanes[lane].texts.push(el.textContent);
    else if (getComputedStyle(el).fill !== "none") lanes[lane].fills.push(getComputedStyle(el).fill);
  }
  return lanes;
}"""
LEGEND_JS = """() => Object.fromEntries([...document.querySelectorAll(".legend li")].map(
  (li) => [li.textContent, getComputedStyle(li.querySelector(".swatch")).backgroundColor]))"""


def simulate_page(scenario: str, out: Path) -> Path:
    result = CliRunner().invoke(app, ["simulate", str(SCENARIOS / scenario), "--html", str(out)])
    assert result.exit_code == 0, result.output
    return out


def drawn(visit: Visit) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The lanes once drawn, and the legend's colours by label."""
    visit.page.wait_for_selector("html[data-drawn=true]", state="attached", timeout=20_000)
    lanes = {lane["name"]: lane for lane in visit.page.evaluate(LANES_JS)}
    return lanes, visit.page.evaluate(LEGEND_JS)


def assert_self_contained(visit: Visit, page: Path) -> None:
    assert visit.problems == []
    assert visit.requests == [page.as_uri()]  # the page itself, nothing else


def test_graceful_failover_page_draws_a_lane_per_cluster_and_workload(
    visit: Any, tmp_path: Path
) -> None:
    page = simulate_page("graceful-failover.yaml", tmp_path / "graceful-failover.html")
    seen = visit(page)
    lanes, legend = drawn(seen)
    members = sorted(load(str(SCENARIOS / "graceful-failover.yaml")).members)
    assert list(lanes) == ["expectations", *members, "Deployment default/nginx"]
    keep_screenshot(seen.page, tmp_path, "simulate-graceful-failover.png")
    assert_self_contained(seen, page)
    assert seen.page.text_content("h1") == "graceful-failover"
    assert "13 passed, 0 failed" in (seen.page.text_content(".summary") or "")
    # member2 went Unknown and was tainted; member1 stayed Ready and untainted.
    assert set(lanes["member1"]["fills"]) == {legend["health True"]}
    assert {
        legend["health True"], legend["health Unknown"],
        legend["taint NoExecute"], legend["taint NoSchedule / NoSelect"],
    } == set(lanes["member2"]["fills"])  # fmt: skip
    assert lanes["member2"]["texts"] == [
        "not-ready:NoExecute", "cluster.karmada.io/unreachable:NoSchedule",
    ]  # fmt: skip
    # nginx moved from member2 to member3, with an eviction task created and retired.
    nginx = lanes["Deployment default/nginx"]
    assert nginx["texts"] == ["member1 ×2", "member2 ×2", "member1 ×2", "member3 ×2"]
    eviction = legend["eviction task: ▼ created, ● retired"]
    assert nginx["fills"].count(eviction) == 2
    assert lanes["expectations"]["fills"] == [legend["expectation passed"]] * 13


def test_ocm_page_draws_managed_clusters_and_placements(visit: Any, tmp_path: Path) -> None:
    page = simulate_page("ocm-placement-taints.yaml", tmp_path / "ocm.html")
    seen = visit(page)
    lanes, legend = drawn(seen)
    keep_screenshot(seen.page, tmp_path, "simulate-ocm-placement-taints.png")
    assert_self_contained(seen, page)
    members = sorted(load(str(SCENARIOS / "ocm-placement-taints.yaml")).members)
    placements = [f"Placement default/{p}" for p in ("latecomer", "placement1", "plain")]
    assert list(lanes) == ["expectations", *members, *placements]
    assert legend["health Unknown"] in lanes["cluster3"]["fills"]
    assert lanes["cluster3"]["texts"] == ["cluster.open-cluster-management.io/unreachable:NoSelect"]
    # latecomer: only cluster4 at first, then cluster2 joins it when it is available again.
    assert lanes["Placement default/latecomer"]["texts"] == ["cluster4", "cluster2", "cluster4"]


HOSTILE = '</script><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


def hostile_recording() -> Recording:
    return {
        "title": HOSTILE,
        "start": "2025-01-01T00:00:00+00:00",
        "end": 60.0,
        "clusters": [
            {
                "name": "member1", "kind": "Cluster",
                "health": [{"at": 0.0, "status": "True", "reason": HOSTILE}],
                "taints": [{"key": "k", "value": HOSTILE, "effect": "NoExecute", "start": 0.0, "end": None}],
            }
        ],
        "workloads": [],
        "expectations": [
            {"at": 30.0, "path": "spec.expect[0]", "passed": False, "check": "equals",
             "query": HOSTILE, "expected": HOSTILE, "actual": None},
        ],
    }  # fmt: skip


def test_hostile_strings_in_the_data_stay_text(visit: Any, tmp_path: Path) -> None:
    page = tmp_path / "hostile.html"
    page.write_text(render_report(hostile_recording()), encoding="utf-8")
    seen = visit(page)
    lanes, legend = drawn(seen)
    assert seen.page.text_content("h1") == HOSTILE
    assert lanes["expectations"]["fills"] == [legend["expectation failed"]]
    # The taint's tooltip shows the string as written.
    taint = seen.page.locator("svg text", has_text="k=</script>").first
    taint.hover()
    tooltip = seen.page.locator("div", has_text="taint k=</script>").last
    tooltip.wait_for(timeout=5_000)
    assert HOSTILE in (tooltip.text_content() or "")
    assert seen.page.evaluate("window.pwned") is None
    assert seen.page.locator("img").count() == 0
    assert_self_contained(seen, page)
