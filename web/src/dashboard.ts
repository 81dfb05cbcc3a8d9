// The hub's dashboard, served at `/` by `fleetwarden up`. The page carries no data: after
// sign-in (a bearer token, or the browser's client certificate) it lists and watches the
// fleet through the Kubernetes API with the user's own rights, draws the last hour with the
// renderer of `simulate --html` (timeline.ts) from a live recording (live.ts), and taints,
// untaints, cordons and uncordons clusters after a confirmation (actions.ts).

import "./report.css";
import "./dashboard.css";
import { type ApiError, type K8sObject, session, whoami } from "./api";
import {
  type Action,
  addTaint,
  editTaints,
  EFFECTS,
  Refusal,
  removeTaint,
  UNSCHEDULABLE,
} from "./actions";
import { type Change, Collection, key } from "./collection";
import { type Act, clusterRows, regionsSummary } from "./fleet";
import { element, legend } from "./legend";
import { LiveRecording, type ClusterTaint } from "./live";
import { taintText, Timeline } from "./timeline";
import { bindingClusters, bindingRows, bindingTasks, decided, placementRows, workloadName } from "./workloads";

const root = document.getElementById("fleetwarden-dashboard")!;
// The fleet-protection status the region-disruption controller keeps.
const REGION_STATUS = ["karmada-system", "cluster-region-status"];
// The Web Lock a tab holds while its dashboard watches the hub.
const TAB_LOCK = "fleetwarden-dashboard";
// How often ages and the timeline's window move on, and leases are listed again.
const TICK = 5000;
// How far the timeline's window moves on at least (a drawing closes its tooltip).
const WINDOW_STEP = 30_000;

function signInForm(problem = ""): void {
  const form = element("form", "", "signin") as HTMLFormElement;
  const token = element("input") as HTMLInputElement;
  Object.assign(token, { type: "password", name: "token", placeholder: "bearer token", autocomplete: "off" });
  token.setAttribute("aria-label", "bearer token");
  const withToken = element("button", "Sign in with the token") as HTMLButtonElement;
  withToken.type = "submit";
  const withCertificate = element("button", "Sign in with my client certificate") as HTMLButtonElement;
  withCertificate.type = "button";
  form.append(token, withToken, withCertificate);
  const start = (value: string | null) => {
    session.signIn(value);
    void open();
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (token.value.trim()) start(token.value.trim());
  });
  withCertificate.addEventListener("click", () => start(null));
  root.replaceChildren(element("h1", "fleetwarden"), element("p", "Sign in to the hub.", "summary"), form);
  if (problem) root.append(element("p", problem, "error"));
}

async function open(): Promise<void> {
  let user: string;
  try {
    user = await whoami();
  } catch (error) {
    session.signOut();
    signInForm(`Sign-in refused: ${(error as Error).message}`);
    return;
  }
  await oneTabAtATime(user, () => new Dashboard(user).start());
}

/** Runs `start` while this tab holds the browser's lock on the dashboard. A browser keeps
 * six HTTP/1.1 connections to a host, and a tab's watches hold five: a second tab would
 * wait for a connection with nothing said. It says why it waits, and takes over when the
 * other tab closes. */
async function oneTabAtATime(user: string, start: () => void): Promise<void> {
  const holding = () => {
    start();
    return new Promise<never>(() => {}); // held as long as the tab is open
  };
  const got = await navigator.locks.request(TAB_LOCK, { ifAvailable: true }, (lock) =>
    lock ? holding() : null,
  );
  if (got !== null) return;
  root.replaceChildren(
    element("h1", "fleetwarden"),
    element(
      "p",
      `Signed in as ${user}. The dashboard is open in another tab of this browser: it ` +
        "starts here when that tab closes (a browser keeps six connections to the hub, and " +
        "a dashboard's watches hold five).",
      "summary waiting",
    ),
  );
  await navigator.locks.request(TAB_LOCK, holding);
}

function section(title: string, ...content: Node[]): HTMLElement {
  const s = element("section");
  s.append(element("h2", title), ...content);
  return s;
}

function table(headings: string[], className: string): [HTMLElement, HTMLElement] {
  const t = element("table", "", className);
  const head = element("tr");
  for (const h of headings) head.append(element("th", h));
  const thead = element("thead");
  thead.append(head);
  const body = element("tbody");
  t.append(thead, body);
  return [t, body];
}

