"""Strategic merge patch: upstream's own cases, then the patch through the store."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from fleetwarden.api.errors import StatusError
from fleetwarden.api.registry import REGISTRY
from fleetwarden.store import CoreStore, PatchType
from fleetwarden.store.patch import PatchError, PatchMeta, strategic_merge_patch

from .conftest import CONFIGMAPS, DEPLOYMENTS, deployment

CASES = yaml.safe_load((Path(__file__).parent / "strategic_patch_cases.yaml").read_text())


class MergeItemTags(Mapping[str, PatchMeta]):
    """The struct tags of upstream's MergeItem test type. It nests itself (a mergingList's
    items are MergeItems), so a field's tags depend on its name alone."""

    FIELDS: ClassVar = {
        "mergingList": PatchMeta("merge", "name"),
        "mergingIntList": PatchMeta("merge"),
        "mergeItemPtr": PatchMeta("merge", "name"),
        "replacingItem": PatchMeta("replace"),
        "retainKeysMap": PatchMeta(retain_keys=True),
        "retainKeysMergingList": PatchMeta("merge", "name", retain_keys=True),
    }

    def __getitem__(self, path: str) -> PatchMeta:
        return self.FIELDS[path.rpartition(".")[2]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.FIELDS)

    def __len__(self) -> int:
        return len(self.FIELDS)


TAGS = MergeItemTags()


def go_text(value: Any) -> str:
    return (
        "<nil>" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    )


def sort_merge_lists(value: Any) -> Any:
    """Upstream's sortMergeListsByName, which its tests apply to every document before
    comparing: merging lists sorted by merge key, merging scalar lists made sets."""
    if not isinstance(value, dict):
        return value
    result = {}
    for key, item in value.items():
        if key == "$retainKeys" or key.startswith("$deleteFromPrimitiveList/"):
            item = sorted(item, key=go_text)
        elif isinstance(item, dict) and not key.startswith("$"):
            item = sort_merge_lists(item)
        elif isinstance(item, list) and TAGS.get(key, PatchMeta()).strategy == "merge":
            item = sort_merge_list(item, TAGS[key].merge_key)
        result[key] = item
    return result


def sort_merge_list(items: list[Any], merge_key: str) -> list[Any]:
    if items and not isinstance(items[0], dict):
        return sorted({(type(i), i): i for i in items}.values(), key=go_text)
    return sorted((sort_merge_lists(i) for i in items), key=lambda i: go_text(i.get(merge_key)))


@pytest.mark.parametrize("case", CASES, ids=[c["description"] for c in CASES])
def test_upstream_cases(case: dict[str, Any]) -> None:
    prepare = sort_merge_lists if case["sorted"] else copy.deepcopy
    original, patch = prepare(case["original"]), prepare(case["patch"])
    before = copy.deepcopy((original, patch))
    if "error" in case:
        with pytest.raises(PatchError, match=re.escape(case["error"])):
            strategic_merge_patch(original, patch, TAGS)
        return
    assert strategic_merge_patch(original, patch, TAGS) == prepare(case["expected"])
    assert (original, patch) == before


# --- through the store ---------------------------------------------------------------------

STRATEGIC = PatchType.STRATEGIC


def web(**spec: Any) -> dict[str, Any]:
    containers = [
        {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]},
        {"name": "sidecar", "image": "proxy:1"},
    ]
    template = {"spec": {"containers": containers}}
    return {**deployment(), "spec": {"replicas": 1, "template": template, **spec}}


def test_containers_and_their_env_merge_by_name(store: CoreStore) -> None:
    store.create(web())
    # What kubectl apply sends after changing the app's image and adding an env var.
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
                    "containers": [
                        {
                            "name": "app",
                            "image": "app:2",
                            "$setElementOrder/env": [{"name": "A"}, {"name": "B"}],
                            "env": [{"name": "B", "value": "2"}],
                        }
                    ],
                }
            }
        }
    }
    patched = store.patch(DEPLOYMENTS, "web", "default", patch, patch_type=STRATEGIC)
    assert patched["spec"]["template"]["spec"]["containers"] == [
        {
            "name": "app",
            "image": "app:2",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
        },
        {"name": "sidecar", "image": "proxy:1"},
    ]


def test_a_container_is_deleted_by_its_name(store: CoreStore) -> None:
    store.create(web())
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}}
    }
    patched = store.patch(DEPLOYMENTS, "web", "default", patch, patch_type=STRATEGIC)
    assert [c["name"] for c in patched["spec"]["template"]["spec"]["containers"]] == ["app"]


def test_retain_keys_drops_the_old_strategy_fields(store: CoreStore) -> None:
    rolling = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}
    store.create(web(strategy=rolling))
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    patched = store.patch(DEPLOYMENTS, "web", "default", patch, patch_type=STRATEGIC)
    assert patched["spec"]["strategy"] == {"type": "Recreate"}


def test_finalizers_merge_as_a_set_on_any_built_in_kind(store: CoreStore) -> None:
    store.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "default", "finalizers": ["a/x"]},
        }
    )
    patch = {"metadata": {"finalizers": ["a/x", "b/y"]}, "data": {"k": "v"}}
    patched = store.patch(CONFIGMAPS, "c", "default", patch, patch_type=STRATEGIC)
    assert (patched["metadata"]["finalizers"], patched["data"]) == (["a/x", "b/y"], {"k": "v"})


def test_a_custom_resource_refuses_a_strategic_merge_patch(store: CoreStore) -> None:
    policies = REGISTRY.info("policy.karmada.io/v1alpha1", "PropagationPolicy")
    store.create(
        {
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "PropagationPolicy",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}]},
        }
    )
    with pytest.raises(StatusError) as err:
        store.patch(policies, "p", "default", {"spec": {"priority": 1}}, patch_type=STRATEGIC)
    assert (err.value.code, err.value.reason, err.value.message) == (
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json",
    )
    assert "priority" not in store.get(policies, "p", "default")["spec"]


def test_a_merge_item_without_its_key_is_unprocessable(store: CoreStore) -> None:
    store.create(web())
    patch = {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}
    with pytest.raises(StatusError) as err:
        store.patch(DEPLOYMENTS, "web", "default", patch, patch_type=STRATEGIC)
    assert err.value.code == 422
    assert err.value.message == "map: map[image:x] does not contain declared merge key: name"
