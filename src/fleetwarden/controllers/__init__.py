"""Layer 5: the hub's reconcilers, grouped by dialect; `fleetwarden.hub` composes them."""
