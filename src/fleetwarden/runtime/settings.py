"""Settings: the CLI flags of `fleetwarden up`, named and defaulted as Karmada's are today.

A scenario's `settings` uses the very same names, without the leading dashes. Each field
below is a flag: its name with `_` as `-`. Settings of older Karmada releases (the seeds'
v1.13 and earlier) are off unless given: their upstream defaults would bring back the
behaviour Karmada has since dropped.
"""

from __future__ import annotations

import difflib
import json
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin, get_type_hints

from fleetwarden.semantics.durations import format_duration, parse_duration

if TYPE_CHECKING:
    from fleetwarden.admission.chain import AdmissionConfig

FlagValue = str | int | float | bool | None

_DECIMAL = re.compile(r"[+-]?[0-9]+")


class SettingsError(ValueError):
    """A setting that is unknown or whose value does not parse; names the setting."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(message)
        self.setting = setting


@dataclass(frozen=True)
class FeatureSpec:
    default: bool
    pre_release: str  # "Alpha" or "Beta"


# pkg/features/features.go, DefaultFeatureGates.
KARMADA_FEATURES: Mapping[str, FeatureSpec] = {
    "Failover": FeatureSpec(False, "Beta"),
    "GracefulEviction": FeatureSpec(True, "Beta"),
    "PropagateDeps": FeatureSpec(True, "Beta"),
    "CustomizedClusterResourceModeling": FeatureSpec(True, "Beta"),
    "PropagationPolicyPreemption": FeatureSpec(False, "Alpha"),
    "MultiClusterService": FeatureSpec(False, "Alpha"),
    "ResourceQuotaEstimate": FeatureSpec(False, "Alpha"),
    "StatefulFailoverInjection": FeatureSpec(False, "Alpha"),
    "PriorityBasedScheduling": FeatureSpec(True, "Beta"),
    "FederatedQuotaEnforcement": FeatureSpec(False, "Alpha"),
    "LoggingAlphaOptions": FeatureSpec(False, "Alpha"),
    "LoggingBetaOptions": FeatureSpec(True, "Beta"),
    "ContextualLogging": FeatureSpec(True, "Beta"),
    "MultiplePodTemplatesScheduling": FeatureSpec(False, "Alpha"),
    "ControllerPriorityQueue": FeatureSpec(True, "Beta"),
    "WorkloadAffinity": FeatureSpec(False, "Alpha"),
    "SchedulingOvercommitProtection": FeatureSpec(False, "Alpha"),
}
# component-base's special gates: set every Alpha (Beta) gate not named on its own.
_ALL_OF_STAGE = {"Alpha": "AllAlpha", "Beta": "AllBeta"}

_GO_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def parse_go_bool(text: str) -> bool:
    """strconv.ParseBool, with its error message."""
    if text not in _GO_BOOLS:
        raise ValueError(f"strconv.ParseBool: parsing {_go_quote(text)}: invalid syntax")
    return _GO_BOOLS[text]


@dataclass(frozen=True)
class FeatureGates:
    """component-base's feature gate over Karmada's gates: defaults, then `--feature-gates`."""

    overrides: tuple[tuple[str, bool], ...] = ()

    @classmethod
    def parse(cls, text: str) -> FeatureGates:
        """`Failover=true,GracefulEviction=false`, refused as featuregate.Set refuses it."""
        overrides: dict[str, bool] = {}
        for pair in text.split(","):
            if not pair:
                continue
            name, has_value, value = (part.strip() for part in pair.partition("="))
            if not has_value:
                raise ValueError(f"missing bool value for {name}")
            try:
                overrides[name] = parse_go_bool(value)
            except ValueError as exc:
                raise ValueError(f"invalid value of {name}={value}, err: {exc}") from None
        for name in overrides:
            if name not in KARMADA_FEATURES and name not in _ALL_OF_STAGE.values():
                raise ValueError(f"unrecognized feature gate: {name}")
        return cls(tuple(overrides.items()))

    def enabled(self, name: str) -> bool:
        spec = KARMADA_FEATURES.get(name)
        if spec is None:
            raise ValueError(f"feature {_go_quote(name)} is not registered in FeatureGate")
        overrides = dict(self.overrides)
        if name in overrides:
            return overrides[name]
        return overrides.get(_ALL_OF_STAGE[spec.pre_release], spec.default)


class PurgeMode(StrEnum):
    """The values --no-execute-taint-eviction-purge-mode accepts."""

    DIRECTLY = "Directly"
    GRACEFULLY = "Gracefully"


@dataclass(frozen=True)
class Settings:
    """The hub's flags; upstream's file for each group is named above it."""

    # karmada-controller-manager: cmd/controller-manager/app/options/options.go
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    cluster_status_update_frequency: timedelta = timedelta(seconds=10)
    cluster_success_threshold: timedelta = timedelta(seconds=30)
    cluster_failure_threshold: timedelta = timedelta(seconds=30)
    cluster_monitor_period: timedelta = timedelta(seconds=5)
    cluster_monitor_grace_period: timedelta = timedelta(seconds=40)
    cluster_startup_grace_period: timedelta = timedelta(seconds=60)
    cluster_cache_sync_timeout: timedelta = timedelta(minutes=2)  # util.CacheSyncTimeout
    concurrent_cluster_syncs: int = 5
    concurrent_clusterresourcebinding_syncs: int = 5
    concurrent_resourcebinding_syncs: int = 5
    concurrent_work_syncs: int = 5
    enable_taint_manager: bool = True
    graceful_eviction_timeout: timedelta = timedelta(minutes=10)
    # pkg/sharedcli/ratelimiterflag/ratelimiterflag.go
    rate_limiter_base_delay: timedelta = timedelta(milliseconds=5)
    rate_limiter_max_delay: timedelta = timedelta(seconds=1000)
    rate_limiter_qps: int = 10
    rate_limiter_bucket_size: int = 100
    # cmd/controller-manager/app/options/cluster_failover.go
    enable_no_execute_taint_eviction: bool = False
    no_execute_taint_eviction_purge_mode: PurgeMode = PurgeMode.GRACEFULLY
    resource_eviction_rate: float = 0.5
    # The eviction queue's dynamic rate (Karmada's eviction-queue proposal, karmada#6777),
    # per region as kube's node lifecycle controller per zone (docs/hub.md, fleet protection).
    secondary_resource_eviction_rate: float = 0.1
    unhealthy_cluster_threshold: float = 0.55
    large_cluster_num_threshold: int = 10
    # karmada-agent (pull-mode members): cmd/agent/app/options/options.go
    cluster_lease_duration: timedelta = timedelta(seconds=40)
    cluster_lease_renew_interval_fraction: float = 0.25
    # karmada-scheduler: cmd/scheduler/app/options/options.go
    enable_empty_workload_propagation: bool = False
    enable_scheduler_estimator: bool = False
    # karmada-webhook: cmd/webhook/app/options/options.go
    allow_no_execute_taint_policy: bool = False
    # Karmada <= v1.13, off unless given. Upstream defaulted them to 5m (controller
    # manager) and 300 (webhook): a NoExecute taint after failover-eviction-timeout, and
    # tolerations of it added to every PropagationPolicy.
    failover_eviction_timeout: timedelta | None = None
    default_not_ready_toleration_seconds: int | None = None
    default_unreachable_toleration_seconds: int | None = None

    def __post_init__(self) -> None:
        for attr in ("resource_eviction_rate", "secondary_resource_eviction_rate",
                     "large_cluster_num_threshold"):  # fmt: skip
            if getattr(self, attr) < 0:
                self._refuse(attr, "must be non-negative")
        if not 0 <= self.unhealthy_cluster_threshold <= 1:
            self._refuse("unhealthy_cluster_threshold", "must be between 0 and 1")

    def _refuse(self, attr: str, rule: str) -> None:
        flag = attr.replace("_", "-")
        raise SettingsError(
            flag, f"invalid value {getattr(self, attr)} for setting {_go_quote(flag)}: {rule}"
        )

    @classmethod
    def from_flags(cls, flags: Mapping[str, FlagValue]) -> Settings:
        """Settings from flag names without dashes (`graceful-eviction-timeout: 5m`)."""
        by_flag = {f.name.replace("_", "-"): f.name for f in fields(cls)}
        types_ = get_type_hints(cls)
        values: dict[str, Any] = {}
        for flag, raw in flags.items():
            attr = by_flag.get(flag)
            if attr is None:
                raise SettingsError(flag, _unknown(flag, list(by_flag)))
            values[attr] = _parse(flag, types_[attr], raw)
        return cls(**values)

    def to_flags(self) -> dict[str, str]:
        """The settings as flag values from_flags reads back (unset ones left out): what
        the hub publishes for `what-if` to run with."""
        flags: dict[str, str] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                flags[f.name.replace("_", "-")] = _flag_text(value)
        return flags

    def gate(self, name: str) -> bool:
        """Whether a Karmada feature gate is on (`settings.gate("Failover")`)."""
        return self.feature_gates.enabled(name)

    def admission_config(self) -> AdmissionConfig:
        # Here, not at the top: admission is every kind's rules, and the CLI imports this
        # module for every command, for the options of up and agent.
        from fleetwarden.admission.chain import AdmissionConfig

        return AdmissionConfig(
            allow_no_execute_taint_policy=self.allow_no_execute_taint_policy,
            default_not_ready_toleration_seconds=self.default_not_ready_toleration_seconds,
            default_unreachable_toleration_seconds=self.default_unreachable_toleration_seconds,
        )


def _flag_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, timedelta):
        return format_duration(value)
    if isinstance(value, FeatureGates):
        return ",".join(f"{name}={_flag_text(on)}" for name, on in value.overrides)
    return str(value)


def _unknown(flag: str, known: list[str]) -> str:
    close = difflib.get_close_matches(flag, known, n=1)
    hint = f"; did you mean {_go_quote(close[0])}?" if close else ""
    return f"unknown setting {_go_quote(flag)}{hint}"


def _as_text(value: FlagValue) -> str:
    if isinstance(value, str):
        return value
    raise ValueError(f"got {type(value).__name__} {value!r}")


def _as_bool(value: FlagValue) -> bool:
    return value if isinstance(value, bool) else parse_go_bool(_as_text(value))


def _as_int(value: FlagValue) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = _as_text(value)
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f"strconv.ParseInt: parsing {_go_quote(text)}: invalid syntax")
    return int(text)


def _as_float(value: FlagValue) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    text = _as_text(value)
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"strconv.ParseFloat: parsing {_go_quote(text)}: invalid syntax") from None


def _as_duration(value: FlagValue) -> timedelta:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"got {type(value).__name__} {value!r}")
    return parse_duration(value)


def _as_purge_mode(value: FlagValue) -> PurgeMode:
    text = _as_text(value)
    try:
        return PurgeMode(text)
    except ValueError:
        raise ValueError(f"Unsupported value: {_go_quote(text)}") from None


# Per field type: its parser, and the form a value must have.
_PARSERS: dict[Any, tuple[Callable[[FlagValue], Any], str]] = {
    bool: (_as_bool, "true or false"),
    int: (_as_int, "an integer"),
    float: (_as_float, "a number"),
    timedelta: (
        _as_duration,
        'a duration such as "300ms", "5m" or "1h2m3s", or whole seconds',
    ),
    PurgeMode: (_as_purge_mode, " or ".join(_go_quote(m) for m in PurgeMode)),
    FeatureGates: (
        lambda value: FeatureGates.parse(_as_text(value)),
        'comma-separated gates, such as "Failover=true,GracefulEviction=false"',
    ),
}


def _parse(flag: str, type_: Any, raw: FlagValue) -> Any:
    optional = get_origin(type_) in (Union, types.UnionType)
    if optional:
        if raw is None:
            return None
        type_ = next(arg for arg in get_args(type_) if arg is not type(None))
    parse, form = _PARSERS[type_]
    try:
        return parse(raw)
    except ValueError as exc:
        shown = _go_quote(raw) if isinstance(raw, str) else json.dumps(raw)
        raise SettingsError(
            flag,
            f"invalid value {shown} for setting {_go_quote(flag)}: {exc}; expected {form}",
        ) from None


# leader election ----------------------------------------------------------------------------

# leaderelection.JitterFactor: how much longer than the retry period a candidate may wait.
JITTER_FACTOR = 1.2


@dataclass(frozen=True)
class LeaderElectionConfiguration:
    """componentbaseconfig.LeaderElectionConfiguration with karmada-controller-manager's
    defaults (cmd/controller-manager/app/options/options.go); each field is the flag
    `--leader-elect-<field>` (`--leader-elect` for leader_elect)."""

    leader_elect: bool = True
    lease_duration: timedelta = timedelta(seconds=15)
    renew_deadline: timedelta = timedelta(seconds=10)
    retry_period: timedelta = timedelta(seconds=2)
    resource_namespace: str = "karmada-system"

    def __post_init__(self) -> None:
        if self.leader_elect:  # the timings matter only to an elector
            self._validate()

    @staticmethod
    def flag(attr: str) -> str:
        return (
            "leader-elect" if attr == "leader_elect" else f"leader-elect-{attr}".replace("_", "-")
        )

    @classmethod
    def from_flags(cls, flags: Mapping[str, str]) -> LeaderElectionConfiguration:
        """The configuration from flag values as given (`{"leader-elect-lease-duration":
        "15s"}`); SettingsError names the flag whose value is wrong."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = cls.flag(f.name)
            if name in flags:
                values[f.name] = _parse_flag(name, type(f.default), flags[name])
        return cls(**values)

    def _validate(self) -> None:
        """NewLeaderElector's checks, each naming the flags it relates."""
        lease, renew, retry = self.lease_duration, self.renew_deadline, self.retry_period
        for attr, value in (("lease_duration", lease), ("renew_deadline", renew),
                            ("retry_period", retry)):  # fmt: skip
            if value <= timedelta(0):
                self._refuse(attr, f"{_camel(attr)} must be greater than zero")
        if lease <= renew:
            self._refuse(
                "lease_duration",
                "leaseDuration must be greater than renewDeadline "
                f"(--leader-elect-renew-deadline={format_duration(renew)})",
            )
        if renew <= retry * JITTER_FACTOR:
            self._refuse(
                "renew_deadline",
                f"renewDeadline must be greater than retryPeriod*JitterFactor ({JITTER_FACTOR}) "
                f"(--leader-elect-retry-period={format_duration(retry)})",
            )

    def _refuse(self, attr: str, rule: str) -> None:
        flag = self.flag(attr)
        value = format_duration(getattr(self, attr))
        raise SettingsError(flag, f'invalid value "{value}" for flag "--{flag}": {rule}')


def _camel(attr: str) -> str:
    head, *rest = attr.split("_")
    return head + "".join(word.title() for word in rest)


def _parse_flag(flag: str, type_: type, text: str) -> Any:
    try:
        if type_ is bool:
            return parse_go_bool(text)
        if type_ is timedelta:
            return parse_duration(text)
    except ValueError as exc:
        raise SettingsError(flag, f'invalid value "{text}" for flag "--{flag}": {exc}') from None
    return text
