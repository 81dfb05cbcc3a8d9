// The fleet's timeline as lanes on one time axis (Apache ECharts, SVG so a page can be
// printed and its drawing read): expectations (a live recording's Events) on top, then a lane per cluster (its health
// as a strip, its taints as bars below), then a lane per workload (the clusters it is on,
// with their replicas, and its eviction tasks from creation to retirement).

import * as echarts from "echarts/core";
import { CustomChart } from "echarts/charts";
import type { CustomSeriesOption } from "echarts/charts";
import { DataZoomComponent, GridComponent, TooltipComponent } from "echarts/components";
import type {
  DataZoomComponentOption,
  GridComponentOption,
  TooltipComponentOption,
} from "echarts/components";
import { SVGRenderer } from "echarts/renderers";
import type {
  CustomSeriesRenderItem,
  CustomSeriesRenderItemAPI,
  CustomSeriesRenderItemParams,
  CustomSeriesRenderItemReturn,
} from "echarts/types/dist/shared";
import type {
  ClusterLane,
  EventMark,
  Eviction,
  Recording,
  Taint,
  Verdict,
  WorkloadLane,
} from "./recording";

/** What an item draws: an element of the custom series (a group, rect, text...). */
type Drawn = Extract<CustomSeriesRenderItemReturn, { type: "group" }>["children"][number];

echarts.use([CustomChart, DataZoomComponent, GridComponent, TooltipComponent, SVGRenderer]);

type Option = echarts.ComposeOption<
  CustomSeriesOption | DataZoomComponentOption | GridComponentOption | TooltipComponentOption
>;

const LANE_HEIGHT = 56;
const LIVE_HORIZON = 1.04; // of the window: how far past now a live axis runs
const SLICE_HEIGHT = 15; // a workload's lane is tall enough for a readable slice per cluster
const MARKS = 11; // the top of a workload's lane, kept for its eviction tasks
const HEALTH = { True: "#2e9e4f", False: "#d64541", Unknown: "#9aa0a6" } as Record<string, string>;
const EFFECT = {
  NoExecute: "#b03a2e",
  NoSchedule: "#e67e22",
  NoSelect: "#e67e22",
  NoSelectIfNew: "#f0a04b",
  PreferNoSchedule: "#f4d03f",
  PreferNoSelect: "#f4d03f",
} as Record<string, string>;
const CLUSTER_COLORS = [
  "#4e79a7", "#76b7b2", "#b07aa1", "#9c755f", "#59a1c4",
  "#8cd17d", "#86bcb6", "#d4a6c8", "#a0cbe8", "#bab0ac",
];
const EVICTION = "#7d3c98";
const EVENT = { Normal: "#7f8c8d", Warning: HEALTH.False } as Record<string, string>;
export const LEGEND = {
  health: HEALTH,
  taints: EFFECT,
  eviction: EVICTION,
  expectations: { passed: HEALTH.True, failed: HEALTH.False },
  events: EVENT,
};

/** One drawn thing: where it is, and how to draw and describe it. */
interface Item {
  lane: number;
  start: number;
  end: number;
  draw(box: Box, api: CustomSeriesRenderItemAPI): Drawn;
  describe(when: When): string;
}

/** A time of the recording as a reader reads it. */
type When = (t: number) => string;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A Go-style duration: 100 -> "1m40s". */
export function duration(seconds: number): string {
  if (seconds === 0) return "0s";
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = +(seconds % 60).toFixed(3);
  return `${h ? `${h}h` : ""}${h || m ? `${m}m` : ""}${s || !(h || m) ? `${s}s` : ""}`;
}

/** The chart of a recording, drawn again when the recording changes (the live one). */
export class Timeline {
  readonly chart: echarts.ECharts;

  constructor(
    private readonly element: HTMLElement,
    recording: Recording,
    drawn: () => void = () => {},
  ) {
    this.chart = echarts.init(element, undefined, { renderer: "svg" });
    this.chart.on("finished", drawn);
    this.draw(recording);
  }

