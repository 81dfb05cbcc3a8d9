"""A scenario's v1alpha1 ResourceBinding (upstream's artifacts/example/binding.yaml): stored
as v1alpha2, rendered into Works by the binding controller, and read back at either
version by expectations."""

from __future__ import annotations

from pathlib import Path

import yaml

from .conftest import CLUSTER, run, scenario

EXAMPLE = Path(__file__).parents[1] / "data" / "karmada" / "example-binding.yaml"
NGINX = Path(__file__).parents[1] / "data" / "karmada" / "nginx-deployment.yaml"


def test_a_v1alpha1_binding_is_rendered_into_works() -> None:
    members = {name: {} for name in ("cluster1", "cluster2", "cluster3")}
    clusters = [
        {**CLUSTER, "metadata": {"name": name},
         "spec": {"syncMode": "Push", "apiEndpoint": f"https://{name}.example:6443"}}
        for name in members
    ]  # fmt: skip
    binding = {"apiVersion": "work.karmada.io/v1alpha1", "kind": "ResourceBinding",
               "namespace": "default", "name": "binding-foo"}  # fmt: skip
    report = run(
        scenario(
            members=members,
            objects=[
                *clusters,
                yaml.safe_load(NGINX.read_text()),
                yaml.safe_load(EXAMPLE.read_text()),
            ],
            until="10s",
            expect=[
                {
                    "object": binding,
                    "query": "[apiVersion, spec.clusters[].name]",
                    "equals": ["work.karmada.io/v1alpha1", ["cluster1", "cluster3"]],
                },
                {
                    "object": {**binding, "apiVersion": "work.karmada.io/v1alpha2"},
                    "query": "apiVersion",
                    "equals": "work.karmada.io/v1alpha2",
                },
                {
                    "list": {"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work"},
                    "query": "[].metadata.namespace",
                    "equals": ["karmada-es-cluster1", "karmada-es-cluster3"],
                },
            ],
        )
    )
    assert [(o.passed, o.actual) for o in report.outcomes] == [
        (True, ["work.karmada.io/v1alpha1", ["cluster1", "cluster3"]]),
        (True, "work.karmada.io/v1alpha2"),
        (True, ["karmada-es-cluster1", "karmada-es-cluster3"]),
    ]
