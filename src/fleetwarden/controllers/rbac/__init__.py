"""Kubernetes' RBAC controllers, as the hub runs them: the bootstrap policy kept at start,
and ClusterRoles with an aggregationRule filled from the roles they select."""
