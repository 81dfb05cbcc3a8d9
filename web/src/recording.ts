// What a run did, as data: fleetwarden.sim.recording's Recording. Times are seconds since
// `start`. The simulation report draws it; the hub's live timeline will build the same
// shape from its watches.

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

export interface Recording {
  title: string;
  start: string;
  end: number;
  clusters: ClusterLane[];
  workloads: WorkloadLane[];
  expectations: Verdict[];
}
