"""OpenShift's machine API inside a simulated member: a MachineSet
(machine.openshift.io/v1beta1) keeps `spec.replicas` Machines, each of which becomes a node
carrying the labels and taints of the MachineSet's `spec.template.spec` as they were when
the machine was made (seed 001: a changed template reaches nodes only through new
machines, so one scales the set to zero and back). Scaling down removes the newest
machines first (deletePolicy Newest; OpenShift's default, Random, is not deterministic).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fleetwarden.api.core import Taint
from fleetwarden.members.inside.nodes import NodeSpec

MACHINE_API_VERSION = "machine.openshift.io/v1beta1"
MACHINE_NAMESPACE = "openshift-machine-api"


@dataclass(frozen=True)
class MachineSetSpec:
    name: str
    replicas: int
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]


def scale(
    nodes: Sequence[NodeSpec], made: int, machine_set: MachineSetSpec
) -> tuple[list[NodeSpec], int]:
    """The member's nodes once the MachineSet has its replicas, and how many machines it
    has made in all (new machines are named after that count)."""
    own = [n for n in nodes if n.machine_set == machine_set.name]
    others = [n for n in nodes if n.machine_set != machine_set.name]
    keep = own[: machine_set.replicas]
    for ordinal in range(made, made + machine_set.replicas - len(keep)):
        keep.append(NodeSpec(
            f"{machine_set.name}-{ordinal}", dict(machine_set.labels), machine_set.taints,
            machine_set=machine_set.name,
        ))  # fmt: skip
    return others + keep, made + max(machine_set.replicas - len(own), 0)
