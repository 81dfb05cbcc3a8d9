"""Layer 6: `fleetwarden simulate`, scenarios run on a virtual clock."""
