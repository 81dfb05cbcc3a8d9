"""kube-controller-manager's service account controllers, as the hub runs them: the writer
of legacy tokens into token Secrets (tokens, upstream's serviceaccount-token controller)."""