  draw(recording: Recording): void {
    const lanes: string[] = [];
    const items: Item[] = [];
    const lane = (name: string) => lanes.push(name) - 1;
    // A live recording has the hub's Events where a simulation has its expectations.
    if (recording.events) {
      const at = lane("events");
      // Warnings drawn last, over the Normal Events of the same moment.
      const warningsLast = [...recording.events].sort(
        (a, b) => Number(a.type === "Warning") - Number(b.type === "Warning"),
      );
      items.push(...warningsLast.map((e) => eventItem(e, at)));
    } else {
      const at = lane("expectations");
      items.push(...recording.expectations.map((v) => verdictItem(v, at)));
    }
    const colors = clusterColors(recording);
    const end = axisEnd(recording); // where what is still there ends
    for (const c of recording.clusters) items.push(...clusterItems(c, lane(c.name), end));
    for (const w of recording.workloads) items.push(...workloadItems(w, lane(w.name), end, colors));
    const height = `${lanes.length * laneHeight(recording) + 110}px`;
    if (this.element.style.height !== height) {
      this.element.style.height = height;
      this.chart.resize();
    }
    // Not merged: an object gone from the recording is gone from the drawing.
    this.chart.setOption(option(recording, lanes, items), { notMerge: true });
  }

  resize(): void {
    this.chart.resize();
  }
}

function option(recording: Recording, lanes: string[], items: Item[]): Option {
  const renderItem: CustomSeriesRenderItem = (params, api) =>
    items[params.dataIndex].draw(box(params, api, items[params.dataIndex]), api);
  // A live recording tells the time of day; a simulation counts from its start.
  const start = Date.parse(recording.start);
  const clock = (v: number, seconds: boolean) =>
    new Date(start + v * 1000).toLocaleTimeString([], {
      hour: "2-digit", minute: "2-digit", hourCycle: "h23", ...(seconds ? { second: "2-digit" } : {}),
    }); // prettier-ignore
  const label = recording.events ? (v: number) => clock(v, false) : duration;
  const when: When = recording.events ? (v) => clock(v, true) : duration;
  return {
    animation: false,
    grid: { left: 210, right: 30, top: 20, bottom: 70 },
    tooltip: {
      trigger: "item",
      formatter: (p) => items[(p as { dataIndex: number }).dataIndex].describe(when),
    },
    dataZoom: [
      { type: "inside", xAxisIndex: 0, filterMode: "weakFilter" },
      { type: "slider", xAxisIndex: 0, filterMode: "weakFilter", bottom: 10, height: 22 },
    ],
    xAxis: {
      type: "value",
      min: 0,
      max: axisEnd(recording),
      axisLabel: { formatter: label },
      splitLine: { lineStyle: { color: "#eee" } },
    },
    yAxis: {
      type: "category",
      data: lanes,
      inverse: true,
      axisTick: { show: false },
      splitLine: { show: true, lineStyle: { color: "#ddd" } },
      axisLabel: { width: 190, overflow: "truncate", fontSize: 12 },
    },
    series: [
      {
        type: "custom",
        renderItem,
        clip: true,
        encode: { x: [0, 1], y: 2 },
        data: items.map((item) => [item.start, item.end, item.lane]),
      },
    ],
  };
}

/** A simulation's axis ends where it ended; a live one a little past now, so that what
 * began a moment ago (a taint just added) is seen, running on to the edge. */
function axisEnd(recording: Recording): number {
  const end = Math.max(recording.end, 1);
  return recording.events ? end * LIVE_HORIZON : end;
}

/** The rectangle an item covers, on its lane, clipped to the plot when zoomed. */
function box(
  params: CustomSeriesRenderItemParams,
  api: CustomSeriesRenderItemAPI,
  item: Item,
): Box {
  const [x0, y] = api.coord([item.start, item.lane]);
  const [x1] = api.coord([item.end, item.lane]);
  const height = (api.size!([0, 1]) as number[])[1] * 0.84;
  const grid = params.coordSys as unknown as Box;
  const left = Math.max(x0, grid.x);
  const right = Math.min(x1, grid.x + grid.width);
  return { x: left, y: y - height / 2, width: Math.max(right - left, 0), height };
}

function laneHeight(recording: Recording): number {
  const widest = recording.workloads.flatMap((w) =>
    w.placements.map((p) => Object.keys(p.clusters).length),
  );
  return Math.max(LANE_HEIGHT, Math.max(0, ...widest) * SLICE_HEIGHT + MARKS + 10);
}

