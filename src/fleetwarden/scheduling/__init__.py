"""Layer 5: the schedulers, by dialect (`karmada/`: karmada-scheduler)."""
