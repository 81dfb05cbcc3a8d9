"""The naming condition controller's names and conditions: upstream's TestSync cases
(pkg/controller/status). The controller at work: tests/server/test_crd.py."""

from __future__ import annotations

from typing import Any

import pytest

from fleetwarden.api.apiextensions import CustomResourceDefinition
from fleetwarden.api.meta import Condition
from fleetwarden.controllers.apiextensions.naming import (
    accepted_names,
    established_condition,
    used_names,
)


def names(plural: str, singular: str = "", kind: str = "", list_kind: str = "",
          *short_names: str) -> dict[str, Any]:  # fmt: skip
    given = {"plural": plural, "singular": singular, "kind": kind, "listKind": list_kind,
             "shortNames": list(short_names)}  # fmt: skip
    return {k: v for k, v in given.items() if v}


def crd(
    name: str,
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    *conditions: Condition,
) -> CustomResourceDefinition:
    plural, group = name.split(".", 1)
    return CustomResourceDefinition.model_validate(
        {
            "metadata": {"name": name},
            "spec": {"group": group, "names": spec or {"plural": plural}},
            "status": {
                "acceptedNames": status or {},
                "conditions": [c.to_dict() for c in conditions],
            },
        }
    )


def condition(type_: str, status: str, reason: str, message: str) -> Condition:
    return Condition(type=type_, status=status, reason=reason, message=message)


ACCEPTED = condition("NamesAccepted", "True", "NoConflicts", "no conflicts found")
NOT_ACCEPTED = condition("NamesAccepted", "False", "NotAccepted", "not all names are accepted")
INSTALLING = condition("Established", "False", "Installing", "the initial names have been accepted")
NOT_ESTABLISHED = condition("Established", "False", "NotAccepted", "not all names are accepted")


def conflict(reason: str, name: str) -> Condition:
    return condition("NamesAccepted", "False", reason, f'"{name}" is already in use')


FULL = names("alfa", "delta-singular", "echo-kind", "foxtrot-listkind", "golf-shortname-1",
             "hotel-shortname-2")  # fmt: skip
OTHER = names("zulu", "yankee-singular", "xray-kind", "whiskey-listkind", "victor-shortname-1",
              "uniform-shortname-2")  # fmt: skip

CASES = [
    ("first resource", crd("alfa.bravo.com"), [], names("alfa"), ACCEPTED, INSTALLING),
    ("different groups", crd("alfa.bravo.com", FULL),
     [crd("alfa.charlie.com", status=FULL)], FULL, ACCEPTED, INSTALLING),
    ("conflict plural to singular", crd("alfa.bravo.com", FULL),
     [crd("india.bravo.com", status=names("india", "alfa"))],
     {k: v for k, v in FULL.items() if k != "plural"},
     conflict("PluralConflict", "alfa"), NOT_ESTABLISHED),
    ("conflict singular to shortName", crd("alfa.bravo.com", FULL),
     [crd("india.bravo.com", status=names("india", "indias", "", "", "delta-singular"))],
     {k: v for k, v in FULL.items() if k != "singular"},
     conflict("SingularConflict", "delta-singular"), NOT_ESTABLISHED),
    ("conflict on shortName to shortName", crd("alfa.bravo.com", FULL),
     [crd("india.bravo.com", status=names("india", "indias", "", "", "hotel-shortname-2"))],
     names("alfa", "delta-singular", "echo-kind", "foxtrot-listkind"),
     conflict("ShortNamesConflict", "hotel-shortname-2"), NOT_ESTABLISHED),
    ("conflict on kind to listkind", crd("alfa.bravo.com", FULL),
     [crd("india.bravo.com", status=names("india", "indias", "", "echo-kind"))],
     {k: v for k, v in FULL.items() if k != "kind"},
     conflict("KindConflict", "echo-kind"), NOT_ESTABLISHED),
    ("conflict on listkind to kind", crd("alfa.bravo.com", FULL),
     [crd("india.bravo.com", status=names("india", "indias", "foxtrot-listkind"))],
     {k: v for k, v in FULL.items() if k != "listKind"},
     conflict("ListKindConflict", "foxtrot-listkind"), NOT_ESTABLISHED),
    ("no conflict on resource and kind", crd("alfa.bravo.com", FULL),
     [crd("india.bravo.com", status=names("india", "echo-kind"))], FULL, ACCEPTED, INSTALLING),
    ("merge on conflicts", crd("alfa.bravo.com", FULL, OTHER),
     [crd("india.bravo.com", status=names("india", "indias", "foxtrot-listkind", "",
                                          "delta-singular"))],
     names("alfa", "yankee-singular", "echo-kind", "whiskey-listkind", "golf-shortname-1",
           "hotel-shortname-2"),
     conflict("ListKindConflict", "foxtrot-listkind"), NOT_ESTABLISHED),
    ("merge on conflicts shortNames as one", crd("alfa.bravo.com", FULL, OTHER),
     [crd("india.bravo.com", status=names("india", "indias", "foxtrot-listkind", "",
                                          "delta-singular", "golf-shortname-1"))],
     names("alfa", "yankee-singular", "echo-kind", "whiskey-listkind", "victor-shortname-1",
           "uniform-shortname-2"),
     conflict("ListKindConflict", "foxtrot-listkind"), NOT_ESTABLISHED),
    ("no conflicts on self", crd("alfa.bravo.com", FULL, FULL),
     [crd("alfa.bravo.com", FULL, FULL)], FULL, ACCEPTED, INSTALLING),
    ("no conflicts on self, remove shortname",
     crd("alfa.bravo.com", {k: v[:1] if k == "shortNames" else v for k, v in FULL.items()}, FULL),
     [crd("alfa.bravo.com", FULL, FULL)],
     {k: v[:1] if k == "shortNames" else v for k, v in FULL.items()}, ACCEPTED, INSTALLING),
    ("installing before with true condition", crd("alfa.bravo.com", None, None, ACCEPTED), [],
     names("alfa"), ACCEPTED, INSTALLING),
    ("not installing before with false condition",
     crd("alfa.bravo.com", None, None, NOT_ACCEPTED), [], names("alfa"), ACCEPTED, INSTALLING),
    ("conflicting, installing before with true condition",
     crd("alfa.bravo.com", FULL, None, ACCEPTED),
     [crd("india.bravo.com", status=names("india", "alfa"))],
     {k: v for k, v in FULL.items() if k != "plural"},
     conflict("PluralConflict", "alfa"), NOT_ESTABLISHED),
    ("conflicting, not installing before with false condition",
     crd("alfa.bravo.com", FULL, None, NOT_ACCEPTED),
     [crd("india.bravo.com", status=names("india", "alfa"))],
     {k: v for k, v in FULL.items() if k != "plural"},
     conflict("PluralConflict", "alfa"), NOT_ESTABLISHED),
]  # fmt: skip


@pytest.mark.parametrize(
    ("new", "existing", "expected_names", "expected_accepted", "expected_established"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_sync(
    new: CustomResourceDefinition,
    existing: list[CustomResourceDefinition],
    expected_names: dict[str, Any],
    expected_accepted: Condition,
    expected_established: Condition,
) -> None:
    used = used_names(c for c in existing if c.spec.group == new.spec.group)
    got_names, got_accepted = accepted_names(new, used)
    assert got_names.to_dict() == expected_names
    assert got_accepted == expected_accepted
    assert established_condition(new, got_accepted) == expected_established


def test_established_stays_true() -> None:
    established = condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted")  # fmt: skip
    new = crd("alfa.bravo.com", FULL, None, ACCEPTED, established)
    assert established_condition(new, conflict("KindConflict", "echo-kind")) == established