function clusterColors(recording: Recording): Map<string, string> {
  const names = recording.clusters.map((c) => c.name);
  for (const w of recording.workloads) {
    for (const p of w.placements) names.push(...Object.keys(p.clusters));
  }
  const colors = new Map<string, string>();
  for (const name of names) {
    if (!colors.has(name)) colors.set(name, CLUSTER_COLORS[colors.size % CLUSTER_COLORS.length]);
  }
  return colors;
}

function clusterItems(cluster: ClusterLane, lane: number, end: number): Item[] {
  const items: Item[] = cluster.health.map((h, i) => ({
    lane,
    start: h.at,
    end: cluster.health[i + 1]?.at ?? end,
    draw: (b) => ({
      type: "rect",
      shape: { x: b.x, y: b.y, width: b.width, height: b.height * 0.22 },
      style: { fill: HEALTH[h.status] ?? "#bbb" },
    }),
    describe: (when) =>
      `<b>${escapeHtml(cluster.kind)} ${escapeHtml(cluster.name)}</b><br>` +
      `${escapeHtml(healthCondition(cluster.kind))}=${escapeHtml(h.status)} ` +
      `(${escapeHtml(h.reason)})<br>from ${when(h.at)}`,
  }));
  const rows = taintRows(cluster.taints);
  const rowCount = Math.max(...rows, 0) + 1;
  cluster.taints.forEach((t, i) => {
    items.push({
      lane,
      start: t.start,
      end: t.end ?? end,
      draw: (b) => {
        const top = b.y + b.height * 0.3;
        const height = Math.min((b.height * 0.7) / rowCount, 16);
        const y = top + rows[i] * height;
        return bar({ ...b, y, height: height - 1 }, EFFECT[t.effect] ?? "#888", taintText(t));
      },
      describe: (when) =>
        `<b>taint ${escapeHtml(taintText(t))}</b> on ${escapeHtml(cluster.name)}<br>` +
        `added ${when(t.start)}, ${t.end === null ? "still there" : `removed ${when(t.end)}`}`,
    });
  });
  return items;
}

/** The condition a cluster's health is: Karmada's Ready, OCM's Available. */
export function healthCondition(kind: string): string {
  return kind === "ManagedCluster" ? "ManagedClusterConditionAvailable" : "Ready";
}

/** `key=value:Effect`, as kubectl writes a taint. */
export function taintText(t: Pick<Taint, "key" | "effect"> & { value?: string }): string {
  return `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`;
}

/** Rows for the taints of one cluster: those that do not overlap in time share a row. */
function taintRows(taints: Taint[]): number[] {
  const rowEnds: number[] = [];
  return taints.map((t) => {
    let row = rowEnds.findIndex((end) => end <= t.start);
    if (row < 0) row = rowEnds.push(0) - 1;
    rowEnds[row] = t.end ?? Infinity;
    return row;
  });
}

function bar(b: Box, fill: string, text: string): Drawn {
  return {
    type: "group",
    children: [
      { type: "rect", shape: { ...b }, style: { fill } },
      {
        type: "text",
        style: {
          text,
          x: b.x + 4,
          y: b.y + b.height / 2,
          width: Math.max(b.width - 8, 0),
          overflow: "truncate",
          ellipsis: "…",
          verticalAlign: "middle",
          fill: "#111",
          font: `${Math.min(Math.max(b.height - 3, 8), 12)}px sans-serif`,
        },
        invisible: b.width < 24,
      },
    ],
  };
}

function workloadItems(
  workload: WorkloadLane,
  lane: number,
  end: number,
  colors: Map<string, string>,
): Item[] {
  const items: Item[] = workload.placements.map((p, i) => {
    const clusters = Object.entries(p.clusters);
    const total = clusters.reduce((sum, [, n]) => sum + (n || 1), 0);
    return {
      lane,
      start: p.at,
      end: workload.placements[i + 1]?.at ?? end,
      draw: (lane) => {
        const b = { ...lane, y: lane.y + MARKS, height: lane.height - MARKS };
        if (!clusters.length) return bar(b, "#f2f2f2", "nowhere");
        let y = b.y;
        const slices = clusters.map(([name, n]) => {
          const height = (b.height * (n || 1)) / total;
          const slice = bar({ ...b, y, height: height - 1 }, colors.get(name)!, replicas(name, n));
          y += height;
          return slice;
        });
        return { type: "group", children: slices };
      },
      describe: (when) =>
        `<b>${escapeHtml(workload.name)}</b> from ${when(p.at)}<br>` +
        (clusters.length
          ? clusters.map(([name, n]) => escapeHtml(replicas(name, n))).join("<br>")
          : "on no cluster"),
    };
  });
  items.push(...workload.evictions.map((e) => evictionItem(workload, e, lane, end)));
  return items;
}

