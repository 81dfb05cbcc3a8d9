// The hub's live recording: the shape a simulation records (recording.ts), built in the
// browser from the dashboard's watches, so that the live timeline and `simulate --html`
// draw with one renderer (timeline.ts). Each change a watch brings is compared with what
// was seen before: a taint that appears starts a bar, one that goes ends it; so do eviction
// tasks, health and placements. What happened before the page opened is known only as far
// as objects say it (a taint's timeAdded, a condition's lastTransitionTime, a task's
// creationTimestamp).

import type { K8sObject } from "./api";
import type { ClusterLane, EventMark, Eviction, Recording, WorkloadLane } from "./recording";
import { healthCondition } from "./timeline";

export const WINDOW = 3600; // seconds: the last hour

interface Condition {
  type: string;
  status: string;
  reason?: string;
  lastTransitionTime?: string;
}

export interface ClusterTaint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

/** An eviction task as a binding carries it. */
export interface Task {
  cluster: string;
  producer: string;
  reason: string;
  purgeMode: string;
  created?: string;
}


function time(text: string | undefined, otherwise: number): number {
  const parsed = text ? Date.parse(text) : NaN;
  return Number.isNaN(parsed) ? otherwise : parsed;
}

export function conditionOf(object: K8sObject, type: string): Condition | undefined {
  const status = object.status as { conditions?: Condition[] } | undefined;
  return status?.conditions?.find((c) => c.type === type);
}

export function taintsOf(object: K8sObject): ClusterTaint[] {
  return ((object.spec as { taints?: ClusterTaint[] } | undefined)?.taints ?? []).slice();
}

function sameTaint(a: { key: string; value?: string; effect: string }, b: ClusterTaint): boolean {
  return a.key === b.key && (a.value ?? "") === (b.value ?? "") && a.effect === b.effect;
}

function sameClusters(a: Record<string, number | null>, b: Record<string, number | null>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => k in b && a[k] === b[k]);
}

/** The lanes in recording.ts's shapes, with times in epoch milliseconds until a recording
 * is cut from them. */
export class LiveRecording {
  private readonly clusters = new Map<string, ClusterLane>();
  private readonly workloads = new Map<string, WorkloadLane>();
  private readonly events = new Map<string, EventMark & { at: number }>();
  /** When the page started watching: what was there already began no later. */
  private readonly opened = Date.now();

  /** A cluster as listed or watched: its health and taints compared with the last seen. */
  cluster(kind: string, object: K8sObject, now = Date.now()): void {
    const name = object.metadata.name;
    const key = `${kind}/${name}`;
    let lane = this.clusters.get(key);
    // Taints on a cluster first seen were added before: when, only a NoExecute one says
    // (timeAdded); the others no earlier than the cluster itself.
    const before = lane ? now : Math.max(now - WINDOW * 1000, time(object.metadata.creationTimestamp, 0));
    if (!lane) this.clusters.set(key, (lane = { kind, name, health: [], taints: [] }));
    const condition = conditionOf(object, healthCondition(kind));
    const status = condition?.status ?? "Unknown";
    const last = lane.health.at(-1);
    if (!last || last.status !== status) {
      const at = last ? now : time(condition?.lastTransitionTime, this.opened);
      lane.health.push({ at, status, reason: condition?.reason ?? "" });
    }
    const current = taintsOf(object);
    for (const bar of lane.taints) {
      if (bar.end === null && !current.some((t) => sameTaint(bar, t))) bar.end = now;
    }
    for (const t of current) {
      if (lane.taints.some((bar) => bar.end === null && sameTaint(bar, t))) continue;
      const start = time(t.timeAdded, before);
      lane.taints.push({ key: t.key, value: t.value ?? "", effect: t.effect, start, end: null });
    }
  }

  clusterGone(kind: string, name: string): void {
    this.clusters.delete(`${kind}/${name}`);
  }

  /** A workload's clusters now (a change starts a new placement) and its eviction tasks. */
  workload(
    name: string,
    clusters: Record<string, number | null>,
    tasks: Task[],
    now = Date.now(),
  ): void {
    let lane = this.workloads.get(name);
    if (!lane) this.workloads.set(name, (lane = { name, placements: [], evictions: [] }));
    const last = lane.placements.at(-1);
    if (!last || !sameClusters(last.clusters, clusters)) lane.placements.push({ at: now, clusters });
    const same = (a: Eviction, b: Task) =>
      a.cluster === b.cluster && a.producer === b.producer && a.reason === b.reason;
    for (const eviction of lane.evictions) {
      if (eviction.end === null && !tasks.some((t) => same(eviction, t))) eviction.end = now;
    }
    for (const { created, ...task } of tasks) {
      if (lane.evictions.some((e) => e.end === null && same(e, task))) continue;
      lane.evictions.push({ ...task, start: time(created, now), end: null });
    }
  }

  workloadGone(name: string): void {
    this.workloads.delete(name);
  }

  event(key: string, mark: Omit<EventMark, "at">, at: string | undefined): void {
    this.events.set(key, { ...mark, at: time(at, Date.now()) });
  }

  eventGone(key: string): void {
    this.events.delete(key);
  }

  /** What has been recorded, as text: the same as long as nothing changed. */
  fingerprint(): string {
    return JSON.stringify([[...this.clusters], [...this.workloads], [...this.events]]);
  }

  /** The last hour, as a recording: times in seconds from its start, cut to the window. */
  recording(now = Date.now()): Recording {
    const start = now - WINDOW * 1000;
    const at = (ms: number) => Math.max(0, (ms - start) / 1000);
    const until = (ms: number | null) => (ms === null ? null : at(ms));
    const lanes = [...this.clusters.values()].sort((a, b) => a.name.localeCompare(b.name));
    const clusters: ClusterLane[] = lanes.map((c) => ({
      name: c.name,
      kind: c.kind,
      health: c.health.map((h) => ({ ...h, at: at(h.at) })),
      taints: c.taints
        .filter((t) => t.end === null || t.end > start)
        .map((t) => ({ ...t, start: at(t.start), end: until(t.end) })),
    }));
    const workloads: WorkloadLane[] = [...this.workloads.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((w) => ({
        name: w.name,
        placements: w.placements.map((p) => ({ ...p, at: at(p.at) })),
        evictions: w.evictions
          .filter((e) => e.end === null || e.end > start)
          .map((e) => ({ ...e, start: at(e.start), end: until(e.end) })),
      }));
    const events = [...this.events.values()]
      .filter((e) => e.at > start)
      .sort((a, b) => a.at - b.at)
      .map((e) => ({ ...e, at: at(e.at) }));
    return {
      title: "the last hour",
      start: new Date(start).toISOString(),
      end: WINDOW,
      clusters,
      workloads,
      expectations: [],
      events,
    };
  }
}
