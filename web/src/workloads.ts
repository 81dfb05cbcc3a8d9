// The workloads' tables: each resource template with its policy, its binding's clusters and
// replicas, aggregated health and eviction tasks in progress; OCM's Placements with their
// decisions and scores.

import type { K8sObject } from "./api";
import type { Collection } from "./collection";
import { age } from "./fleet";
import { element } from "./legend";
import type { Task } from "./live";

const POLICY = "propagationpolicy.karmada.io/name";
const CLUSTER_POLICY = "clusterpropagationpolicy.karmada.io/name";
const PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement";
// karmada-controller-manager's --graceful-eviction-timeout default: a task waits no longer.
const GRACEFUL_EVICTION_TIMEOUT = 600;

interface BindingSpec {
  resource: { kind: string; namespace?: string; name: string };
  clusters?: { name: string; replicas?: number }[];
  gracefulEvictionTasks?: {
    fromCluster: string;
    producer: string;
    reason: string;
    message?: string;
    purgeMode?: string;
    gracePeriodSeconds?: number;
    suppressDeletion?: boolean;
    creationTimestamp?: string;
  }[];
}

interface BindingStatus {
  aggregatedStatus?: { clusterName: string; health?: string }[];
}

export function workloadName(binding: K8sObject): string {
  const { kind, namespace, name } = (binding.spec as BindingSpec).resource;
  return `${kind} ${namespace ? `${namespace}/` : ""}${name}`;
}

export function bindingClusters(binding: K8sObject): Record<string, number | null> {
  const spec = binding.spec as BindingSpec;
  return Object.fromEntries((spec.clusters ?? []).map((c) => [c.name, c.replicas ?? null]));
}

export function bindingTasks(binding: K8sObject): Task[] {
  return ((binding.spec as BindingSpec).gracefulEvictionTasks ?? []).map((t) => ({
    cluster: t.fromCluster,
    producer: t.producer,
    reason: t.reason,
    purgeMode: t.purgeMode ?? "Gracefully",
    created: t.creationTimestamp,
  }));
}

function row(...cells: (string | Node)[]): HTMLElement {
  const tr = element("tr");
  for (const c of cells) {
    const td = element("td");
    td.append(c);
    tr.append(td);
  }
  return tr;
}

function health(binding: K8sObject): string {
  const statuses = (binding.status as BindingStatus | undefined)?.aggregatedStatus ?? [];
  if (!statuses.length) return "";
  const healthy = statuses.filter((s) => s.health === "Healthy").length;
  return `${healthy} of ${statuses.length} Healthy`;
}

/** Each task: from where, why, what it waits on, and when it expires. */
function tasks(binding: K8sObject, now: number): HTMLElement {
  const list = element("ul", "", "tasks");
  for (const t of (binding.spec as BindingSpec).gracefulEvictionTasks ?? []) {
    const created = t.creationTimestamp ? Date.parse(t.creationTimestamp) : now;
    const waiting = t.suppressDeletion
      ? "held (suppressDeletion)"
      : t.purgeMode === "Immediately" || t.purgeMode === "Directly"
        ? "purged at once"
        : "waiting for the new clusters' health";
    const grace = t.gracePeriodSeconds ?? GRACEFUL_EVICTION_TIMEOUT;
    const left = Math.round(created / 1000 + grace - now / 1000);
    const expiry = t.suppressDeletion ? "" : left > 0 ? `, expires in ${left}s` : ", expired";
    list.append(
      element(
        "li",
        `from ${t.fromCluster}: ${t.reason} (${t.producer}), ${age(t.creationTimestamp, now)} ago, ${waiting}${expiry}`,
      ),
    );
  }
  return list;
}

export function bindingRows(body: HTMLElement, bindings: Collection): void {
  const now = Date.now();
  body.replaceChildren(
    ...bindings.sorted().map((b) => {
      const annotations = b.metadata.annotations ?? {};
      const policy = annotations[POLICY] ?? annotations[CLUSTER_POLICY] ?? "";
      const clusters = Object.entries(bindingClusters(b))
        .map(([name, n]) => (n === null ? name : `${name} ×${n}`))
        .join(", ");
      const tr = row(workloadName(b), policy, clusters, health(b), tasks(b, now));
      tr.dataset.workload = workloadName(b);
      return tr;
    }),
  );
}

export function placementName(decision: K8sObject): string | undefined {
  const placement = decision.metadata.labels?.[PLACEMENT_LABEL];
  return placement && `Placement ${decision.metadata.namespace}/${placement}`;
}

/** The clusters each placement's decisions choose. */
export function decided(decisions: Collection): Map<string, string[]> {
  const chosen = new Map<string, string[]>();
  for (const d of decisions.sorted()) {
    const name = placementName(d);
    if (!name) continue;
    const status = d.status as { decisions?: { clusterName: string }[] } | undefined;
    chosen.set(name, [...(chosen.get(name) ?? []), ...(status?.decisions ?? []).map((x) => x.clusterName)]);
  }
  return chosen;
}

/** Each placement's last scores: OCM's scheduler tells them only in a ScoreUpdate Event on
 * the Placement (`cluster1:100 cluster2:0 `). */
function scores(events: Collection): Map<string, string> {
  const latest = new Map<string, [string, string]>();
  for (const e of events.objects.values()) {
    const about = (e.involvedObject ?? {}) as { kind?: string; namespace?: string; name?: string };
    if (about.kind !== "Placement" || e.reason !== "ScoreUpdate") continue;
    const name = `Placement ${about.namespace}/${about.name}`;
    const at = String(e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? "");
    const seen = latest.get(name);
    if (!seen || seen[0] <= at) latest.set(name, [at, String(e.message ?? "").trim()]);
  }
  return new Map([...latest].map(([name, [, text]]) => [name, text]));
}

export function placementRows(
  body: HTMLElement,
  placements: Collection,
  decisions: Collection,
  events: Collection,
): void {
  const chosen = decided(decisions);
  const scored = scores(events);
  body.replaceChildren(
    ...placements.sorted().map((p) => {
      const name = `Placement ${p.metadata.namespace}/${p.metadata.name}`;
      const status = p.status as
        | { numberOfSelectedClusters?: number; conditions?: { type: string; status: string; reason?: string }[] }
        | undefined;
      const satisfied = status?.conditions?.find((c) => c.type === "PlacementSatisfied");
      const tr = row(
        name,
        (chosen.get(name) ?? []).join(", "),
        String(status?.numberOfSelectedClusters ?? 0),
        scored.get(name) ?? "",
        satisfied ? `${satisfied.status} (${satisfied.reason ?? ""})` : "",
      );
      tr.dataset.placement = name;
      return tr;
    }),
  );
}
