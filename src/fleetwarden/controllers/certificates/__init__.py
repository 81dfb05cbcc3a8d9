"""kube-controller-manager's certificate controllers, as the hub runs them: the signer of
approved client CertificateSigningRequests, and the cleaner of expired bootstrap tokens
(token_cleaner, upstream's tokencleaner)."""
