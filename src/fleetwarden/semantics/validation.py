"""Name, key and value rules of k8s.io/apimachinery validation, with its exact messages."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from fleetwarden.api.errors import ErrorList, Path
from fleetwarden.api.meta import LabelSelector, ObjectMeta

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = f"({_LABEL_KEY_FMT})?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)

_LABEL_KEY_RE = re.compile(f"^{_LABEL_KEY_FMT}$")
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE_FMT}$")
_DNS1123_LABEL_RE = re.compile(f"^{_DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_DNS1035_LABEL_RE = re.compile(f"^{_DNS1035_LABEL_FMT}$")

LABEL_VALUE_MAX_LENGTH = 63
DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def max_len_error(length: int, unit: str = "characters") -> str:
    """util/validation says characters; the newer content package (label keys and
    values, and their DNS prefixes) says bytes, and counts bytes."""
    return f"must be no more than {length} {unit}"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def _length(value: str, unit: str) -> int:
    return len(value.encode()) if unit == "bytes" else len(value)


def _regex_ok(pattern: re.Pattern[str], value: str) -> bool:
    # Go's `$` does not match before a trailing newline; Python's does.
    return pattern.fullmatch(value) is not None


def is_dns1123_subdomain(value: str, unit: str = "characters") -> list[str]:
    errs = []
    if _length(value, unit) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH, unit))
    if not _regex_ok(_DNS1123_SUBDOMAIN_RE, value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_path_segment_name(value: str) -> list[str]:
    """path.IsValidPathSegmentName: a name that can stand as one segment of a URL path."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _regex_ok(_DNS1123_LABEL_RE, value):
        if _regex_ok(_DNS1123_SUBDOMAIN_RE, value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:  # DNS1035LabelMaxLength: the same 63
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _regex_ok(_DNS1035_LABEL_RE, value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """A label key or taint key: an optional DNS subdomain prefix, '/', and a name."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix, "bytes"))
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _length(name, "bytes") > 63:
        errs.append("name part " + max_len_error(63, "bytes"))
    if not _regex_ok(_LABEL_KEY_RE, name):
        errs.append(
            "name part "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_label_value(value: str) -> list[str]:
    errs = []
    if _length(value, "bytes") > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH, "bytes"))
    if not _regex_ok(_LABEL_VALUE_RE, value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


_CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_MAP_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_CONFIG_MAP_KEY_RE = re.compile(f"^{_CONFIG_MAP_KEY_FMT}$")
_PORT_NAME_CHARSET_RE = re.compile("^[-a-z0-9]+$")
_PERCENT_FMT = "[0-9]+%"
_PERCENT_RE = re.compile(f"^{_PERCENT_FMT}$")
_PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%'"


def is_config_map_key(value: str) -> list[str]:
    """A key of a ConfigMap's or a Secret's data."""
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _regex_ok(_CONFIG_MAP_KEY_RE, value):
        examples = ("key.name", "KEY_NAME", "key-name")
        errs.append(regex_error(_CONFIG_MAP_KEY_MSG, _CONFIG_MAP_KEY_FMT, *examples))
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    """An IANA_SVC_NAME: at most 15 of [-a-z0-9], a letter among them, no `--`, no `-` at
    either end."""
    errs = []
    if len(port) > 15:
        errs.append(max_len_error(15))
    if not _regex_ok(_PORT_NAME_CHARSET_RE, port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port[:1] == "-" or port[-1:] == "-":
        errs.append("must not begin or end with a hyphen")
    return errs


def is_valid_percent(value: str) -> list[str]:
    if _regex_ok(_PERCENT_RE, value):
        return []
    return [regex_error(_PERCENT_MSG, _PERCENT_FMT, "1%", "93%")]


NEGATIVE_ERROR = "must be greater than or equal to 0"


def validate_nonnegative(value: int, path: Path) -> ErrorList:
    """ValidateNonnegativeField."""
    return [path.invalid(value, NEGATIVE_ERROR)] if value < 0 else []


def validate_qualified_name(value: str, path: Path) -> ErrorList:
    return [path.invalid(value, msg) for msg in is_qualified_name(value)]


def validate_label_value(value: str, path: Path) -> ErrorList:
    return [path.invalid(value, msg) for msg in is_label_value(value)]


def validate_labels(labels: Mapping[str, str] | None, path: Path) -> ErrorList:
    """metav1validation.ValidateLabels."""
    errs: ErrorList = []
    for key, value in (labels or {}).items():
        errs += validate_qualified_name(key, path)
        errs += validate_label_value(value, path.key(key))
    return errs


def validate_annotations(annotations: Mapping[str, str] | None, path: Path) -> ErrorList:
    errs: ErrorList = []
    total = 0
    for key, value in (annotations or {}).items():
        errs += [path.invalid(key, m) for m in is_qualified_name(key.lower())]
        total += len(key) + len(value)
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(path.too_long(TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_label_selector(selector: LabelSelector | None, path: Path) -> ErrorList:
    """metav1validation.ValidateLabelSelector."""
    if selector is None:
        return []
    errs: ErrorList = []
    for i, req in enumerate(selector.match_expressions or []):
        rpath = path.child("matchExpressions").index(i)
        if req.operator in ("In", "NotIn"):
            if not req.values:
                errs.append(
                    rpath.child("values").required(
                        "must be specified when `operator` is 'In' or 'NotIn'"
                    )
                )
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                errs.append(
                    rpath.child("values").forbidden(
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                    )
                )
        else:
            errs.append(
                rpath.child("operator").invalid(req.operator, "not a valid selector operator")
            )
        errs += validate_qualified_name(req.key, rpath.child("key"))
    errs += validate_labels(selector.match_labels, path.child("matchLabels"))
    return errs


# "subdomain", "label", or a kind's own check (ValidateObjectMeta's nameFn).
NameRule = str | Callable[[str], list[str]]


def validate_object_meta(
    meta: ObjectMeta, *, namespaced: bool, name_rule: NameRule = "subdomain"
) -> ErrorList:
    """apimachinery ValidateObjectMeta: name, namespace, labels and annotations."""
    path = Path("metadata")
    errs: ErrorList = []
    if not meta.name and not meta.generate_name:
        errs.append(path.child("name").required("name or generateName is required"))
    elif meta.name:
        if callable(name_rule):
            check = name_rule
        else:
            check = is_dns1123_label if name_rule == "label" else is_dns1123_subdomain
        errs += [path.child("name").invalid(meta.name, m) for m in check(meta.name)]
    if namespaced:
        if not meta.namespace:
            errs.append(path.child("namespace").required())
        else:
            errs += [
                path.child("namespace").invalid(meta.namespace, m)
                for m in is_dns1123_label(meta.namespace)
            ]
    elif meta.namespace:
        errs.append(path.child("namespace").forbidden("not allowed on this type"))
    errs += validate_labels(meta.labels, path.child("labels"))
    errs += validate_annotations(meta.annotations, path.child("annotations"))
    return errs
