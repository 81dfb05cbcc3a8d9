"""Taints and tolerations. Cases from k8s.io/api core/v1 toleration_test.go, Karmada's
tainttoleration plugin, helper/taint_test.go and taint_manager_test.go, OCM's
tainttoleration plugin test, and the seeds (OpenShift 5.7, OCM placement tolerations)."""

from datetime import UTC, datetime, timedelta

import pytest

from fleetwarden.api.core import Taint, Toleration
from fleetwarden.api.ocm.cluster import NO_SELECT, NO_SELECT_IF_NEW, PREFER_NO_SELECT
from fleetwarden.semantics.tolerations import (
    SCHEDULING_EFFECTS,
    CompiledTolerations,
    NoExecuteVerdict,
    OcmToleration,
    TaintTuple,
    cluster_taints,
    find_matching_untolerated_taint,
    get_matching_tolerations,
    min_toleration_time,
    no_execute_eviction,
    ocm_cluster_tolerated,
    ocm_taint_tolerated,
    ocm_toleration_misconfiguration,
    taint_to_string,
    tolerates,
    untolerated_taints,
)

NOW = datetime(2025, 9, 23, 12, 0, 0, tzinfo=UTC)


def taint(
    key: str, value: str = "", effect: str = "NoSchedule", added: datetime | None = None
) -> Taint:
    return Taint(key=key, value=value or None, effect=effect, time_added=added)


def tol(
    key: str = "",
    operator: str = "",
    value: str = "",
    effect: str = "",
    seconds: int | None = None,
) -> Toleration:
    return Toleration(
        key=key or None,
        operator=operator or None,
        value=value or None,
        effect=effect or None,
        toleration_seconds=seconds,
    )


# --- ToleratesTaint ------------------------------------------------------------------------------

TOLERATES = [
    (
        "Exists, same key and effect, taint without value",
        tol("foo", "Exists", effect="NoSchedule"),
        taint("foo"),
        True,
    ),
    (
        "Exists, same key and effect, taint with a value",
        tol("foo", "Exists", effect="NoSchedule"),
        taint("foo", "bar"),
        True,
    ),
    (
        "Exists with empty key matches every key",
        tol(operator="Exists", effect="NoSchedule"),
        taint("foo", "bar"),
        True,
    ),
    (
        "Equal, same key, effect and value",
        tol("foo", "Equal", "bar", "NoSchedule"),
        taint("foo", "bar"),
        True,
    ),
    (
        "Equal, different values",
        tol("foo", "Equal", "value1", "NoSchedule"),
        taint("foo", "value2"),
        False,
    ),
    (
        "Equal, different effects",
        tol("foo", "Equal", "bar", "NoSchedule"),
        taint("foo", "bar", "NoExecute"),
        False,
    ),
    ("empty operator is Equal", tol("foo", value="bar"), taint("foo", "bar"), True),
    ("empty operator is Equal, value differs", tol("foo", value="bar"), taint("foo", "baz"), False),
    (
        "empty effect matches every effect",
        tol("foo", "Exists"),
        taint("foo", effect="NoExecute"),
        True,
    ),
    ("empty key with Equal still compares values", tol(operator="Equal"), taint("any"), True),
    ("empty key with Equal, value differs", tol(operator="Equal"), taint("any", "v"), False),
    (
        "Exists ignores a value it should not have",
        tol("foo", "Exists", "ignored"),
        taint("foo", "bar"),
        True,
    ),
    ("different keys", tol("foo", "Exists"), taint("bar"), False),
    ("Gt is disabled, as Karmada calls it", tol("sla", "Gt", "750"), taint("sla", "950"), False),
    ("Lt is disabled, as Karmada calls it", tol("sla", "Lt", "950"), taint("sla", "800"), False),
    ("unknown operator", tol("foo", "Matches", "bar"), taint("foo", "bar"), False),
]


