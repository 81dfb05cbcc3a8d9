"""Helpers to write scenarios inline."""

from typing import Any

import pytest

from fleetwarden.sim.runner import Report, Simulation
from fleetwarden.sim.scenario import parse

CLUSTER = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster"}


def scenario(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "fleetwarden.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "test"},
        "spec": spec,
    }


def run(doc: dict[str, Any]) -> Report:
    return Simulation(parse(doc, "test.yaml")).run()


def ready_of(name: str) -> dict[str, Any]:
    return {
        "object": {**CLUSTER, "name": name},
        "query": "status.conditions[?type=='Ready'] | [0].[status, reason]",
    }


@pytest.fixture
def results() -> Any:
    def outcomes(report: Report) -> list[tuple[str, bool, Any]]:
        return [(o.at, o.passed, o.actual) for o in report.outcomes]

    return outcomes
