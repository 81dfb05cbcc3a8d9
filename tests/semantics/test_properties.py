"""Properties of the semantics layer, checked with hypothesis."""

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from fleetwarden.api.core import Taint, Toleration
from fleetwarden.api.ocm.cluster import NO_SELECT, NO_SELECT_IF_NEW, PREFER_NO_SELECT
from fleetwarden.semantics.durations import format_duration_ns, parse_duration_ns
from fleetwarden.semantics.selectors import (
    Operator,
    Requirement,
    Selector,
    new_requirement,
    parse_selector,
)
from fleetwarden.semantics.tolerations import (
    CompiledTolerations,
    TaintTuple,
    cluster_taints,
    find_matching_untolerated_taint,
    no_execute_eviction,
    ocm_cluster_tolerated,
    untolerated_taints,
)

NOW = datetime(2025, 1, 1, tzinfo=UTC)
KEYS = st.sampled_from(["a", "b", "example.com/c"])
VALUES = st.sampled_from(["", "x", "y"])
EFFECTS = [
    "NoSchedule",
    "PreferNoSchedule",
    "NoExecute",
    NO_SELECT,
    NO_SELECT_IF_NEW,
    PREFER_NO_SELECT,
]
TIMES = st.one_of(st.none(), st.integers(-600, 600).map(lambda s: NOW + timedelta(seconds=s)))


def _taint(key: str, value: str, effect: str, added: datetime | None) -> Taint:
    return Taint(key=key, value=value or None, effect=effect, time_added=added)


def _toleration(
    key: str, operator: str | None, value: str, effect: str, seconds: int | None
) -> Toleration:
    return Toleration(
        key=key or None,
        operator=operator,
        value=value or None,
        effect=effect or None,
        toleration_seconds=seconds,
    )


taints = st.lists(st.builds(_taint, KEYS, VALUES, st.sampled_from(EFFECTS), TIMES), max_size=6)
tolerations = st.lists(
    st.builds(
        _toleration,
        st.one_of(st.just(""), KEYS),
        st.sampled_from([None, "Equal", "Exists", "Gt", "Bogus"]),
        VALUES,
        st.sampled_from(["", *EFFECTS]),
        st.one_of(st.none(), st.integers(-10, 900)),
    ),
    max_size=5,
)
effect_filters = st.one_of(st.none(), st.frozensets(st.sampled_from(EFFECTS)))
TOLERATE_ALL = Toleration(operator="Exists")


@given(taints, tolerations, st.integers(0, 5))
def test_exists_without_key_tolerates_any_taint_set(
    taint_list: list[Taint], others: list[Toleration], at: int
) -> None:
    with_all = [*others[:at], TOLERATE_ALL, *others[at:]]
    assert untolerated_taints(taint_list, with_all) == []
    assert CompiledTolerations(with_all, effects=None).tolerates(cluster_taints(taint_list))
    assert no_execute_eviction(taint_list, with_all, NOW).untolerated == ()


@given(taints, tolerations, tolerations, effect_filters)
def test_more_tolerations_never_tolerate_less(
    taint_list: list[Taint],
    base: list[Toleration],
    extra: list[Toleration],
    effects: frozenset[str] | None,
) -> None:
    before = untolerated_taints(taint_list, base, effects)
    after = untolerated_taints(taint_list, base + extra, effects)
    assert all(t in before for t in after)
    if not before:
        assert find_matching_untolerated_taint(taint_list, extra + base, effects) is None


@given(taints, tolerations, effect_filters)
def test_compiled_equals_reference(
    taint_list: list[Taint], toleration_list: list[Toleration], effects: frozenset[str] | None
) -> None:
    compiled = CompiledTolerations(toleration_list, effects)
    expected = find_matching_untolerated_taint(taint_list, toleration_list, effects)
    want = None if expected is None else TaintTuple.of(expected)
    key = cluster_taints(taint_list)
    assert compiled.find_untolerated(key) == want
    assert compiled.find_untolerated(key) == want  # and again, from the cache


@given(taints, tolerations)
def test_no_execute_verdict_is_consistent(
    taint_list: list[Taint], toleration_list: list[Toleration]
) -> None:
    verdict = no_execute_eviction(taint_list, toleration_list, NOW)
    untolerated = untolerated_taints(taint_list, toleration_list, {"NoExecute"})
    assert verdict.untolerated == tuple(untolerated)
    if untolerated:
        assert verdict.evict_now
    if verdict.evict_now:
        assert verdict.evict_after is None
    elif verdict.evict_after is not None:
        assert verdict.evict_after > timedelta(0)


@given(taints, tolerations, st.booleans())
def test_ocm_prefer_no_select_never_filters(
    taint_list: list[Taint], toleration_list: list[Toleration], in_decision: bool
) -> None:
    verdict = ocm_cluster_tolerated(taint_list, toleration_list, in_decision=in_decision, now=NOW)
    soft = [t for t in taint_list if t.effect != PREFER_NO_SELECT]
    assert ocm_cluster_tolerated(soft, toleration_list, in_decision=in_decision, now=NOW) == verdict
    if verdict.requeue_time is not None:
        assert verdict.tolerated and verdict.requeue_time > NOW


@given(st.integers(-(1 << 63), (1 << 63) - 1))
def test_duration_round_trip(ns: int) -> None:
    assert parse_duration_ns(format_duration_ns(ns)) == ns


LABEL_VALUES = st.sampled_from(["", "a", "b-1", "in", "notin", "x.y"])
requirements = st.one_of(
    st.builds(
        lambda k, op, vs: new_requirement(k, op, sorted(set(vs))),
        KEYS,
        st.sampled_from([Operator.IN, Operator.NOT_IN]),
        st.lists(LABEL_VALUES, min_size=1, max_size=3),
    ),
    st.builds(
        lambda k, op, v: new_requirement(k, op, [v]),
        KEYS,
        st.sampled_from([Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS]),
        LABEL_VALUES,
    ),
    st.builds(
        lambda k, op, n: new_requirement(k, op, [str(n)]),
        KEYS,
        st.sampled_from([Operator.GREATER_THAN, Operator.LESS_THAN]),
        st.integers(0, 99),
    ),
    st.builds(new_requirement, KEYS, st.sampled_from([Operator.EXISTS, Operator.DOES_NOT_EXIST])),
)


@given(st.lists(requirements, max_size=4), st.dictionaries(KEYS, LABEL_VALUES | st.just("7")))
def test_selector_string_round_trip(reqs: list[Requirement], labels: dict[str, str]) -> None:
    selector = Selector(reqs)
    parsed = parse_selector(str(selector))
    assert str(parsed) == str(selector)
    assert parsed.matches(labels) == selector.matches(labels)