@pytest.mark.parametrize(
    ("toleration", "taint_", "want"), [c[1:] for c in TOLERATES], ids=[c[0] for c in TOLERATES]
)
def test_tolerates(toleration: Toleration, taint_: Taint, want: bool) -> None:
    assert tolerates(toleration, taint_) is want
    compiled = CompiledTolerations([toleration], effects=None)
    assert compiled.tolerates(cluster_taints([taint_])) is want


# --- FindMatchingUntoleratedTaint, the Karmada scheduler filter ----------------------------------


def test_openshift_multiple_taints() -> None:
    """Seed 001 §5.7.1.2: the pod cannot be scheduled (key2 is untolerated) but keeps running."""
    taints = [
        taint("key1", "value1", "NoSchedule"),
        taint("key1", "value1", "NoExecute", NOW),
        taint("key2", "value2", "NoSchedule"),
    ]
    tolerations = [
        tol("key1", "Equal", "value1", "NoSchedule"),
        tol("key1", "Equal", "value1", "NoExecute"),
    ]
    blocking = find_matching_untolerated_taint(taints, tolerations, SCHEDULING_EFFECTS)
    assert blocking is not None and taint_to_string(blocking) == "key2=value2:NoSchedule"
    assert no_execute_eviction(taints, tolerations, NOW) == NoExecuteVerdict(evict_now=False)
    compiled = CompiledTolerations(tolerations)
    assert compiled.find_untolerated(cluster_taints(taints)) == TaintTuple.of(taints[2])


def test_tolerate_everything() -> None:
    """Seed 001 §5.7.1.5: `operator: Exists` with no key and no value tolerates every taint."""
    taints = [
        taint("a", "1", "NoSchedule"),
        taint("b", effect="NoExecute"),
        taint("c", effect="PreferNoSchedule"),
    ]
    assert untolerated_taints(taints, [tol(operator="Exists")]) == []
    assert no_execute_eviction(taints, [tol(operator="Exists")], NOW).evict_now is False


@pytest.mark.parametrize(
    ("tolerations", "taints", "effects", "want"),
    [
        ([tol("foo", "Exists", effect="NoSchedule")], [], None, None),
        ([tol("foo", "Exists", effect="NoSchedule")], [taint("foo")], None, None),
        (
            [tol("foo", "Exists", effect="NoSchedule")],
            [taint("foo"), taint("bar")],
            None,
            "bar:NoSchedule",
        ),
        ([], [taint("foo", effect="PreferNoSchedule")], None, "foo:PreferNoSchedule"),
        # the scheduler's filter ignores PreferNoSchedule taints
        ([], [taint("foo", effect="PreferNoSchedule")], SCHEDULING_EFFECTS, None),
        (
            [],
            [taint("a", effect="PreferNoSchedule"), taint("b", "v", "NoExecute")],
            SCHEDULING_EFFECTS,
            "b=v:NoExecute",
        ),
        (None, None, SCHEDULING_EFFECTS, None),
    ],
)
def test_find_matching_untolerated_taint(
    tolerations: list[Toleration] | None,
    taints: list[Taint] | None,
    effects: frozenset[str] | None,
    want: str | None,
) -> None:
    found = find_matching_untolerated_taint(taints, tolerations, effects)
    assert (found and taint_to_string(found)) == want


def test_karmada_filter_message_taint() -> None:
    """The plugin reports `cluster(s) had untolerated taint {key1=value1:NoSchedule}`."""
    found = find_matching_untolerated_taint([taint("key1", "value1")], [], SCHEDULING_EFFECTS)
    assert found is not None and f"{{{taint_to_string(found)}}}" == "{key1=value1:NoSchedule}"
    assert (
        find_matching_untolerated_taint(
            [taint("key1", "value1")],
            [tol("key1", "Equal", "value1", "NoSchedule")],
            SCHEDULING_EFFECTS,
        )
        is None
    )


