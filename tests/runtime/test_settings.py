from datetime import timedelta

import pytest

from fleetwarden.admission.chain import AdmissionConfig
from fleetwarden.runtime.settings import (
    KARMADA_FEATURES,
    FeatureGates,
    PurgeMode,
    Settings,
    SettingsError,
)


def test_defaults_are_karmadas_today() -> None:
    s = Settings()
    assert s.cluster_status_update_frequency == timedelta(seconds=10)
    assert s.cluster_success_threshold == timedelta(seconds=30)
    assert s.cluster_failure_threshold == timedelta(seconds=30)
    assert s.cluster_monitor_period == timedelta(seconds=5)
    assert s.cluster_monitor_grace_period == timedelta(seconds=40)
    assert s.cluster_startup_grace_period == timedelta(seconds=60)
    assert s.cluster_cache_sync_timeout == timedelta(minutes=2)
    assert s.cluster_lease_duration == timedelta(seconds=40)
    assert s.cluster_lease_renew_interval_fraction == 0.25
    assert s.enable_taint_manager is True
    assert s.graceful_eviction_timeout == timedelta(minutes=10)
    assert s.enable_no_execute_taint_eviction is False
    assert s.no_execute_taint_eviction_purge_mode is PurgeMode.GRACEFULLY
    assert s.resource_eviction_rate == 0.5
    assert s.allow_no_execute_taint_policy is False
    assert s.enable_empty_workload_propagation is False
    assert s.enable_scheduler_estimator is False
    assert (s.rate_limiter_base_delay, s.rate_limiter_max_delay) == (
        timedelta(milliseconds=5),
        timedelta(seconds=1000),
    )
    assert (s.rate_limiter_qps, s.rate_limiter_bucket_size) == (10, 100)
    assert s.concurrent_cluster_syncs == s.concurrent_resourcebinding_syncs == 5


def test_older_karmada_settings_are_off_unless_given() -> None:
    s = Settings()
    assert s.failover_eviction_timeout is None
    assert s.default_not_ready_toleration_seconds is None
    assert s.default_unreachable_toleration_seconds is None
    assert s.admission_config() == AdmissionConfig()


def test_feature_gates_default_as_karmadas() -> None:
    s = Settings()
    assert s.gate("Failover") is False
    assert s.gate("GracefulEviction") is True
    assert s.gate("PropagateDeps") is True
    assert s.gate("PropagationPolicyPreemption") is False
    assert s.gate("PriorityBasedScheduling") is True
    assert len(KARMADA_FEATURES) == 17


def test_from_flags_takes_dashed_names_with_strings_ints_and_bools() -> None:
    s = Settings.from_flags(
        {
            "feature-gates": "Failover=true,GracefulEviction=false",
            "failover-eviction-timeout": "5m",
            "graceful-eviction-timeout": 600,
            "cluster-monitor-grace-period": "1h2m3s",
            "cluster-monitor-period": "300ms",
            "enable-no-execute-taint-eviction": True,
            "allow-no-execute-taint-policy": "true",
            "no-execute-taint-eviction-purge-mode": "Directly",
            "resource-eviction-rate": "2.5",
            "cluster-lease-renew-interval-fraction": 1,
            "concurrent-work-syncs": "7",
            "default-not-ready-toleration-seconds": "300",
            "default-unreachable-toleration-seconds": 60,
        }
    )
    assert s.gate("Failover") is True
    assert s.gate("GracefulEviction") is False
    assert s.failover_eviction_timeout == timedelta(minutes=5)
    assert s.graceful_eviction_timeout == timedelta(minutes=10)
    assert s.cluster_monitor_grace_period == timedelta(hours=1, minutes=2, seconds=3)
    assert s.cluster_monitor_period == timedelta(milliseconds=300)
    assert s.enable_no_execute_taint_eviction is True
    assert s.no_execute_taint_eviction_purge_mode is PurgeMode.DIRECTLY
    assert s.resource_eviction_rate == 2.5
    assert s.cluster_lease_renew_interval_fraction == 1.0
    assert s.concurrent_work_syncs == 7
    assert s.admission_config() == AdmissionConfig(
        allow_no_execute_taint_policy=True,
        default_not_ready_toleration_seconds=300,
        default_unreachable_toleration_seconds=60,
    )


def test_an_optional_setting_given_as_null_stays_off() -> None:
    assert (
        Settings.from_flags({"failover-eviction-timeout": None}).failover_eviction_timeout is None
    )


@pytest.mark.parametrize("text", ["1", "t", "T", "TRUE", "true", "True"])
def test_bools_parse_as_go_does(text: str) -> None:
    assert Settings.from_flags({"enable-taint-manager": "false"}).enable_taint_manager is False
    assert Settings.from_flags({"enable-taint-manager": text}).enable_taint_manager is True


