"""Karmada API groups: cluster.karmada.io, policy.karmada.io, work.karmada.io."""

from fleetwarden.api.kinds import KindInfo

KINDS: list[KindInfo] = []
