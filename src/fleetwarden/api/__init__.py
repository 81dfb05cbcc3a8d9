"""Layer 1: typed API objects per group, and the kind registry."""