@pytest.mark.parametrize(
    ("taint_", "text"),
    [
        (taint("k", "v", "NoSchedule"), "k=v:NoSchedule"),
        (taint("k"), "k:NoSchedule"),
        (taint("k", "v", ""), "k=v:"),
        (taint("k", effect=""), "k"),
    ],
)
def test_taint_to_string(taint_: Taint, text: str) -> None:
    assert taint_to_string(taint_) == text == str(TaintTuple.of(taint_))


# --- Karmada's taint manager ---------------------------------------------------------------------

ONE_SECOND_AGO = NOW - timedelta(seconds=1)
NX = "NoExecute"


def test_get_matching_tolerations() -> None:
    t1, t2 = (
        tol("key1", value="value1", effect="NoSchedule"),
        tol("key2", value="value2", effect="NoSchedule"),
    )
    taints = [taint("key1", "value1"), taint("key2", "value2")]
    assert get_matching_tolerations([], [t1]) == []
    assert get_matching_tolerations(taints, []) is None
    assert get_matching_tolerations(taints, [t1, t2]) == [t1, t2]
    assert (
        get_matching_tolerations(
            taints, [tol("key1", value="value_1"), tol("key2", value="value_2")]
        )
        is None
    )
    # the first toleration that tolerates each taint, even twice over
    wildcard = tol(operator="Exists")
    assert get_matching_tolerations(taints, [wildcard, t1]) == [wildcard, wildcard]


@pytest.mark.parametrize(
    ("taints", "used", "want"),
    [
        ([], [tol("key", "Exists", effect=NX, seconds=60)], None),
        ([taint("key", "value", NX, NOW)], [], timedelta(0)),
        (
            [taint("key", "value", NX, NOW)],
            [tol("key", "Exists", effect=NX, seconds=60)],
            timedelta(seconds=60),
        ),
        ([taint("key", "value", NX, NOW)], [tol("key", "Exists", effect=NX)], None),
        ([taint("key", "value", NX)], [tol("key", "Exists", effect=NX, seconds=60)], None),
        (
            [taint("key1", "value1", NX, NOW), taint("key2", "value2", NX, NOW)],
            [
                tol("key1", "Exists", effect=NX, seconds=120),
                tol("key2", "Exists", effect=NX, seconds=60),
            ],
            timedelta(seconds=60),
        ),
        (
            [taint("key", "value", NX, NOW - timedelta(minutes=2))],
            [tol("key", "Exists", effect=NX, seconds=60)],
            timedelta(0),
        ),
        # negative seconds are simply in the past
        (
            [taint("key", "value", NX, NOW)],
            [tol("key", "Exists", effect=NX, seconds=-5)],
            timedelta(0),
        ),
        # seconds beyond the calendar do not overflow
        (
            [taint("key", "value", NX, NOW)],
            [tol("key", "Exists", effect=NX, seconds=1 << 62)],
            datetime.max.replace(tzinfo=UTC) - NOW,
        ),
    ],
)
def test_min_toleration_time(
    taints: list[Taint], used: list[Toleration], want: timedelta | None
) -> None:
    assert min_toleration_time(taints, used, NOW) == want


def test_min_toleration_time_counts_every_taint_a_used_toleration_tolerates() -> None:
    # The wildcard is used for taint "b" only, yet its 10 s also count for taint "a".
    taints = [taint("a", effect=NX, added=NOW), taint("b", effect=NX, added=NOW)]
    tolerations = [tol("a", "Exists", seconds=300), tol(operator="Exists", seconds=10)]
    used = get_matching_tolerations(taints, tolerations)
    assert used == [tolerations[0], tolerations[1]]
    assert min_toleration_time(taints, used, NOW) == timedelta(seconds=10)


EXISTS_NX = tol("test-key", "Exists", effect=NX)


