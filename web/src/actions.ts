// What a user may do to a cluster from the page, as `fleetwarden taint|cordon|uncordon` do it
// (src/fleetwarden/cli/taint.py, cordon.py): read the cluster, edit its taints, write them
// back by a merge patch that carries the resourceVersion read (read again on a Conflict),
// with the user's own credentials, through the hub's admission. A refusal is the API's.

import { ApiError, type K8sObject, request } from "./api";
import { type ClusterTaint, taintsOf } from "./live";

export const CLUSTER_PATHS: Record<string, string> = {
  Cluster: "/apis/cluster.karmada.io/v1alpha1/clusters",
  ManagedCluster: "/apis/cluster.open-cluster-management.io/v1/managedclusters",
};
// karmadactl cordon's taint.
export const UNSCHEDULABLE: ClusterTaint = {
  key: "cluster.karmada.io/unschedulable",
  effect: "NoSchedule",
};
// The effects each dialect's admission takes (Karmada refuses PreferNoSchedule).
export const EFFECTS: Record<string, string[]> = {
  Cluster: ["NoSchedule", "NoExecute"],
  ManagedCluster: ["NoSelect", "PreferNoSelect", "NoSelectIfNew"],
};
const RETRIES = 5;

export type Action = "taint" | "untaint" | "cordon" | "uncordon";

export class Refusal extends Error {}

/** Taint.MatchTaint: the same key and effect. */
export function matches(a: ClusterTaint, b: ClusterTaint): boolean {
  return a.key === b.key && a.effect === b.effect;
}

/** One read-edit-write of a cluster's taints, again after a Conflict. `edit` returns the new
 * taints, or throws a Refusal (a taint already there, say). */
export async function editTaints(
  kind: string,
  name: string,
  edit: (taints: ClusterTaint[]) => ClusterTaint[],
): Promise<void> {
  const path = `${CLUSTER_PATHS[kind]}/${encodeURIComponent(name)}`;
  for (let attempt = 1; ; attempt++) {
    const cluster = await request<K8sObject>("GET", path);
    const patch = {
      metadata: { resourceVersion: cluster.metadata.resourceVersion },
      spec: { taints: edit(taintsOf(cluster)) },
    };
    try {
      await request("PATCH", path, patch, "application/merge-patch+json");
      return;
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 409) || attempt === RETRIES) throw error;
    }
  }
}

export function addTaint(taint: ClusterTaint): (taints: ClusterTaint[]) => ClusterTaint[] {
  return (taints) => {
    if (taints.some((t) => matches(t, taint))) {
      throw new Refusal(`the cluster already has the taint ${taint.key}:${taint.effect}`);
    }
    return [...taints, taint];
  };
}

export function removeTaint(taint: ClusterTaint): (taints: ClusterTaint[]) => ClusterTaint[] {
  return (taints) => {
    if (!taints.some((t) => matches(t, taint))) {
      throw new Refusal(`the cluster has no taint ${taint.key}:${taint.effect}`);
    }
    return taints.filter((t) => !matches(t, taint));
  };
}