class Dashboard {
  private readonly clusters = new Collection("Cluster", "/apis/cluster.karmada.io/v1alpha1/clusters");
  private readonly managedClusters = new Collection(
    "ManagedCluster",
    "/apis/cluster.open-cluster-management.io/v1/managedclusters",
  );
  private readonly bindings = new Collection("ResourceBinding", "/apis/work.karmada.io/v1alpha2/resourcebindings");
  private readonly placements = new Collection("Placement", "/apis/cluster.open-cluster-management.io/v1beta1/placements");
  private readonly decisions = new Collection(
    "PlacementDecision",
    "/apis/cluster.open-cluster-management.io/v1beta1/placementdecisions",
  );
  private readonly events = new Collection("Event", "/api/v1/events");
  private readonly leases = new Collection("Lease", "/apis/coordination.k8s.io/v1/leases");
  private readonly regions = new Collection(
    "ConfigMap",
    `/api/v1/namespaces/${REGION_STATUS[0]}/configmaps`,
    `fieldSelector=metadata.name%3D${REGION_STATUS[1]}`,
  );
  private readonly live = new LiveRecording();
  private readonly filter = element("input") as HTMLInputElement;
  private readonly clusterBody: HTMLElement;
  private readonly bindingBody: HTMLElement;
  private readonly placementBody: HTMLElement;
  private readonly regionBox = element("div");
  private readonly refusals = element("ul", "", "refusals");
  private readonly dialog = element("dialog") as HTMLDialogElement;
  private readonly chart = element("div", "", "timeline");
  private timeline: Timeline | null = null;
  private drawn = { fingerprint: "", at: 0 };
  private pending = false;

  constructor(private readonly user: string) {
    const [clusterTable, clusterBody] = table(
      ["", "Cluster", "Region", "Zone", "Ready / Available", "Taints", "Cordoned", "Lease", "Usage", ""],
      "clusters",
    );
    const [bindingTable, bindingBody] = table(
      ["Resource", "Policy", "Clusters", "Health", "Eviction tasks"],
      "bindings",
    );
    const [placementTable, placementBody] = table(
      ["Placement", "Decisions", "Selected", "Scores", "Satisfied"],
      "placements",
    );
    this.clusterBody = clusterBody;
    this.bindingBody = bindingBody;
    this.placementBody = placementBody;
    Object.assign(this.filter, { type: "search", placeholder: "filter by label: region=eu,!canary" });
    this.filter.setAttribute("aria-label", "label selector");
    this.filter.addEventListener("input", () => this.redraw());
    const signOut = element("button", "Sign out") as HTMLButtonElement;
    signOut.addEventListener("click", () => {
      session.signOut();
      location.reload();
    });
    const who = element("p", `Signed in as ${user}. `, "summary whoami");
    who.append(signOut);
    root.replaceChildren(
      element("h1", "fleetwarden"),
      who,
      this.refusals,
      section("Fleet", this.regionBox, this.filter, clusterTable),
      section("Workloads", bindingTable, placementTable),
      section("The last hour", legend("live"), this.chart),
      this.dialog,
    );
  }

  start(): void {
    const drawn = () => this.redraw();
    this.clusters.listen((change, o) => this.cluster("Cluster", change, o));
    this.managedClusters.listen((change, o) => this.cluster("ManagedCluster", change, o));
    this.bindings.listen((change, o) => {
      if (change === "DELETED") this.live.workloadGone(workloadName(o));
      else this.live.workload(workloadName(o), bindingClusters(o), bindingTasks(o));
    });
    this.decisions.listen(() => {
      for (const [name, chosen] of decided(this.decisions)) {
        this.live.workload(name, Object.fromEntries(chosen.map((c) => [c, null])), []);
      }
    });
    this.events.listen((change, o) => this.event(change, o));
    // What is not watched is listed again when an Event or a decision says it changed
    // (the region-disruption controller reports each change of its status by an Event),
    // and leases, which renew every few seconds without one, on the clock's tick.
    this.events.listen((change, o) => {
      const involved = (o.involvedObject ?? {}) as { kind?: string; name?: string };
      if (change === "LISTED" || change === "DELETED") return;
      if (involved.kind === "ConfigMap" && involved.name === REGION_STATUS[1]) this.regions.refresh(drawn);
      if (involved.kind === "Placement") this.placements.refresh(drawn);
    });
    this.decisions.listen(() => this.placements.refresh(drawn));
    for (const c of [this.clusters, this.managedClusters, this.bindings, this.decisions, this.events]) {
      c.watch(drawn);
    }
    for (const c of [this.placements, this.leases, this.regions]) c.refresh(drawn);
    setInterval(() => {
      this.leases.refresh(drawn);
      drawn();
    }, TICK);
    window.addEventListener("resize", () => this.timeline?.resize());
  }

  private collections(): Collection[] {
    return [
      this.clusters, this.managedClusters, this.bindings, this.placements,
      this.decisions, this.events, this.leases, this.regions,
    ]; // prettier-ignore
  }

  private cluster(kind: string, change: Change, object: K8sObject): void {
    if (change === "DELETED") this.live.clusterGone(kind, object.metadata.name);
    else this.live.cluster(kind, object);
  }

  private event(change: Change, e: K8sObject): void {
    if (change === "DELETED") {
      this.live.eventGone(key(e));
      return;
    }
    const involved = (e.involvedObject ?? {}) as { kind?: string; name?: string };
    const at = (e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp) as string | undefined;
    this.live.event(
      key(e),
      {
        type: String(e.type ?? "Normal"),
        reason: String(e.reason ?? ""),
        object: `${involved.kind ?? ""} ${involved.name ?? ""}`.trim(),
        message: String(e.message ?? ""),
        count: Number(e.count ?? 1),
      },
      at,
    );
  }