@pytest.mark.parametrize(
    ("name", "taints", "tolerations", "want"),
    [
        (
            "no NoExecute taints",
            [taint("test-key", effect="NoSchedule")],
            [],
            NoExecuteVerdict(False),
        ),
        (
            "not tolerated",
            [taint("test-key", effect=NX, added=ONE_SECOND_AGO)],
            [],
            NoExecuteVerdict(True, None, (taint("test-key", effect=NX, added=ONE_SECOND_AGO),)),
        ),
        (
            "zero seconds",
            [taint("test-key", effect=NX, added=ONE_SECOND_AGO)],
            [tol("test-key", "Exists", effect=NX, seconds=0)],
            NoExecuteVerdict(True),
        ),
        (
            "positive seconds",
            [taint("test-key", effect=NX, added=ONE_SECOND_AGO)],
            [tol("test-key", "Exists", effect=NX, seconds=60)],
            NoExecuteVerdict(False, timedelta(seconds=59)),
        ),
        (
            "forever",
            [taint("test-key", effect=NX, added=ONE_SECOND_AGO)],
            [EXISTS_NX],
            NoExecuteVerdict(False),
        ),
        (
            "mixed",
            [
                taint("tolerated-key", effect=NX, added=NOW + timedelta(seconds=1)),
                taint("not-tolerated-key", effect=NX, added=ONE_SECOND_AGO),
            ],
            [tol("tolerated-key", "Exists", effect=NX, seconds=30)],
            NoExecuteVerdict(
                True, None, (taint("not-tolerated-key", effect=NX, added=ONE_SECOND_AGO),)
            ),
        ),
        (
            "expired",
            [taint("test-key", effect=NX, added=NOW - timedelta(seconds=2))],
            [tol("test-key", "Exists", effect=NX, seconds=1)],
            NoExecuteVerdict(True),
        ),
        (
            "OpenShift's 3600 s, 10 minutes in",
            [taint("key1", "value1", NX, NOW - timedelta(minutes=10))],
            [tol("key1", "Equal", "value1", NX, 3600)],
            NoExecuteVerdict(False, timedelta(minutes=50)),
        ),
        (
            "one of two with finite seconds",
            [
                taint("key1", effect=NX, added=ONE_SECOND_AGO),
                taint("key2", effect=NX, added=ONE_SECOND_AGO),
            ],
            [tol("key1", "Exists", effect=NX), tol("key2", "Exists", effect=NX, seconds=300)],
            NoExecuteVerdict(False, timedelta(seconds=299)),
        ),
    ],
)
def test_no_execute_eviction(
    name: str, taints: list[Taint], tolerations: list[Toleration], want: NoExecuteVerdict
) -> None:
    assert no_execute_eviction(taints, tolerations, NOW) == want


def test_no_execute_eviction_without_anything() -> None:
    assert no_execute_eviction(None, None, NOW) == NoExecuteVerdict(False)


# --- OCM -----------------------------------------------------------------------------------------

FAKE_NOW = datetime(2022, 1, 1, tzinfo=UTC)
ADDED_8, ADDED_9, ADDED_10 = (FAKE_NOW - timedelta(seconds=s) for s in (8, 9, 10))


def ocm_taint(
    key: str, value: str = "", effect: str = NO_SELECT, added: datetime | None = None
) -> Taint:
    return taint(key, value, effect, added)


