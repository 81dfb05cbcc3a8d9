"""The workload kinds as kube-apiserver validates them (pkg/apis/apps/validation,
pkg/apis/batch/validation, pkg/apis/policy/validation): Deployment, ReplicaSet,
StatefulSet, DaemonSet, Job, CronJob, and the PodDisruptionBudget that guards them.

Fields upstream defaults are checked as their defaults where they are absent (a strategy's
type is RollingUpdate, a rolling update's maxSurge and maxUnavailable 25%, a pod template's
restart policy Always); a Job's selector, which upstream generates, is checked only if given.
As upstream, a StatefulSet's pod template is checked for its labels alone, not its pod spec.

Not covered: updates (immutable selectors, a Job's template and completions, a StatefulSet's
fixed fields), status, Job pod failure and success policies, indexed-Job limits.
"""

from __future__ import annotations

import re
import zoneinfo

from fleetwarden.admission.builtin.pods import (
    Obj,
    one_of,
    validate_pod_template,
)
from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.meta import LabelSelector
from fleetwarden.semantics.cron import CronError, parse_standard
from fleetwarden.semantics.selectors import NOTHING, Selector, SelectorError
from fleetwarden.semantics.selectors import label_selector_as_selector as as_selector
from fleetwarden.semantics.validation import (
    is_valid_percent,
    validate_label_selector,
    validate_labels,
    validate_nonnegative,
)

SPEC = Path("spec")
_NO_MATCH = "`selector` does not match template `labels`"
_INVALID_SELECTOR = "invalid label selector"


# --- selectors and templates ---------------------------------------------------------------------


def _selector(
    spec: Obj, noun: str | None, *, required: bool = True, invalid: str | None = None
) -> tuple[ErrorList, Selector | None]:
    """The selector's errors (an empty one refused for `noun` if given; one that does not
    convert, with detail `invalid` if given), and the labels.Selector it converts to, None
    if it does not; a nil one matches nothing."""
    raw = spec.get("selector")
    path = SPEC.child("selector")
    if raw is None:
        return ([path.required()] if required else []), NOTHING
    selector = LabelSelector.model_validate(raw)
    errs = validate_label_selector(selector, path)
    if noun and not raw.get("matchLabels") and not raw.get("matchExpressions"):
        errs.append(path.invalid({}, f"empty selector is invalid for {noun}"))
    try:
        return errs, as_selector(selector)
    except SelectorError:
        return errs + ([] if invalid is None else [path.invalid(raw, invalid)]), None


def _labels_match(selector: Selector | None, template: Obj, path: Path) -> ErrorList:
    labels = (template.get("metadata") or {}).get("labels")
    if selector is None or selector.matches(labels):
        return []
    shown = dict(sorted(labels.items())) if labels is not None else None  # Go sorts map keys
    return [path.child("metadata", "labels").invalid(shown, _NO_MATCH)]


def _always_restarted(template: Obj, path: Path, kind: str) -> ErrorList:
    """A controller's pods restart Always, and have no deadline."""
    spec = template.get("spec") or {}
    errs = []
    policy = spec.get("restartPolicy") or "Always"
    if policy != "Always":
        errs.append(path.child("spec", "restartPolicy").not_supported(policy, ("Always",)))
    if "activeDeadlineSeconds" in spec:
        detail = f"activeDeadlineSeconds in {kind} is not Supported"
        errs.append(path.child("spec", "activeDeadlineSeconds").forbidden(detail))
    return errs


def _replica_set_template(spec: Obj, selector: Selector) -> ErrorList:
    """ValidatePodTemplateSpecForReplicaSet (Deployments' too)."""
    path = SPEC.child("template")
    template = spec.get("template") or {}
    errs = _labels_match(selector, template, path)  # an empty selector matches any labels
    errs += validate_pod_template(template, path)
    return errs + _always_restarted(template, path, "ReplicaSet")


def _nonnegative(spec: Obj, *fields: str, path: Path = SPEC) -> ErrorList:
    return [e for f in fields if f in spec for e in validate_nonnegative(spec[f], path.child(f))]


# --- int or percent ------------------------------------------------------------------------------


def _int_or_percent(value: int | str, path: Path) -> ErrorList:
    """ValidatePositiveIntOrPercent and IsNotMoreThan100Percent."""
    if isinstance(value, int):
        return validate_nonnegative(value, path)
    messages = is_valid_percent(value)
    if messages:
        return [path.invalid(value, m) for m in messages]
    if _atoi(value[:-1]) > 100:
        return [path.invalid(value, "must not be greater than 100%")]
    return []