  /** Draws again once per frame, however many changes came in it. */
  private redraw(): void {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.draw();
    });
  }

  private draw(): void {
    const act: Act = (action, kind, name, taint) => this.confirm(action, kind, name, taint);
    const leases = {
      renewed: (kind: string, name: string) => {
        const lease =
          kind === "Cluster"
            ? this.leases.objects.get(`karmada-cluster/${name}`)
            : this.leases.objects.get(`${name}/managed-cluster-lease`);
        return (lease?.spec as { renewTime?: string } | undefined)?.renewTime;
      },
    };
    const clusterKinds: [string, Collection][] = [
      ["Cluster", this.clusters],
      ["ManagedCluster", this.managedClusters],
    ];
    clusterRows(this.clusterBody, clusterKinds, leases, this.filter.value, act);
    bindingRows(this.bindingBody, this.bindings);
    placementRows(this.placementBody, this.placements, this.decisions, this.events);
    this.regionBox.replaceChildren(regionsSummary(this.regions.objects.get(REGION_STATUS.join("/"))));
    this.refusals.replaceChildren(
      ...this.collections()
        .filter((c) => c.refusal)
        .map((c) => element("li", `${c.kind}s: ${(c.refusal as ApiError).message}`)),
    );
    this.drawTimeline();
  }

  /** The timeline again when the recording changed, or its window has moved on a step: a
   * drawing closes the tooltip a reader may be reading, so not on every status update. */
  private drawTimeline(): void {
    const fingerprint = this.live.fingerprint();
    const now = Date.now();
    if (fingerprint === this.drawn.fingerprint && now - this.drawn.at < WINDOW_STEP) return;
    this.drawn = { fingerprint, at: now };
    const recording = this.live.recording(now);
    if (this.timeline) this.timeline.draw(recording);
    else {
      this.timeline = new Timeline(this.chart, recording, () => {
        document.documentElement.dataset.drawn = "true";
      });
    }
  }

  /** The confirmation of an action, and its outcome (the API's refusal, word for word). */
  private confirm(action: Action, kind: string, name: string, taint?: ClusterTaint): void {
    const form = element("form") as HTMLFormElement;
    const problem = element("p", "", "error");
    const [fields, entered] = action === "taint" ? taintFields(kind) : [element("div"), null];
    const chosen = (): ClusterTaint => entered?.() ?? taint ?? UNSCHEDULABLE;
    const ok = element("button", "Confirm") as HTMLButtonElement;
    ok.type = "submit";
    const cancel = element("button", "Cancel") as HTMLButtonElement;
    cancel.type = "button";
    cancel.addEventListener("click", () => this.dialog.close());
    const buttons = element("div", "", "buttons");
    buttons.append(ok, cancel);
    const who = element("p", `as ${this.user}, through the hub's admission`, "quiet");
    form.append(element("p", described(action, kind, name, taint)), fields, who, problem, buttons);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      ok.disabled = true;
      const edit = action === "taint" || action === "cordon" ? addTaint(chosen()) : removeTaint(chosen());
      editTaints(kind, name, edit)
        .then(() => this.dialog.close())
        .catch((error: Error) => {
          problem.textContent = error instanceof Refusal ? error.message : `Error from server: ${error.message}`;
          ok.disabled = false;
        });
    });
    this.dialog.replaceChildren(form);
    this.dialog.showModal();
  }
}

function described(action: Action, kind: string, name: string, taint?: ClusterTaint): string {
  if (action === "taint") return `Add a taint to ${kind} ${name}`;
  if (action === "untaint") return `Remove the taint ${taintText(taint!)} from ${kind} ${name}`;
  return `${action === "cordon" ? "Cordon" : "Uncordon"} ${kind} ${name} (${taintText(UNSCHEDULABLE)})`;
}

/** The key, value and effect of a new taint (the effects the cluster's dialect takes). */
function taintFields(kind: string): [HTMLElement, () => ClusterTaint] {
  const input = (label: string) => {
    const i = element("input") as HTMLInputElement;
    Object.assign(i, { name: label, placeholder: label, required: label === "key" });
    i.setAttribute("aria-label", label);
    return i;
  };
  const key = input("key");
  const value = input("value");
  const effect = element("select") as HTMLSelectElement;
  effect.name = "effect";
  effect.setAttribute("aria-label", "effect");
  for (const e of EFFECTS[kind]) effect.append(new Option(e, e));
  const fields = element("div", "", "fields");
  fields.append(key, value, effect);
  const v = () => value.value.trim();
  return [fields, () => ({ key: key.value.trim(), ...(v() ? { value: v() } : {}), effect: effect.value })];
}

if (session.active()) void open();
else signInForm();