OCM_CASES = [
    ("NoSelect, no tolerations", [], ocm_taint("key1", "value1"), False, False),
    (
        "NoSelect, Equal key/value match",
        [tol("key1", "Equal", "value1")],
        ocm_taint("key1", "value1"),
        False,
        True,
    ),
    (
        "NoSelect, Equal, toleration without value",
        [tol("key1", "Equal")],
        ocm_taint("key1", "value1"),
        False,
        False,
    ),
    (
        "NoSelect, Equal, key/value differ",
        [tol("key1", "Equal", "value1")],
        ocm_taint("key1", "value2"),
        False,
        False,
    ),
    (
        "NoSelect, Exists, key matches",
        [tol("key1", "Exists")],
        ocm_taint("key1", "value1"),
        False,
        True,
    ),
    (
        "NoSelect, Exists, key differs",
        [tol("key2", "Exists")],
        ocm_taint("key1", "value1"),
        False,
        False,
    ),
    (
        "NoSelectIfNew, no tolerations, new",
        [],
        ocm_taint("key1", effect=NO_SELECT_IF_NEW),
        False,
        False,
    ),
    (
        "NoSelectIfNew, no tolerations, decided",
        [],
        ocm_taint("key1", effect=NO_SELECT_IF_NEW),
        True,
        True,
    ),
    (
        "NoSelectIfNew, tolerated, new",
        [tol("key1", "Exists")],
        ocm_taint("key1", effect=NO_SELECT_IF_NEW),
        False,
        True,
    ),
    (
        "NoSelectIfNew, not tolerated, new",
        [tol("key2", "Exists")],
        ocm_taint("key1", effect=NO_SELECT_IF_NEW),
        False,
        False,
    ),
    (
        "NoSelectIfNew, not tolerated, decided",
        [tol("key2", "Exists")],
        ocm_taint("key1", effect=NO_SELECT_IF_NEW),
        True,
        True,
    ),
    ("PreferNoSelect, no tolerations", [], ocm_taint("key1", effect=PREFER_NO_SELECT), False, True),
    (
        "PreferNoSelect, not tolerated",
        [tol("key2", "Exists")],
        ocm_taint("key1", effect=PREFER_NO_SELECT),
        False,
        True,
    ),
    (
        "NoSelect, empty toleration effect",
        [tol("key1", "Equal", "value1")],
        ocm_taint("key1", "value1"),
        False,
        True,
    ),
    (
        "NoSelect, other toleration effect",
        [tol("key1", "Equal", "value1", NO_SELECT_IF_NEW)],
        ocm_taint("key1", "value1"),
        False,
        False,
    ),
    (
        "NoSelect, same toleration effect",
        [tol("key1", "Equal", "value1", NO_SELECT)],
        ocm_taint("key1", "value1"),
        False,
        True,
    ),
    (
        "NoSelectIfNew, value differs, decided",
        [tol("key1", "Equal", "value2", NO_SELECT)],
        ocm_taint("key1", "value1", NO_SELECT_IF_NEW),
        True,
        True,
    ),
    (
        "NoSelectIfNew, value differs, new",
        [tol("key1", "Equal", "value2", NO_SELECT_IF_NEW)],
        ocm_taint("key1", "value1", NO_SELECT_IF_NEW),
        False,
        False,
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "taint_", "in_decision", "want"),
    [c[1:] for c in OCM_CASES],
    ids=[c[0] for c in OCM_CASES],
)
def test_ocm_taint_tolerated(
    tolerations: list[Toleration], taint_: Taint, in_decision: bool, want: bool
) -> None:
    assert ocm_taint_tolerated(taint_, tolerations, in_decision=in_decision, now=FAKE_NOW) == (
        want,
        None,
    )


def test_ocm_toleration_seconds() -> None:
    """OCM's test: 10 s from timeAdded; clusters tainted 8 and 9 s ago stay, 10 s ago goes,
    and the placement is requeued when the earliest toleration runs out (1 s from now)."""
    tolerations = [tol("key1", "Exists", seconds=10)]
    results = [
        ocm_cluster_tolerated(
            [ocm_taint("key1", v, added=a)], tolerations, in_decision=True, now=FAKE_NOW
        )
        for v, a in (("value1", ADDED_8), ("value2", ADDED_9), ("value3", ADDED_10))
    ]
    second = timedelta(seconds=1)
    assert results == [
        OcmToleration(True, FAKE_NOW + 2 * second),
        OcmToleration(True, FAKE_NOW + second),
        OcmToleration(False),
    ]
    requeue = min(r.requeue_time for r in results if r.requeue_time is not None)
    assert requeue == FAKE_NOW + second


