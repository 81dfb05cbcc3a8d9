// Lists the hub's Karmada Clusters with @kubernetes/client-node (its entry point given in
// CLIENT_NODE), from the kubeconfig given: prints their names, one per line. Exits 1 with
// the error on any failure.
import { pathToFileURL } from "node:url";

const k8s = await import(pathToFileURL(process.env.CLIENT_NODE).href);
const config = new k8s.KubeConfig();
config.loadFromFile(process.argv[2]);
const api = config.makeApiClient(k8s.CustomObjectsApi);
try {
  const list = await api.listClusterCustomObject({
    group: "cluster.karmada.io",
    version: "v1alpha1",
    plural: "clusters",
  });
  for (const item of list.items) console.log(item.metadata.name);
} catch (error) {
  console.error(String(error));
  process.exit(1);
}
