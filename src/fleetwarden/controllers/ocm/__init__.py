"""Open Cluster Management's hub controllers, named and placed as in the registration hub
(pkg/registration/hub): managed cluster acceptance, lease monitoring, the built-in taints,
the add-on status labels and the cluster sets."""