def test_ocm_unreachable_five_minutes() -> None:
    """Seed 003 §1.14.6.4: tolerate `unreachable` for 300 s from timeAdded, then move."""
    unreachable = ocm_taint("cluster.open-cluster-management.io/unreachable", added=FAKE_NOW)
    tolerations = [tol("cluster.open-cluster-management.io/unreachable", "Exists", seconds=300)]
    early = ocm_cluster_tolerated(
        [unreachable], tolerations, in_decision=True, now=FAKE_NOW + timedelta(seconds=299)
    )
    assert early == OcmToleration(True, FAKE_NOW + timedelta(seconds=300))
    late = ocm_cluster_tolerated(
        [unreachable], tolerations, in_decision=True, now=FAKE_NOW + timedelta(seconds=300)
    )
    assert late == OcmToleration(False)


def test_ocm_expired_toleration_falls_through_to_the_next() -> None:
    taints = [ocm_taint("gpu", "true", added=ADDED_10)]
    expired, forever = tol("gpu", "Exists", seconds=5), tol("gpu", "Equal", "true")
    assert ocm_cluster_tolerated(taints, [expired], in_decision=False, now=FAKE_NOW) == (
        False,
        None,
    )
    assert ocm_cluster_tolerated(taints, [expired, forever], in_decision=False, now=FAKE_NOW) == (
        True,
        None,
    )


def test_ocm_taint_without_time_added_has_run_out() -> None:
    # Go's zero time: any tolerationSeconds ended long ago.
    taints = [ocm_taint("gpu")]
    assert ocm_cluster_tolerated(
        taints, [tol("gpu", "Exists", seconds=3600)], in_decision=True, now=FAKE_NOW
    ) == (False, None)
    assert ocm_cluster_tolerated(
        taints, [tol("gpu", "Exists")], in_decision=True, now=FAKE_NOW
    ) == (True, None)


def test_ocm_cluster_with_several_taints() -> None:
    taints = [ocm_taint("key1", "value1"), ocm_taint("key2")]
    tolerations = [tol("key1", "Equal", "value1"), tol("key2", "Exists")]
    assert ocm_cluster_tolerated(taints, tolerations, in_decision=False, now=FAKE_NOW) == (
        True,
        None,
    )
    assert ocm_cluster_tolerated(taints, tolerations[:1], in_decision=False, now=FAKE_NOW) == (
        False,
        None,
    )
    assert ocm_cluster_tolerated([], [], in_decision=False, now=FAKE_NOW) == (True, None)


@pytest.mark.parametrize(
    ("tolerations", "message"),
    [
        ([tol(value="value1", operator="Equal")], "If the key is empty, operator must be Exists."),
        ([tol(value="value1")], "If the key is empty, operator must be Exists."),
        (
            [tol(value="value1", operator="Exists")],
            "If the operator is Exists, the value should be empty.",
        ),
        ([tol("key1", "Exists", "v")], "If the operator is Exists, the value should be empty."),
        ([tol("key1", "Equal", "value1"), tol(operator="Exists")], None),
        (None, None),
    ],
)
def test_ocm_misconfiguration(tolerations: list[Toleration] | None, message: str | None) -> None:
    assert ocm_toleration_misconfiguration(tolerations) == message


# --- compiled ------------------------------------------------------------------------------------


def test_compiled_caches_per_taint_set() -> None:
    compiled = CompiledTolerations([tol("a", "Exists")], cache_limit=2)
    one, two, three = (cluster_taints([taint(k)]) for k in "abc")
    assert compiled.tolerates(one) and not compiled.tolerates(two)
    assert compiled.find_untolerated(two) == TaintTuple("b", "", "NoSchedule")
    assert not compiled.tolerates(three)  # past the limit: the cache starts over
    assert compiled.tolerates(()) and compiled.tolerates(one)
