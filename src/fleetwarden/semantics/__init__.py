"""Layer 2: pure rules, no I/O and no clock."""
