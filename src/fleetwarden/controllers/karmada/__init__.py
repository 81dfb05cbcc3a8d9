"""Karmada's controllers, named and placed as in karmada-controller-manager."""
