"""Every YAML example of the five seed documents, decoded and admitted as upstream would.

tests/data/seeds/MANIFEST.yaml lists the whole objects and what upstream admission does with
each; fragments.yaml holds the partial examples (a Pod's tolerations, one Cluster taint, ...).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetwarden.admission import AdmissionConfig, default_chain
from fleetwarden.api import core
from fleetwarden.api.errors import Invalid
from fleetwarden.api.registry import decode

SEEDS = Path(__file__).parent / "data" / "seeds"
NOW = datetime(2025, 1, 1, tzinfo=UTC)
MANIFEST: list[dict[str, Any]] = yaml.safe_load((SEEDS / "MANIFEST.yaml").read_text())
# Shell commands have no path: they are recorded, not decoded.
FRAGMENTS = [f for f in yaml.safe_load((SEEDS / "fragments.yaml").read_text()) if "path" in f]
NO_EXECUTE = [e for e in MANIFEST if e.get("admitted_with") == "allow_no_execute_taint_policy"]
HUB_GROUPS = ("karmada.io", "open-cluster-management.io")
# What a fragment's context object needs besides the fragment to be admitted.
MINIMAL = {
    "Cluster": {"spec": {"syncMode": "Push"}},
    "ManagedCluster": {"spec": {"hubAcceptsClient": True}},
}
SHAPES = {"taints": core.Taint, "tolerations": core.Toleration}


def documents(entry: dict[str, Any]) -> list[dict[str, Any]]:
    text = (SEEDS / entry["file"]).read_text()
    return [doc for doc in yaml.safe_load_all(text) if doc is not None]


def by_file(entries: list[dict[str, Any]]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("entry", entries, ids=[e["file"] for e in entries])


@by_file(MANIFEST)
def test_round_trip(entry: dict[str, Any]) -> None:
    for doc in documents(entry):
        try:
            typed = decode(doc)
        except Invalid as exc:  # the schema alone refuses it
            assert entry["expect"] == "refused", str(exc)
            assert entry["error"] in str(exc)
            continue
        assert typed.to_dict() == doc


@by_file(MANIFEST)
def test_admission(entry: dict[str, Any]) -> None:
    chain = default_chain()
    for doc in documents(entry):
        if entry["expect"] == "admitted":
            chain.admit(doc, now=NOW, config=AdmissionConfig())
        else:
            with pytest.raises(Invalid, match=re.escape(entry["error"])):
                chain.admit(doc, now=NOW, config=AdmissionConfig())


@by_file(NO_EXECUTE)
def test_no_execute_taint_policy_admitted_when_allowed(entry: dict[str, Any]) -> None:
    config = AdmissionConfig(allow_no_execute_taint_policy=True)
    for doc in documents(entry):
        default_chain().admit(doc, now=NOW, config=config)


def wrap(fragment: dict[str, Any], value: Any) -> dict[str, Any]:
    """The fragment inside a minimal object of its context kind, named seed-fragment."""
    api_version, kind = fragment["context"].split()[:2]
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "seed-fragment"}}
    obj |= copy.deepcopy(MINIMAL.get(kind, {}))
    *parents, leaf = fragment["path"].split(".")
    node = obj
    for part in parents:
        node = node.setdefault(part, {})
    if leaf.endswith("[]"):
        node.setdefault(leaf[:-2], []).append(value)
    elif isinstance(node.get(leaf), dict):
        node[leaf] |= value
    else:
        node[leaf] = value
    return obj


def items_under(node: Any, key: str) -> Iterator[Any]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from v if k == key else items_under(v, key)
    elif isinstance(node, list):
        for v in node:
            yield from items_under(v, key)


@pytest.mark.parametrize("fragment", FRAGMENTS, ids=[f["id"] for f in FRAGMENTS])
def test_fragment(fragment: dict[str, Any]) -> None:
    value = yaml.safe_load(fragment["yaml"])
    group = fragment["context"].split()[0].rpartition("/")[0]
    if group.endswith(HUB_GROUPS):
        obj = wrap(fragment, value)
        assert decode(obj).to_dict() == obj
        default_chain().admit(obj, now=NOW, config=AdmissionConfig())
        return
    found = [(model, item) for key, model in SHAPES.items() for item in items_under(value, key)]
    assert found
    for model, item in found:
        assert model.model_validate(item).to_dict() == item
