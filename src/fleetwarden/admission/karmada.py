"""Admission plugins for the karmada kinds."""

from fleetwarden.admission.chain import Plugin

PLUGINS: list[Plugin] = []