function replicas(cluster: string, n: number | null): string {
  return n === null ? cluster : `${cluster} ×${n}`;
}

/** A task from its creation (a triangle) to its retirement (a dot), above the lane. */
function evictionItem(workload: WorkloadLane, e: Eviction, lane: number, end: number): Item {
  return {
    lane,
    start: e.start,
    end: e.end ?? end,
    draw: (b, api) => {
      const y = b.y + MARKS - 2;
      const [x0] = api.coord([e.start, lane]);
      const [x1] = api.coord([e.end ?? end, lane]);
      const children: Drawn[] = [
        {
          type: "line",
          shape: { x1: x0, y1: y, x2: x1, y2: y },
          style: {
            stroke: EVICTION,
            fill: "none",
            lineWidth: 2,
            lineDash: e.end === null ? [4, 3] : undefined,
          },
        },
        {
          type: "polygon",
          shape: { points: [[x0 - 6, y - 9], [x0 + 6, y - 9], [x0, y]] },
          style: { fill: EVICTION },
        },
      ];
      if (e.end !== null) {
        children.push({ type: "circle", shape: { cx: x1, cy: y, r: 4.5 }, style: { fill: EVICTION } });
      }
      return { type: "group", children };
    },
    describe: (when) =>
      `<b>eviction task</b> of ${escapeHtml(workload.name)} from ${escapeHtml(e.cluster)}<br>` +
      `${escapeHtml(e.producer)}: ${escapeHtml(e.reason)}, purge ${escapeHtml(e.purgeMode)}<br>` +
      `created ${when(e.start)}, ` +
      (e.end === null ? "still waiting at the end" : `retired ${when(e.end)}`),
  };
}

/** A tick on the expectations lane: green when it passed, red when it failed. */
function verdictItem(v: Verdict, lane: number): Item {
  const color = v.passed ? HEALTH.True : HEALTH.False;
  return {
    lane,
    start: v.at,
    end: v.at,
    draw: (b, api) => {
      const [x] = api.coord([v.at, lane]);
      return tick(x, b, color);
    },
    describe: (when) =>
      `<b>${v.passed ? "PASS" : "FAIL"}</b> at ${when(v.at)}: ${escapeHtml(v.path)}<br>` +
      escapeHtml(`${v.query ? `${v.query} ` : ""}${v.check} ${JSON.stringify(v.expected)}`) +
      (v.passed ? "" : `<br>actual: ${escapeHtml(JSON.stringify(v.actual))}`),
  };
}

/** A mark at one instant: a line down the lane under a dot. */
function tick(x: number, b: Box, color: string): Drawn {
  return {
    type: "group",
    children: [
      {
        type: "line",
        shape: { x1: x, y1: b.y + 8, x2: x, y2: b.y + b.height },
        style: { stroke: color, fill: "none", lineWidth: 2 },
      },
      { type: "circle", shape: { cx: x, cy: b.y + 6, r: 5 }, style: { fill: color } },
    ],
  };
}

/** An Event on the events lane: grey when Normal, red when a Warning. */
function eventItem(e: EventMark, lane: number): Item {
  return {
    lane,
    start: e.at,
    end: e.at,
    draw: (b, api) => tick(api.coord([e.at, lane])[0], b, EVENT[e.type] ?? EVENT.Normal),
    describe: (when) =>
      `<b>${escapeHtml(e.type)} ${escapeHtml(e.reason)}</b> ${escapeHtml(e.object)}` +
      `${e.count > 1 ? ` (×${e.count})` : ""}, last at ${when(e.at)}<br>${escapeHtml(e.message)}`,
  };
}
