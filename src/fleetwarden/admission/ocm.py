"""Admission plugins for the ocm kinds."""

from fleetwarden.admission.chain import Plugin

PLUGINS: list[Plugin] = []
