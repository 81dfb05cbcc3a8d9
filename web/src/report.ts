// The page of `fleetwarden simulate --html`: the recording is in the page itself, as JSON
// in <script type="application/json" id="fleetwarden-recording">, next to this bundle.

import "./report.css";
import type { Recording } from "./recording";
import { element, legend } from "./legend";
import { Timeline } from "./timeline";

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

function main(): void {
  const source = document.getElementById("fleetwarden-recording");
  const recording = JSON.parse(source?.textContent ?? "null") as Recording;
  document.title = `${recording.title}: fleetwarden simulation`;
  const root = document.getElementById("fleetwarden-report")!;
  const chart = element("div", "", "timeline");
  root.append(
    element("h1", recording.title),
    element("p", summary(recording), "summary"),
    legend("run"),
    chart,
  );
  // The mark a reader (or a test) waits for before reading the drawing.
  const timeline = new Timeline(chart, recording, () => {
    document.documentElement.dataset.drawn = "true";
  });
  window.addEventListener("resize", () => timeline.resize());
}

main();
