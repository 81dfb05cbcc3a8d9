"""Client-side apply: upstream's three-way JSON merge patch cases, then apply on the hub."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetwarden.client import Client, apply
from fleetwarden.client.apply import (
    LAST_APPLIED_ANNOTATION,
    create_merge_patch,
    go_json,
    three_way_merge_patch,
    with_last_applied,
)
from fleetwarden.store.patch import merge_patch

from .conftest import cluster, deployment

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "three_way_merge_patch.yaml").read_text()
)["testCases"]


@pytest.mark.parametrize("case", CASES, ids=[c["description"] for c in CASES])
def test_three_way_merge_patch_as_apimachinery(case: dict[str, Any]) -> None:
    original, modified, current = (case.get(k) or {} for k in ("original", "modified", "current"))
    patch = three_way_merge_patch(original, modified, current)
    assert patch == (case.get("threeWay") or {})
    assert merge_patch(current, patch) == (case.get("result") or {})


def test_two_way_merge_patch_nulls_what_is_gone_and_keeps_equal_values_out() -> None:
    original = {"a": 1, "b": {"c": [1], "d": "x"}, "e": True}
    modified = {"a": 1, "b": {"c": [1, 2]}, "e": 1}
    assert create_merge_patch(original, modified) == {"b": {"c": [1, 2], "d": None}, "e": 1}


def test_the_annotation_is_the_manifest_as_kubectl_encodes_it() -> None:
    manifest = {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "x", "annotations": {LAST_APPLIED_ANNOTATION: "old"}},
        "data": {"html": "<b>&</b>", "ünï": "cödé"},
    }
    annotated = with_last_applied(manifest)
    assert annotated["metadata"]["annotations"][LAST_APPLIED_ANNOTATION] == (
        '{"apiVersion":"v1","data":{"html":"\\u003cb\\u003e\\u0026\\u003c/b\\u003e","ünï":"cödé"},'
        '"kind":"ConfigMap","metadata":{"name":"x"}}\n'
    )
    assert json.loads(go_json(manifest["data"])) == manifest["data"]


def test_apply_creates_then_leaves_alone_then_configures(client: Client) -> None:
    manifest = cluster(provider="aws", region="us-east-1")
    created = apply(client, manifest)
    assert created.operation == "created"
    last = json.loads(created.object["metadata"]["annotations"][LAST_APPLIED_ANNOTATION])
    assert last == manifest
    assert apply(client, manifest).operation == "unchanged"

    # Someone else (the taint command, a controller) sets a field the manifest never had.
    clusters = client.resolve("clusters")
    client.patch(
        clusters, "member1", "", {"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}
    )
    # The next manifest drops region and changes provider.
    changed = cluster(provider="gcp")
    configured = apply(client, changed)
    assert (configured.operation, configured.annotation_was_missing) == ("configured", False)
    spec = client.get(clusters, "member1")["spec"]
    assert spec["provider"] == "gcp"
    assert "region" not in spec
    assert spec["taints"] == [{"key": "k", "effect": "NoSchedule"}]


def test_apply_over_an_object_not_made_by_apply_says_so(client: Client) -> None:
    client.create(cluster(provider="aws"))
    applied = apply(client, cluster(provider="aws"))
    # Only the annotation is new: still a change, as kubectl reports it.
    assert (applied.operation, applied.annotation_was_missing) == ("configured", True)
    assert apply(client, cluster(provider="aws")).operation == "unchanged"


def test_apply_puts_a_namespaced_object_in_the_clients_namespace(client: Client) -> None:
    applied = apply(client, deployment("web"))
    assert applied.object["metadata"]["namespace"] == "default"
    last = json.loads(applied.object["metadata"]["annotations"][LAST_APPLIED_ANNOTATION])
    assert last["metadata"] == {"name": "web", "namespace": "default"}
