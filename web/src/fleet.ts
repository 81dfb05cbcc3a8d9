// The fleet's table: every cluster of both dialects by region and zone, with its health,
// taints (effect and age; NoExecute stronger), cordon, lease age and resource usage, the
// regions' fleet-protection state where the hub keeps it, and a filter by label.

import type { K8sObject } from "./api";
import { type Action, matches, UNSCHEDULABLE } from "./actions";
import type { Collection } from "./collection";
import { element } from "./legend";
import { conditionOf, taintsOf, type ClusterTaint } from "./live";
import { healthCondition, taintText } from "./timeline";

export type Act = (action: Action, kind: string, name: string, taint?: ClusterTaint) => void;

/** `2m5s ago` style ages, at the page's clock. */
export function age(since: string | undefined, now: number): string {
  const t = since ? Date.parse(since) : NaN;
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** A label selector's equality and existence terms: `a=b,c!=d,e,!f`. */
export function selects(selector: string, labels: Record<string, string> = {}): boolean {
  return selector
    .split(",")
    .map((term) => term.trim())
    .filter(Boolean)
    .every((term) => {
      const [k, v] = term.split(/!?==?/, 2).map((s) => s.trim());
      if (term.startsWith("!")) return !(term.slice(1).trim() in labels);
      if (term.includes("!=")) return labels[k] !== v;
      if (term.includes("=")) return labels[k] === v;
      return k in labels;
    });
}

function cell(row: HTMLElement, content: string | Node, className = ""): HTMLElement {
  const td = element("td", "", className);
  td.append(content);
  row.append(td);
  return td;
}

function button(label: string, onClick: () => void, title = ""): HTMLButtonElement {
  const b = element("button", label) as HTMLButtonElement;
  b.type = "button";
  if (title) b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

interface Spec {
  region?: string;
  zone?: string;
  zones?: string[];
}

function where(kind: string, object: K8sObject): [string, string] {
  const spec = (object.spec ?? {}) as Spec;
  if (kind === "Cluster") return [spec.region ?? "", spec.zone ?? (spec.zones ?? []).join(",")];
  // OCM has no region field: the well-known topology labels say it, where set.
  const labels = object.metadata.labels ?? {};
  return [labels["topology.kubernetes.io/region"] ?? "", labels["topology.kubernetes.io/zone"] ?? ""];
}

type Quantities = Record<string, string>;

/** CPU and memory: what is allocated of what is allocatable (Karmada's resourceSummary), or
 * what OCM's status says is allocatable of the capacity. */
function usage(kind: string, object: K8sObject): string {
  const status = (object.status ?? {}) as {
    resourceSummary?: { allocatable?: Quantities; allocated?: Quantities };
    allocatable?: Quantities;
    capacity?: Quantities;
  };
  const [used, total] =
    kind === "Cluster"
      ? [status.resourceSummary?.allocated, status.resourceSummary?.allocatable]
      : [status.allocatable, status.capacity];
  if (!total) return "";
  return ["cpu", "memory"]
    .filter((r) => total[r] !== undefined)
    .map((r) => `${r} ${used?.[r] ?? "0"}/${total[r]}`)
    .join(", ");
}

function taintChip(kind: string, name: string, t: ClusterTaint, now: number, act: Act): HTMLElement {
  const chip = element("span", "", `taint effect-${t.effect}`);
  chip.dataset.taint = taintText(t);
  chip.append(element("span", taintText(t)));
  const since = age(t.timeAdded, now);
  if (since) chip.append(element("span", ` ${since}`, "age"));
  chip.append(button("×", () => act("untaint", kind, name, t), `remove ${taintText(t)}`));
  return chip;
}

export interface Leases {
  renewed(kind: string, name: string): string | undefined;
}

export function clusterRows(
  body: HTMLElement,
  collections: [string, Collection][],
  leases: Leases,
  filter: string,
  act: Act,
): void {
  const now = Date.now();
  // By region and zone, then by name: a region's clusters side by side.
  const place = ([kind, o]: [string, K8sObject]) => [...where(kind, o), o.metadata.name].join("\u0000");
  const clusters = collections
    .flatMap(([kind, c]) => c.sorted().map((o): [string, K8sObject] => [kind, o]))
    .filter(([, o]) => selects(filter, o.metadata.labels))
    .sort((a, b) => place(a).localeCompare(place(b)));
  body.replaceChildren(...clusters.map(([kind, object]) => clusterRow(kind, object, leases, now, act)));
}

function clusterRow(kind: string, object: K8sObject, leases: Leases, now: number, act: Act): HTMLElement {
  const name = object.metadata.name;
  const row = element("tr");
  row.dataset.cluster = name;
  row.dataset.kind = kind;
  cell(row, element("span", kind === "Cluster" ? "Karmada" : "OCM", "dialect"));
  cell(row, name, "name");
  const [region, zone] = where(kind, object);
  cell(row, region);
  cell(row, zone);
  const condition = conditionOf(object, healthCondition(kind));
  const status = condition?.status ?? "Unknown";
  const health = cell(row, `${status} ${age(condition?.lastTransitionTime, now)}`, `health health-${status}`);
  health.title = `${healthCondition(kind)}: ${condition?.reason ?? "no condition yet"}`;
  const taints = taintsOf(object);
  const chips = element("div", "", "taints");
  for (const t of taints) chips.append(taintChip(kind, name, t, now, act));
  cell(row, chips);
  const cordoned = kind === "Cluster" && taints.some((t) => matches(t, UNSCHEDULABLE));
  cell(row, kind === "Cluster" ? (cordoned ? "cordoned" : "") : "", "cordon");
  cell(row, age(leases.renewed(kind, name), now));
  cell(row, usage(kind, object));
  const actions = element("div", "", "actions");
  actions.append(button("Taint…", () => act("taint", kind, name)));
  if (kind === "Cluster") {
    actions.append(
      cordoned
        ? button("Uncordon", () => act("uncordon", kind, name))
        : button("Cordon", () => act("cordon", kind, name)),
    );
  }
  cell(row, actions);
  return row;
}

interface RegionWire {
  state: string;
  clusters: number;
  notReady: number;
  evictionPace: string;
  evictionRate: number;
}

/** Fleet protection's state per region: the ConfigMap karmada-system/cluster-region-status
 * the region-disruption controller writes (none while no region ever left Normal). */
export function regionsSummary(status: K8sObject | undefined): HTMLElement {
  const box = element("div", "", "regions");
  const text = (status?.data as Record<string, string> | undefined)?.status;
  if (!text) {
    box.append(element("p", "Fleet protection: every region Normal (no disruption recorded).", "quiet"));
    return box;
  }
  let wire: { hubDisruption: { disrupted: boolean }; regions: Record<string, RegionWire> };
  try {
    wire = JSON.parse(text);
  } catch {
    box.append(element("p", "Fleet protection: the status ConfigMap does not parse.", "error"));
    return box;
  }
  if (wire.hubDisruption?.disrupted) {
    box.append(element("p", "Every region is fully disrupted: evictions stopped.", "error"));
  }
  const list = element("ul");
  for (const [name, r] of Object.entries(wire.regions ?? {})) {
    const item = element(
      "li",
      `${name || "(no region)"}: ${r.state}, ${r.notReady} of ${r.clusters} not Ready; evictions ${r.evictionPace}`,
      `region region-${r.state}`,
    );
    item.dataset.region = name;
    list.append(item);
  }
  box.append(element("p", "Fleet protection, by region:", "quiet"), list);
  return box;
}
