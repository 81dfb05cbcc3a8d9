// The page of `fleetwarden simulate --html`: the recording is in the page itself, as JSON
// in <script type="application/json" id="fleetwarden-recording">, next to this bundle.

import "./report.css";
import type { Recording } from "./recording";
import { LEGEND, renderTimeline } from "./timeline";

function element(tag: string, text = "", className = ""): HTMLElement {
  const e = document.createElement(tag);
  e.textContent = text;
  if (className) e.className = className;
  return e;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function summary(recording: Recording): string {
  const failed = recording.expectations.filter((v) => !v.passed).length;
  const passed = recording.expectations.length - failed;
  return (
    `${count(recording.clusters.length, "cluster")}, ` +
    `${count(recording.workloads.length, "workload")}; ` +
    `expectations: ${passed} passed, ${failed} failed; started ${recording.start}`
  );
}

function legend(): HTMLElement {
  const list = element("ul", "", "legend");
  const swatch = (label: string, color: string) => {
    const item = element("li", label);
    const mark = element("span", "", "swatch");
    mark.style.background = color;
    item.prepend(mark);
    list.append(item);
  };
  for (const [status, color] of Object.entries(LEGEND.health)) swatch(`health ${status}`, color);
  // Karmada's and OCM's effects of the same strength share a colour and a swatch.
  const effects = new Map<string, string[]>();
  for (const [effect, color] of Object.entries(LEGEND.taints)) {
    effects.set(color, [...(effects.get(color) ?? []), effect]);
  }
  for (const [color, names] of effects) swatch(`taint ${names.join(" / ")}`, color);
  swatch("eviction task: ▼ created, ● retired", LEGEND.eviction);
  swatch("expectation passed", LEGEND.expectations.passed);
  swatch("expectation failed", LEGEND.expectations.failed);
  return list;
}

function main(): void {
  const source = document.getElementById("fleetwarden-recording");
  const recording = JSON.parse(source?.textContent ?? "null") as Recording;
  document.title = `${recording.title}: fleetwarden simulation`;
  const root = document.getElementById("fleetwarden-report")!;
  const chart = element("div", "", "timeline");
  root.append(
    element("h1", recording.title),
    element("p", summary(recording), "summary"),
    legend(),
    chart,
  );
  // The mark a reader (or a test) waits for before reading the drawing.
  const timeline = renderTimeline(chart, recording, () => {
    document.documentElement.dataset.drawn = "true";
  });
  window.addEventListener("resize", () => timeline.resize());
}

main();
