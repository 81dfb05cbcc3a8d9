// What a run did, as data: fleetwarden.sim.recording's Recording. Times are seconds since
// `start`. The simulation report draws it; the hub's live timeline (live.ts) builds the same
// shape from its watches, with the hub's Events where a run has its expectations.

export interface Health {
  at: number;
  status: string; // "True", "False", "Unknown"
  reason: string;
}

export interface Taint {
  key: string;
  value: string;
  effect: string;
  start: number;
  end: number | null; // null: still there at the end
}

export interface ClusterLane {
  name: string;
  kind: string; // Cluster (Karmada) or ManagedCluster (OCM)
  health: Health[];
  taints: Taint[];
}

export interface Placement {
  at: number;
  clusters: Record<string, number | null>; // replicas; null where not counted (OCM)
}

export interface Eviction {
  cluster: string;
  producer: string;
  reason: string;
  purgeMode: string;
  start: number;
  end: number | null; // null: still waiting at the end
}

export interface WorkloadLane {
  name: string;
  placements: Placement[];
  evictions: Eviction[];
}

export interface Verdict {
  at: number;
  path: string;
  passed: boolean;
  check: string;
  query: string | null;
  expected: unknown;
  actual: unknown;
}

/** An Event of the hub (live only): when it was last seen, and about what. */
export interface EventMark {
  at: number;
  type: string; // Normal or Warning
  reason: string;
  object: string; // the involved object: "Cluster member1"
  message: string;
  count: number;
}

export interface Recording {
  title: string;
  start: string;
  end: number;
  clusters: ClusterLane[];
  workloads: WorkloadLane[];
  expectations: Verdict[];
  events?: EventMark[]; // a live recording's; its time axis counts back from `end`
}