def _amount(value: int | str) -> int:
    """getIntOrPercentValue: a percentage's number, else the integer (a bad string is 0)."""
    if isinstance(value, int):
        return value
    if not is_valid_percent(value):
        return _atoi(value[:-1])
    return _atoi(value)


_INT64_MAX = (1 << 63) - 1


def _atoi(text: str) -> int:
    """What strconv.Atoi returns, its error ignored: 0 for what is not a number, the int64
    nearest to one out of range (which int() might not even convert: a few thousand digits
    are past its limit)."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return 0
    significant = text.lstrip("+-").lstrip("0")
    number = int(significant[:20] or "0")  # 20 digits are past int64 already
    if text[0] == "-":
        return max(-number, -_INT64_MAX - 1)
    return min(number, _INT64_MAX)


# --- apps/v1 -------------------------------------------------------------------------------------


def validate_deployment(obj: Obj, old: Obj | None) -> ErrorList:
    spec = obj.get("spec") or {}
    errs = _nonnegative(spec, "replicas")
    selector_errs, selector = _selector(spec, "deployment", invalid=_INVALID_SELECTOR)
    errs += selector_errs
    if selector is not None:
        errs += _replica_set_template(spec, selector)
    errs += _deployment_strategy(spec.get("strategy"), SPEC.child("strategy"))
    errs += _nonnegative(spec, "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds")
    deadline = spec.get("progressDeadlineSeconds")
    if deadline is not None and deadline <= spec.get("minReadySeconds", 0):
        detail = "must be greater than minReadySeconds"
        errs.append(SPEC.child("progressDeadlineSeconds").invalid(deadline, detail))
    return errs


def _deployment_strategy(strategy: Obj | None, path: Path) -> ErrorList:
    strategy = strategy or {}
    kind = strategy.get("type") or "RollingUpdate"
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is None:
            return []
        detail = "may not be specified when strategy `type` is 'Recreate'"
        return [path.child("rollingUpdate").forbidden(detail)]
    if kind != "RollingUpdate":
        return [path.not_supported(strategy, ("Recreate", "RollingUpdate"))]
    if rolling is None:
        return []  # upstream defaults it: 25% and 25%
    path = path.child("rollingUpdate")
    unavailable, surge = rolling.get("maxUnavailable", "25%"), rolling.get("maxSurge", "25%")
    errs = _int_or_percent(unavailable, path.child("maxUnavailable"))
    errs += _int_or_percent(surge, path.child("maxSurge"))
    if _amount(unavailable) == 0 and _amount(surge) == 0:
        detail = "may not be 0 when `maxSurge` is 0"
        errs.append(path.child("maxUnavailable").invalid(unavailable, detail))
    return errs


def validate_replica_set(obj: Obj, old: Obj | None) -> ErrorList:
    spec = obj.get("spec") or {}
    errs = _nonnegative(spec, "replicas", "minReadySeconds")
    # sic: upstream's word
    selector_errs, selector = _selector(spec, "deployment", invalid=_INVALID_SELECTOR)
    errs += selector_errs
    return errs if selector is None else errs + _replica_set_template(spec, selector)


def validate_stateful_set(obj: Obj, old: Obj | None) -> ErrorList:
    spec = obj.get("spec") or {}
    errs: ErrorList = []
    policy = spec.get("podManagementPolicy")
    if policy and policy not in ("OrderedReady", "Parallel"):
        detail = "must be 'OrderedReady' or 'Parallel'"
        errs.append(SPEC.child("podManagementPolicy").invalid(policy, detail))
    errs += _stateful_set_strategy(spec.get("updateStrategy"), SPEC.child("updateStrategy"))
    retention = spec.get("persistentVolumeClaimRetentionPolicy") or {}
    path = SPEC.child("persistentVolumeClaimRetentionPolicy")
    for field in ("whenDeleted", "whenScaled"):
        errs += one_of(retention, field, ("Retain", "Delete"), path)
    errs += _nonnegative(spec, "replicas", "minReadySeconds")
    errs += _nonnegative(spec.get("ordinals") or {}, "start", path=SPEC.child("ordinals"))
    selector_errs, selector = _selector(spec, "statefulset", invalid="")
    errs += selector_errs
    template = spec.get("template") or {}
    path = SPEC.child("template")
    if selector is not None:
        errs += _labels_match(selector, template, path)  # an empty selector matches any labels
        meta = template.get("metadata") or {}
        errs += validate_labels(meta.get("labels"), path.child("labels"))
    return errs + _always_restarted(template, path, "StatefulSet")


def _stateful_set_strategy(strategy: Obj | None, path: Path) -> ErrorList:
    strategy = strategy or {}
    kind = strategy.get("type") or "RollingUpdate"
    rolling = strategy.get("rollingUpdate")
    if kind == "OnDelete":
        if rolling is None:
            return []
        detail = "only allowed for updateStrategy 'RollingUpdate'"
        return [path.child("rollingUpdate").invalid(rolling, detail)]
    if kind != "RollingUpdate":
        return [path.invalid(strategy, "must be 'RollingUpdate' or 'OnDelete'")]
    path = path.child("rollingUpdate")
    rolling = rolling or {}
    errs = _nonnegative(rolling, "partition", path=path)
    unavailable = rolling.get("maxUnavailable")
    if unavailable is not None:
        errs += _int_or_percent(unavailable, path.child("maxUnavailable"))
        if _amount(unavailable) == 0:
            errs.append(path.child("maxUnavailable").invalid(unavailable, "cannot be 0"))
    return errs


def validate_daemon_set(obj: Obj, old: Obj | None) -> ErrorList:
    spec = obj.get("spec") or {}
    errs, selector = _selector(spec, "daemonset", required=False)
    template = spec.get("template") or {}
    path = SPEC.child("template")
    errs += _labels_match(selector, template, path)
    errs += validate_pod_template(template, path)
    errs += _always_restarted(template, path, "DaemonSet")
    errs += _nonnegative(spec, "minReadySeconds", "templateGeneration")
    errs += _daemon_set_strategy(spec.get("updateStrategy"), SPEC.child("updateStrategy"))
    return errs + _nonnegative(spec, "revisionHistoryLimit")


def _daemon_set_strategy(strategy: Obj | None, path: Path) -> ErrorList:
    strategy = strategy or {}
    kind = strategy.get("type") or "RollingUpdate"
    rolling = strategy.get("rollingUpdate")
    if kind not in ("RollingUpdate", "OnDelete"):
        return [path.not_supported(strategy, ("RollingUpdate", "OnDelete"))]
    if kind == "OnDelete" or rolling is None:
        return []  # upstream defaults a rolling update: maxUnavailable 1, maxSurge 0
    path = path.child("rollingUpdate")
    unavailable, surge = rolling.get("maxUnavailable", 1), rolling.get("maxSurge", 0)
    errs = _int_or_percent(unavailable, path.child("maxUnavailable"))
    errs += _int_or_percent(surge, path.child("maxSurge"))
    if _amount(unavailable) and _amount(surge):
        detail = "may not be set when maxUnavailable is non-zero"
        errs.append(path.child("maxSurge").invalid(surge, detail))
    elif not _amount(unavailable) and not _amount(surge):
        errs.append(path.child("maxUnavailable").required("cannot be 0 when maxSurge is 0"))
    return errs


# --- batch/v1 ------------------------------------------------------------------------------------


def validate_job(obj: Obj, old: Obj | None) -> ErrorList:
    spec = obj.get("spec") or {}
    errs = _job_spec(spec, SPEC)
    if spec.get("selector") is None:
        # Upstream generates it, unless manualSelector asks for the user's own.
        return errs + ([SPEC.child("selector").required()] if spec.get("manualSelector") else [])
    selector_errs, selector = _selector(spec, None)
    errs += selector_errs
    errs += _labels_match(selector, spec.get("template") or {}, SPEC.child("template"))
    return errs


_JOB_COUNTS = ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
               "ttlSecondsAfterFinished", "backoffLimitPerIndex", "maxFailedIndexes")  # fmt: skip


def _job_spec(spec: Obj, path: Path) -> ErrorList:
    """validateJobSpec: its counts, completion mode, pod template and restart policy."""
    errs = _nonnegative(spec, *_JOB_COUNTS, path=path)
    errs += one_of(spec, "completionMode", ("NonIndexed", "Indexed"), path)
    if spec.get("completionMode") == "Indexed" and "completions" not in spec:
        errs.append(path.child("completions").required("when completion mode is Indexed"))
    template = spec.get("template") or {}
    errs += validate_pod_template(template, path.child("template"))
    policy = (template.get("spec") or {}).get("restartPolicy") or "Always"
    at = path.child("template", "spec", "restartPolicy")
    if policy == "Always":
        errs.append(at.required('valid values: "OnFailure", "Never"'))
    elif policy not in ("OnFailure", "Never"):
        errs.append(at.not_supported(policy, ("OnFailure", "Never")))
    return errs


# The CronJob controller names each Job after it with an 11-character suffix.
_CRON_JOB_NAME_MAX = 52
_TIME_ZONE_PART = re.compile(r"^[A-Za-z.\-_0-9+]{1,14}$")


def validate_cron_job(obj: Obj, old: Obj | None) -> ErrorList:
    spec = obj.get("spec") or {}
    errs = _schedule(spec, (old or {}).get("spec") or {})
    errs += _nonnegative(spec, "startingDeadlineSeconds")
    if "timeZone" in spec and spec["timeZone"] != ((old or {}).get("spec") or {}).get("timeZone"):
        errs += _time_zone(spec["timeZone"], SPEC.child("timeZone"))
    errs += one_of(spec, "concurrencyPolicy", ("Allow", "Forbid", "Replace"), SPEC)
    job = spec.get("jobTemplate") or {}
    job_spec = job.get("spec") or {}
    path = SPEC.child("jobTemplate", "spec")
    errs += _job_spec(job_spec, path)
    if "selector" in job_spec:
        detail = "`selector` will be auto-generated"
        errs.append(path.child("selector").invalid(job_spec["selector"], detail))
    if job_spec.get("manualSelector"):
        errs.append(path.child("manualSelector").not_supported(True, ("nil", "false")))
    errs += _nonnegative(spec, "successfulJobsHistoryLimit", "failedJobsHistoryLimit")
    name = (obj.get("metadata") or {}).get("name", "")
    if old is None and len(name) > _CRON_JOB_NAME_MAX:
        detail = f"must be no more than {_CRON_JOB_NAME_MAX} characters"
        errs.append(Path("metadata.name").invalid(name, detail))
    return errs


def _schedule(spec: Obj, old_spec: Obj) -> ErrorList:
    path = SPEC.child("schedule")
    schedule: str = spec.get("schedule", "")
    if not schedule:
        return [path.required()]
    errs = []
    try:
        parse_standard(schedule)
    except CronError as exc:
        errs.append(path.invalid(schedule, str(exc)))
    if "TZ" not in schedule:
        return errs
    if "TZ" not in old_spec.get("schedule", ""):
        detail = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
        errs.append(path.invalid(schedule, detail))
    elif "timeZone" in spec:
        detail = "cannot use both timeZone field and TZ or CRON_TZ in schedule"
        errs.append(path.invalid(schedule, detail))
    return errs


def _time_zone(zone: str, path: Path) -> ErrorList:
    """validateTimeZone: an IANA name the time zone database knows."""
    if not zone:
        return [path.invalid(zone, "timeZone must be nil or non-empty string")]
    unknown = [path.invalid(zone, f"unknown time zone {zone}")]
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TIME_ZONE_PART.match(part):
            return unknown
    if zone.lower() == "local":
        detail = (
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
        )
        return [path.invalid(zone, detail)]
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):  # "America" is a directory
        return unknown
    return []


# --- policy/v1 -----------------------------------------------------------------------------------

_UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")


def validate_pod_disruption_budget(obj: Obj, old: Obj | None) -> ErrorList:
    """ValidatePodDisruptionBudgetSpec: one of minAvailable and maxUnavailable, each a
    non-negative count or a percentage up to 100%; a valid selector; a known policy for
    unhealthy pods."""
    spec = obj.get("spec") or {}
    errs: ErrorList = []
    if "minAvailable" in spec and "maxUnavailable" in spec:
        errs.append(SPEC.invalid(spec, "minAvailable and maxUnavailable cannot be both set"))
    for field in ("minAvailable", "maxUnavailable"):
        if field in spec:
            errs += _int_or_percent(spec[field], SPEC.child(field))
    selector_errs, _ = _selector(spec, None, required=False)
    errs += selector_errs
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in _UNHEALTHY_POD_EVICTION_POLICIES:
        path = SPEC.child("unhealthyPodEvictionPolicy")
        errs.append(path.not_supported(policy, _UNHEALTHY_POD_EVICTION_POLICIES))
    return errs