def test_an_unknown_setting_is_named_with_a_suggestion() -> None:
    with pytest.raises(SettingsError) as info:
        Settings.from_flags({"gracefull-eviction-timeout": "5m"})
    assert info.value.setting == "gracefull-eviction-timeout"
    assert str(info.value) == (
        'unknown setting "gracefull-eviction-timeout"; did you mean "graceful-eviction-timeout"?'
    )
    with pytest.raises(SettingsError, match=r'^unknown setting "--feature-gates"; did you mean'):
        Settings.from_flags({"--feature-gates": "Failover=true"})
    with pytest.raises(SettingsError, match=r'^unknown setting "zzz"$'):
        Settings.from_flags({"zzz": 1})


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        (
            "graceful-eviction-timeout",
            "10x",
            'invalid value "10x" for setting "graceful-eviction-timeout": time: unknown unit "x" '
            'in duration "10x"; expected a duration such as "300ms", "5m" or "1h2m3s", or whole seconds',
        ),
        (
            "cluster-monitor-period",
            1.5,
            'invalid value 1.5 for setting "cluster-monitor-period": got float 1.5; expected a '
            'duration such as "300ms", "5m" or "1h2m3s", or whole seconds',
        ),
        (
            "failover-eviction-timeout",
            True,
            'invalid value true for setting "failover-eviction-timeout": got bool True; expected a '
            'duration such as "300ms", "5m" or "1h2m3s", or whole seconds',
        ),
        (
            "enable-taint-manager",
            "yes",
            'invalid value "yes" for setting "enable-taint-manager": strconv.ParseBool: parsing '
            '"yes": invalid syntax; expected true or false',
        ),
        (
            "concurrent-work-syncs",
            "five",
            'invalid value "five" for setting "concurrent-work-syncs": strconv.ParseInt: parsing '
            '"five": invalid syntax; expected an integer',
        ),
        (
            "resource-eviction-rate",
            "fast",
            'invalid value "fast" for setting "resource-eviction-rate": strconv.ParseFloat: '
            'parsing "fast": invalid syntax; expected a number',
        ),
        (
            "no-execute-taint-eviction-purge-mode",
            "Never",
            'invalid value "Never" for setting "no-execute-taint-eviction-purge-mode": '
            'Unsupported value: "Never"; expected "Directly" or "Gracefully"',
        ),
        (
            "cluster-monitor-period",
            None,
            'invalid value null for setting "cluster-monitor-period": got NoneType None; '
            'expected a duration such as "300ms", "5m" or "1h2m3s", or whole seconds',
        ),
    ],
)
def test_a_bad_value_names_the_setting_and_the_expected_form(
    setting: str, value: object, message: str
) -> None:
    with pytest.raises(SettingsError) as info:
        Settings.from_flags({setting: value})  # type: ignore[dict-item]
    assert info.value.setting == setting
    assert str(info.value) == message


def test_a_negative_eviction_rate_is_refused() -> None:
    with pytest.raises(SettingsError, match='"resource-eviction-rate": must be non-negative'):
        Settings.from_flags({"resource-eviction-rate": -1})


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("Foo=true", "unrecognized feature gate: Foo"),
        ("Failover", "missing bool value for Failover"),
        (
            "Failover=yes",
            'invalid value of Failover=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
        ),
    ],
)
def test_feature_gates_are_refused_as_featuregate_refuses_them(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=f"^{error}$"):
        FeatureGates.parse(text)
    with pytest.raises(SettingsError, match=f'for setting "feature-gates": {error}; expected'):
        Settings.from_flags({"feature-gates": text})


def test_feature_gate_lists_allow_spaces_and_empty_items() -> None:
    gates = FeatureGates.parse(" Failover = true ,,GracefulEviction=0,")
    assert gates.enabled("Failover") is True
    assert gates.enabled("GracefulEviction") is False


def test_all_alpha_and_all_beta_set_the_gates_not_named() -> None:
    gates = FeatureGates.parse("AllAlpha=true,MultiClusterService=false,AllBeta=false")
    assert gates.enabled("PropagationPolicyPreemption") is True
    assert gates.enabled("MultiClusterService") is False
    assert gates.enabled("GracefulEviction") is False
    assert gates.enabled("Failover") is False


def test_asking_for_an_unknown_gate_is_an_error() -> None:
    with pytest.raises(ValueError, match='feature "Nope" is not registered in FeatureGate'):
        Settings().gate("Nope")


def test_settings_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Settings().enable_taint_manager = False  # type: ignore[misc]
