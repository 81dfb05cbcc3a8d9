"""Admission of the built-in kinds the hub serves: decoded by their Go types, then validated as
kube-apiserver validates them, with its field paths and messages.

Upstream: pkg/apis/core/validation, pkg/apis/apps/validation, pkg/apis/batch/validation,
k8s.io/apimachinery/pkg/util/validation, encoding/json's errors, robfig/cron v3.
"""

from __future__ import annotations

import base64
import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetwarden.admission import default_chain
from fleetwarden.api.errors import BadRequest, Invalid
from fleetwarden.api.registry import REGISTRY

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
CHAIN = default_chain()
DNS_LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
NO_MATCH = "`selector` does not match template `labels`"


def admit(obj: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
    previous = REGISTRY.decode(old) if old is not None else None
    return CHAIN.admit(obj, previous, now=NOW).to_dict()


def errors(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    previous = REGISTRY.decode(old) if old is not None else None
    with pytest.raises(Invalid) as caught:
        CHAIN.admit(obj, previous, now=NOW)
    return [str(e) for e in caught.value.errors]


def decode_error(obj: dict[str, Any]) -> str:
    with pytest.raises(BadRequest) as caught:
        CHAIN.admit(obj, now=NOW)
    assert caught.value.code == 400
    return caught.value.message


def obj(api_version: str, kind: str, name: str = "x", **fields: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **fields}


def config_map(**fields: Any) -> dict[str, Any]:
    return obj("v1", "ConfigMap", "cm", **fields)


def secret(**fields: Any) -> dict[str, Any]:
    return obj("v1", "Secret", "s", **fields)


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def template(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    containers = [{"name": "app", "image": "nginx"}]
    return {"metadata": {"labels": labels or {"app": "web"}}, "spec": {"containers": containers,
                                                                        **spec}}  # fmt: skip


def workload(kind: str, **spec: Any) -> dict[str, Any]:
    defaults = {"selector": {"matchLabels": {"app": "web"}}, "template": template()}
    return obj("apps/v1", kind, "web", spec={**defaults, **spec})


def deployment(**spec: Any) -> dict[str, Any]:
    return workload("Deployment", **spec)


# --- decoding: types, unknown fields, nulls ----------------------------------------------


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (config_map(data=[1]), "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: "
         "json: cannot unmarshal array into Go struct field ConfigMap.data of type "
         "map[string]string"),
        (config_map(data={"a": 1}), "ConfigMap in version \"v1\" cannot be handled as a "
         "ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type "
         "string"),
        (deployment(replicas="3"), "Deployment in version \"v1\" cannot be handled as a "
         "Deployment: json: cannot unmarshal string into Go struct field "
         "DeploymentSpec.spec.replicas of type int32"),
        (deployment(replicas=1.5), "Deployment in version \"v1\" cannot be handled as a "
         "Deployment: json: cannot unmarshal number 1.5 into Go struct field "
         "DeploymentSpec.spec.replicas of type int32"),
        (deployment(template={"spec": {"containers": [{"name": "a", "ports": [
            {"containerPort": "80"}]}]}}),
         "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot "
         "unmarshal string into Go struct field ContainerPort.spec.template.spec.containers"
         ".ports.containerPort of type int32"),
        (deployment(template={"spec": {"containers": {"name": "a"}}}),
         "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot "
         "unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type "
         "[]v1.Container"),
        (obj("batch/v1", "Job", spec={"activeDeadlineSeconds": True}),
         "Job in version \"v1\" cannot be handled as a Job: json: cannot unmarshal bool into "
         "Go struct field JobSpec.spec.activeDeadlineSeconds of type int64"),
        (obj("v1", "Namespace", metadata={"name": 7}),
         "Namespace in version \"v1\" cannot be handled as a Namespace: json: cannot unmarshal "
         "number into Go struct field ObjectMeta.metadata.name of type string"),
        (secret(data={"a": "abc"}),
         "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input "
         "byte 0"),
        (deployment(template={"spec": {"containers": [{"name": "a", "resources": {
            "limits": {"cpu": "lots"}}}]}}),
         "Deployment in version \"v1\" cannot be handled as a Deployment: quantities must match "
         "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ],
)  # fmt: skip
def test_a_value_of_the_wrong_type_is_a_bad_request(given, message):
    assert decode_error(given) == message


def test_numbers_pass_for_quantities_and_int_or_strings():
    container = {
        "name": "app",
        "image": "nginx",
        "resources": {"limits": {"cpu": 1, "memory": "1Gi"}},
    }
    spec = {"template": template() | {"spec": {"containers": [container]}},
            "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": "10%"}}}  # fmt: skip
    got = admit(deployment(**spec))["spec"]
    assert got["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] == 1
    assert got["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": "10%"}


def test_fields_the_go_type_lacks_are_dropped_and_recorded():
    given = deployment(paused=False, colour="blue")
    given["Spec"] = {}  # field names are case-sensitive
    given["spec"]["template"]["spec"]["containers"][0]["imagePullPolice"] = "Always"
    given["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
    request = CHAIN.review(given, now=NOW)
    # In the order of the object given.
    assert request.pruned == [
        "spec.template.spec.containers[0].imagePullPolice", "spec.colour", "Spec"
    ]  # fmt: skip
    stored = request.obj.to_dict()
    assert "colour" not in stored["spec"] and "Spec" not in stored
    assert stored["spec"]["paused"] is False
    assert stored["spec"]["template"]["spec"]["containers"][0] == {"name": "app", "image": "nginx"}
    assert stored["metadata"]["managedFields"] == given["metadata"]["managedFields"]
    assert "colour" in given["spec"]  # the object given is left alone


def test_a_null_leaves_a_field_unset():
    got = admit(deployment(replicas=None, strategy=None))
    assert "replicas" not in got["spec"] and "strategy" not in got["spec"]


def test_status_the_go_type_declares_is_kept():
    status = {"replicas": 2, "readyReplicas": 1, "conditions": [{"type": "Available",
              "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}  # fmt: skip
    assert admit(deployment() | {"status": status})["status"] == status
    namespace = obj("v1", "Namespace", status={"phase": "Active", "conditions": [
        {"type": "NamespaceDeletionDiscoveryFailure", "status": "False"}]})  # fmt: skip
    assert admit(namespace)["status"] == namespace["status"]


# --- ConfigMap and Secret ----------------------------------------------------------------


def test_config_map_keys():
    assert errors(config_map(data={"a b": "1", "..x": "2"}, binaryData={"a b": b64("3")})) == [
        'data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric '
        "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex "
        "used for validation is '[-._a-zA-Z0-9]+')",
        'data[a b]: Invalid value: "a b": duplicate of key present in binaryData',
        "data[..x]: Invalid value: \"..x\": must not start with '..'",
        'binaryData[a b]: Invalid value: "a b": a valid config key must consist of '
        "alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or "
        "'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    ]


def test_config_map_data_is_at_most_a_mebibyte():
    mebibyte = "x" * (1024 * 1024)
    assert admit(config_map(data={"a": mebibyte}))["data"]["a"] == mebibyte
    refused = errors(config_map(data={"a": mebibyte}, binaryData={"b": b64("y")}))
    assert refused == ["[]: Too long: may not be more than 1048576 bytes"]


def test_immutable_config_map_keeps_its_data():
    old = admit(config_map(data={"a": "1"}, immutable=True))
    assert admit(config_map(data={"a": "1"}, immutable=True), old)["data"] == {"a": "1"}
    assert errors(config_map(data={"a": "2"}), old) == [
        "immutable: Forbidden: field is immutable when `immutable` is set",
        "data: Forbidden: field is immutable when `immutable` is set",
    ]


def test_secret_string_data_is_written_into_data_and_the_type_defaults_to_opaque():
    got = admit(secret(data={"a": b64("1"), "b": b64("2")}, stringData={"b": "two", "c": "3"}))
    assert got["data"] == {"a": b64("1"), "b": b64("two"), "c": b64("3")}
    assert "stringData" not in got and got["type"] == "Opaque"


def test_secret_type_rules():
    assert errors(secret(type="kubernetes.io/tls", data={"tls.crt": b64("c")})) == [
        "data[tls.key]: Required value"
    ]
    assert errors(secret(type="kubernetes.io/basic-auth")) == [
        "data[username]: Required value", "data[password]: Required value"
    ]  # fmt: skip
    assert admit(secret(type="kubernetes.io/basic-auth", stringData={"password": ""}))
    assert errors(secret(type="kubernetes.io/dockerconfigjson", stringData={
        ".dockerconfigjson": "[]"}))  == [
        'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": json: cannot '
        "unmarshal array into Go value of type map[string]interface {}"
    ]  # fmt: skip
    assert errors(secret(type="kubernetes.io/service-account-token")) == [
        "metadata.annotations[kubernetes.io/service-account.name]: Required value"
    ]
    assert admit(secret(type="example.com/anything"))["type"] == "example.com/anything"


def test_secret_type_and_immutable_data_stay():
    old = admit(secret(type="kubernetes.io/tls", stringData={"tls.crt": "c", "tls.key": "k"},
                       immutable=True))  # fmt: skip
    changed = secret(stringData={"tls.crt": "c2", "tls.key": "k"}, immutable=True)
    assert errors(changed, old) == [
        'type: Invalid value: "Opaque": field is immutable',
        "data: Forbidden: field is immutable when `immutable` is set",
    ]


def test_secret_data_is_at_most_a_mebibyte_decoded():
    big = secret(data={"a": b64("x" * (1024 * 1024)), "b": b64("y")})
    assert errors(big) == ["data: Too long: may not be more than 1048576 bytes"]


# --- names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (obj("v1", "Namespace", "a.b"), 'metadata.name: Invalid value: "a.b": must not contain dots'),
        (obj("v1", "Namespace", "Team"), f'metadata.name: Invalid value: "Team": {DNS_LABEL_ERROR}'),
        (obj("v1", "Service", "9web", spec={"ports": [{"port": 80}]}),
         'metadata.name: Invalid value: "9web": a DNS-1035 label must consist of lower case '
         "alphanumeric characters or '-', start with an alphabetic character, and end with an "
         "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
         "'[a-z]([-a-z0-9]*[a-z0-9])?')"),
        (workload("StatefulSet") | {"metadata": {"name": "db.v1"}},
         'metadata.name: Invalid value: "db.v1": must not contain dots'),
        (obj("batch/v1", "CronJob", "c" * 53, spec={"schedule": "@daily", "jobTemplate": {
            "spec": {"template": template(restartPolicy="Never")}}}),
         f'metadata.name: Invalid value: "{"c" * 53}": must be no more than 52 characters'),
    ],
)  # fmt: skip
def test_names_per_kind(given, message):
    assert errors(given) == [message]


def test_a_deployment_may_have_dots_in_its_name():
    assert admit(deployment() | {"metadata": {"name": "web.v1"}})["metadata"]["name"] == "web.v1"


# --- workloads -------------------------------------------------------------------------------


def test_a_valid_deployment_is_stored_as_given():
    given = deployment(replicas=3, revisionHistoryLimit=0, progressDeadlineSeconds=600)
    got = admit(copy.deepcopy(given))
    assert got["spec"] == given["spec"] and got["metadata"]["namespace"] == "default"


@pytest.mark.parametrize(
    ("spec", "messages"),
    [
        ({"replicas": -1}, ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]),
        ({"selector": None}, ["spec.selector: Required value",
                              f'spec.template.metadata.labels: Invalid value: {{"app":"web"}}: {NO_MATCH}']),
        ({"selector": {}}, ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"]),
        ({"selector": {"matchLabels": {"app": "db"}}},
         [f'spec.template.metadata.labels: Invalid value: {{"app":"web"}}: {NO_MATCH}']),
        ({"selector": {"matchExpressions": [{"key": "app", "operator": "Has"}]}},
         ['spec.selector.matchExpressions[0].operator: Invalid value: "Has": not a valid '
          "selector operator",
          'spec.selector: Invalid value: {"matchExpressions":[{"key":"app","operator":"Has"}]}: '
          "invalid label selector"]),
        ({"template": {"metadata": {"labels": {"app": "web"}}}},
         ["spec.template.spec.containers: Required value"]),
        ({"template": template(restartPolicy="Never", activeDeadlineSeconds=5)},
         ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: '
          '"Always"', "spec.template.spec.activeDeadlineSeconds: Forbidden: "
          "activeDeadlineSeconds in ReplicaSet is not Supported"]),
        ({"strategy": {"type": "BlueGreen"}},
         ['spec.strategy: Unsupported value: {"type":"BlueGreen"}: supported values: '
          '"Recreate", "RollingUpdate"']),
        ({"strategy": {"type": "Recreate", "rollingUpdate": {}}},
         ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is "
          "'Recreate'"]),
        ({"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}}},
         ['spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 when '
          "`maxSurge` is 0"]),
        ({"strategy": {"rollingUpdate": {"maxUnavailable": "120%"}}},
         ['spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "120%": must not be '
          "greater than 100%"]),
        ({"revisionHistoryLimit": -1},
         ["spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"]),
        ({"minReadySeconds": 10, "progressDeadlineSeconds": 10},
         ["spec.progressDeadlineSeconds: Invalid value: 10: must be greater than minReadySeconds"]),
    ],
)  # fmt: skip
def test_deployment_rules(spec, messages):
    assert errors(deployment(**spec)) == messages


def test_containers_rules():
    containers = [
        {"name": "Web", "image": "nginx", "ports": [{"containerPort": 70000, "protocol": "HTTP"}]},
        {"name": "side", "image": ""},
        {"name": "side", "image": "busybox", "imagePullPolicy": "Sometimes"},
    ]
    init = [{"name": "side", "image": "busybox"}]
    spec = {"template": template(containers=containers, initContainers=init)}
    assert errors(deployment(**spec)) == [
        f'spec.template.spec.containers[0].name: Invalid value: "Web": {DNS_LABEL_ERROR}',
        "spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be "
        "between 1 and 65535, inclusive",
        'spec.template.spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": '
        'supported values: "SCTP", "TCP", "UDP"',
        "spec.template.spec.containers[1].image: Required value",
        'spec.template.spec.containers[2].imagePullPolicy: Unsupported value: "Sometimes": '
        'supported values: "Always", "IfNotPresent", "Never"',
        'spec.template.spec.containers[2].name: Duplicate value: "side"',
        'spec.template.spec.initContainers[0].name: Duplicate value: "side"',
    ]


def test_a_request_above_its_limit():
    resources = {"limits": {"cpu": "500m"}, "requests": {"cpu": 1}}
    containers = [{"name": "app", "image": "nginx", "resources": resources}]
    assert errors(deployment(template=template(containers=containers))) == [
        'spec.template.spec.containers[0].resources.requests: Invalid value: "1": must be less '
        "than or equal to cpu limit of 500m"
    ]


def test_replica_set_rules():
    assert errors(workload("ReplicaSet", replicas=-2, selector={})) == [
        "spec.replicas: Invalid value: -2: must be greater than or equal to 0",
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment",
    ]


BAD_SELECTOR = {"matchExpressions": [{"key": "app", "operator": "Has"}]}
BAD_OPERATOR = ('spec.selector.matchExpressions[0].operator: Invalid value: "Has": not a valid '
                "selector operator")  # fmt: skip
SHOWN = '{"matchExpressions":[{"key":"app","operator":"Has"}]}'


def test_a_selector_that_does_not_convert_skips_the_template():
    no_containers = {"metadata": {"labels": {"app": "db"}}}
    assert errors(workload("ReplicaSet", selector=BAD_SELECTOR, template=no_containers)) == [
        BAD_OPERATOR, f"spec.selector: Invalid value: {SHOWN}: invalid label selector"
    ]  # fmt: skip
    assert errors(workload("StatefulSet", selector=BAD_SELECTOR, template=no_containers)) == [
        BAD_OPERATOR, f"spec.selector: Invalid value: {SHOWN}"
    ]  # fmt: skip
    # A DaemonSet or a Job says nothing more of it, and checks its template all the same.
    assert errors(workload("DaemonSet", selector=BAD_SELECTOR, template=no_containers)) == [
        BAD_OPERATOR, "spec.template.spec.containers: Required value"
    ]  # fmt: skip


def test_stateful_set_rules():
    # As upstream, a StatefulSet's pod spec is left to the pods it makes.
    assert admit(workload("StatefulSet", template={"metadata": {"labels": {"app": "web"}}}))
    assert errors(workload("StatefulSet", podManagementPolicy="Random",
                           updateStrategy={"type": "OnDelete", "rollingUpdate": {}})) == [
        "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or "
        "'Parallel'",
        "spec.updateStrategy.rollingUpdate: Invalid value: {}: only allowed for updateStrategy "
        "'RollingUpdate'",
    ]  # fmt: skip
    assert errors(workload("StatefulSet", selector={})) == [
        "spec.selector: Invalid value: {}: empty selector is invalid for statefulset"
    ]


def test_daemon_set_rules():
    strategy = {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}
    assert errors(workload("DaemonSet", updateStrategy=strategy, minReadySeconds=-1)) == [
        "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
        "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when "
        "maxUnavailable is non-zero",
    ]
    assert errors(workload("DaemonSet", selector={})) == [
        "spec.selector: Invalid value: {}: empty selector is invalid for daemonset"
    ]


def job(**spec: Any) -> dict[str, Any]:
    return obj("batch/v1", "Job", "pi", spec={"template": template(restartPolicy="Never"), **spec})


def test_job_rules():
    assert admit(job(parallelism=2, completions=4))["spec"]["parallelism"] == 2
    assert errors(job(parallelism=-1, backoffLimit=-1, template=template())) == [
        "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
        "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0",
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ]
    assert errors(job(manualSelector=True)) == ["spec.selector: Required value"]
    assert errors(job(selector={"matchLabels": {"app": "db"}})) == [
        f'spec.template.metadata.labels: Invalid value: {{"app":"web"}}: {NO_MATCH}'
    ]


def cron_job(schedule: str | None, **spec: Any) -> dict[str, Any]:
    job_template = {"spec": {"template": template(restartPolicy="OnFailure")}}
    given = {"jobTemplate": job_template, **spec} | ({"schedule": schedule} if schedule else {})
    return obj("batch/v1", "CronJob", "nightly", spec=given)


@pytest.mark.parametrize("schedule", ["*/5 * * * *", "0 3 * * mon-fri", "@daily", "@every 1h30m",
                                      "15 0 1,15 jan,JUL ?"])  # fmt: skip
def test_cron_job_schedules(schedule):
    assert admit(cron_job(schedule))["spec"]["schedule"] == schedule


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        (None, "spec.schedule: Required value"),
        ("61 * * * *", 'spec.schedule: Invalid value: "61 * * * *": end of range (61) above '
         "maximum (59): 61"),
        ("* * *", 'spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: '
         "[* * *]"),
        ("@fortnightly", 'spec.schedule: Invalid value: "@fortnightly": unrecognized descriptor: '
         "@fortnightly"),
        ("x * * * *", 'spec.schedule: Invalid value: "x * * * *": failed to parse int from x: '
         'strconv.Atoi: parsing "x": invalid syntax'),
        ("*/0 * * * *", 'spec.schedule: Invalid value: "*/0 * * * *": step of range should be '
         "a positive number: */0"),
        ("@every 1y", 'spec.schedule: Invalid value: "@every 1y": failed to parse duration '
         '@every 1y: time: unknown unit "y" in duration "1y"'),
        ("TZ=UTC 0 * * * *", 'spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ '
         "or CRON_TZ in schedule, use timeZone field instead"),
    ],
)  # fmt: skip
def test_cron_job_schedule_errors(schedule, message):
    assert errors(cron_job(schedule)) == [message]


def test_cron_job_rules():
    selector = {"matchLabels": {"app": "web"}}
    given = cron_job("@hourly", concurrencyPolicy="Sometimes", timeZone="Mars/Olympus",
                     successfulJobsHistoryLimit=-1)  # fmt: skip
    given["spec"]["jobTemplate"]["spec"]["selector"] = selector
    assert errors(given) == [
        'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", '
        '"Forbid", "Replace"',
        'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"app":"web"}}: '
        "`selector` will be auto-generated",
        "spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
    ]
    assert admit(cron_job("@hourly", timeZone="Europe/Paris"))["spec"]["timeZone"]


def test_a_time_zone_that_names_a_directory_is_unknown():
    for zone in ("America", "Etc"):  # directories in the time zone database, not zones
        assert errors(cron_job("@hourly", timeZone=zone)) == [
            f'spec.timeZone: Invalid value: "{zone}": unknown time zone {zone}'
        ]


MANY = "9" * 5000  # past int64, and past the digits int() converts at all


def test_numbers_of_thousands_of_digits_are_field_errors():
    assert errors(cron_job(MANY + " * * * *")) == [
        f'spec.schedule: Invalid value: "{MANY} * * * *": failed to parse int from {MANY}: '
        f'strconv.Atoi: parsing "{MANY}": value out of range'
    ]
    assert errors(cron_job(f"@every {MANY}s")) == [
        f'spec.schedule: Invalid value: "@every {MANY}s": failed to parse duration @every '
        f'{MANY}s: time: invalid duration "{MANY}s"'
    ]
    rolling = "spec.strategy.rollingUpdate"
    assert errors(deployment(strategy={"rollingUpdate": {"maxSurge": MANY + "%"}})) == [
        f'{rolling}.maxSurge: Invalid value: "{MANY}%": must not be greater than 100%'
    ]
    # Not a percentage, but a number, so not 0: Go's IntValue() is its int64 nearest.
    surge = {"maxSurge": MANY, "maxUnavailable": 0}
    assert errors(deployment(strategy={"rollingUpdate": surge})) == [
        f'{rolling}.maxSurge: Invalid value: "{MANY}": a valid percent string must be a '
        "numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for "
        "validation is '[0-9]+%')"
    ]
    strategy = {"rollingUpdate": {"maxUnavailable": MANY + "%"}}
    assert errors(workload("StatefulSet", updateStrategy=strategy)) == [
        f'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "{MANY}%": must not '
        "be greater than 100%"
    ]
    strategy = {"rollingUpdate": {"maxSurge": MANY + "%"}}
    at = f'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "{MANY}%"'
    assert errors(workload("DaemonSet", updateStrategy=strategy)) == [
        f"{at}: must not be greater than 100%",
        f"{at}: may not be set when maxUnavailable is non-zero",
    ]
    # Leading zeros count for nothing, as in Go.
    half = "0" * 5000 + "50%"
    assert admit(deployment(strategy={"rollingUpdate": {"maxSurge": half}}))
    assert admit(cron_job("0" * 5000 + "1 * * * *"))


# --- Service and Pod -------------------------------------------------------------------------


def service(**spec: Any) -> dict[str, Any]:
    return obj("v1", "Service", "web", spec=spec)


def test_service_rules():
    assert admit(service(ports=[{"port": 80, "targetPort": "http"}]))
    assert admit(service(clusterIP="None"))  # headless: no ports needed
    assert errors(service()) == ["spec.ports: Required value"]
    ports = [{"port": 0, "protocol": "HTTP"}, {"name": "b", "port": 70000, "targetPort": "a--b"}]
    assert errors(service(ports=ports, type="Internal", sessionAffinity="Sticky")) == [
        "spec.ports[0].name: Required value",
        "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        "spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
        'spec.ports[1].targetPort: Invalid value: "a--b": must not contain consecutive hyphens',
        'spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"',
        'spec.type: Unsupported value: "Internal": supported values: "ClusterIP", '
        '"ExternalName", "LoadBalancer", "NodePort"',
    ]
    assert errors(service(type="ExternalName")) == ["spec.externalName: Required value"]
    assert errors(service(ports=[{"port": 80, "nodePort": 30080}])) == [
        "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"
    ]


def test_pod_rules():
    pod = obj("v1", "Pod", "p", spec={"containers": [{"name": "a", "image": " nginx"}],
                                      "restartPolicy": "Sometimes"})  # fmt: skip
    assert errors(pod) == [
        'spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing '
        "whitespace",
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", '
        '"OnFailure", "Never"',
    ]
    assert errors(obj("v1", "Pod", "p", spec={})) == ["spec.containers: Required value"]


def test_the_refusal_names_the_object():
    with pytest.raises(Invalid) as caught:
        CHAIN.admit(deployment(replicas=-1), now=NOW)
    assert caught.value.message == (
        'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater '
        "than or equal to 0"
    )
    assert caught.value.status()["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": "Invalid value: -1: must be greater than or "
         "equal to 0", "field": "spec.replicas"}
    ]  # fmt: skip


def node(*taints: dict[str, Any]) -> dict[str, Any]:
    return obj("v1", "Node", "node1", spec={"taints": list(taints)})


def test_node_taints_are_validated_as_validate_node_taints_does():
    gpu = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    soft = {"key": "dedicated", "value": "gpu", "effect": "PreferNoSchedule"}
    assert admit(node(gpu, soft))["spec"]["taints"] == [gpu, soft]  # one key, two effects
    assert errors(node({"key": "x", "effect": "NoRun"})) == [
        'spec.taints[0].effect: Unsupported value: "NoRun": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"'
    ]
    assert errors(node({"key": "x"})) == ["spec.taints[0].effect: Required value"]
    assert errors(node({"key": "bad key!", "value": "a b", "effect": "NoExecute"})) == [
        'spec.taints[0].key: Invalid value: "bad key!": name part must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'spec.taints[0].value: Invalid value: "a b": a valid label must be an empty string '
        "or consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
        "an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
        "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]
    (duplicate,) = errors(node(gpu, {**gpu, "value": "tpu"}))
    assert duplicate.startswith("spec.taints[1]: Duplicate value: ")
    assert duplicate.endswith(": taints must be unique by key and effect pair")


def pdb(**spec: Any) -> dict[str, Any]:
    return obj("policy/v1", "PodDisruptionBudget", "web", spec=spec)


def test_a_pod_disruption_budget_is_stored_as_given() -> None:
    given = pdb(minAvailable="50%", selector={"matchLabels": {"app": "web"}})
    assert admit(given)["spec"] == given["spec"]
    assert admit(pdb(maxUnavailable=1, unhealthyPodEvictionPolicy="AlwaysAllow"))


def test_pod_disruption_budget_rules() -> None:
    assert errors(pdb(minAvailable=1, maxUnavailable="10%", selector={})) == [
        'spec: Invalid value: {"minAvailable":1,"maxUnavailable":"10%","selector":{}}: '
        "minAvailable and maxUnavailable cannot be both set"
    ]
    assert errors(pdb(minAvailable=-1)) == [
        "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"
    ]
    assert errors(pdb(maxUnavailable="120%")) == [
        'spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%'
    ]
    assert errors(pdb(maxUnavailable="ten")) == [
        'spec.maxUnavailable: Invalid value: "ten": a valid percent string must be a numeric '
        "string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is "
        "'[0-9]+%')"
    ]
    assert errors(pdb(unhealthyPodEvictionPolicy="Never")) == [
        'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: '
        '"AlwaysAllow", "IfHealthyBudget"'
    ]
    bad_selector = {"matchExpressions": [{"key": "app", "operator": "Near"}]}
    assert errors(pdb(selector=bad_selector)) == [
        'spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid '
        "selector operator"
    ]


def hpa(**spec: Any) -> dict[str, Any]:
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    return obj(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "web",
        spec={"scaleTargetRef": target, "maxReplicas": 5, **spec},
    )


def cpu(**target: Any) -> dict[str, Any]:
    return {"type": "Resource", "resource": {"name": "cpu", "target": target}}


def test_a_horizontal_pod_autoscaler_is_stored_as_given() -> None:
    given = hpa(minReplicas=2, metrics=[cpu(type="Utilization", averageUtilization=80)])
    assert admit(given)["spec"] == given["spec"]


def test_horizontal_pod_autoscaler_replicas_and_target() -> None:
    assert errors(hpa(minReplicas=0, maxReplicas=0, scaleTargetRef={"kind": "Deployment"})) == [
        "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
        "spec.maxReplicas: Invalid value: 0: must be greater than 0",
        "spec.scaleTargetRef.name: Required value",
        "spec.metrics: Forbidden: must specify at least one Object or External metric to "
        "support scaling to zero replicas",
    ]
    assert errors(hpa(minReplicas=7)) == [
        "spec.maxReplicas: Invalid value: 5: must be greater than or equal to `minReplicas`"
    ]
    # An HPA that scaled to zero before may keep doing so, with an Object or External metric.
    zero = hpa(minReplicas=0, metrics=[cpu(type="Utilization", averageUtilization=50)])
    assert errors(zero, old=zero) == [
        "spec.metrics: Forbidden: must specify at least one Object or External metric to "
        "support scaling to zero replicas"
    ]


def test_horizontal_pod_autoscaler_metrics() -> None:
    both = cpu(type="Utilization", averageUtilization=0, averageValue="-1")
    assert errors(hpa(metrics=[both])) == [
        'spec.metrics[0].resource.target.averageValue: Invalid value: "-1": must be positive',
        "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
        "spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw "
        "value and a target utilization",
    ]
    wrong = {"type": "Pods", "resource": {"name": "cpu", "target": {"type": "Average"}}}
    assert errors(hpa(metrics=[wrong])) == [
        'spec.metrics[0].resource.target.type: Invalid value: "Average": must be either '
        "Utilization, Value, or AverageValue",
        "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a "
        "target raw value or a target utilization",
        "spec.metrics[0].pods: Required value: must populate information for the given metric "
        "source",
    ]
    two = {**cpu(type="AverageValue", averageValue="1"), "pods": {"metric": {"name": "qps"}}}
    assert errors(hpa(metrics=[two]))[-1] == (
        "spec.metrics[0].pods: Forbidden: must populate the given metric source only"
    )
    unsupported = (
        'spec.metrics[0].type: Unsupported value: "Memory": supported values: '
        '"ContainerResource", "External", "Object", "Pods", "Resource"'
    )
    # Upstream says so twice: once checking the type, once in its switch over the types.
    assert errors(hpa(metrics=[{"type": "Memory"}])) == [unsupported, unsupported]


def test_horizontal_pod_autoscaler_behavior() -> None:
    behavior = {
        "scaleUp": {"stabilizationWindowSeconds": 4000, "selectPolicy": "Most", "policies": []},
        "scaleDown": {"policies": [{"type": "Share", "value": 0, "periodSeconds": 3600}]},
    }
    assert errors(hpa(behavior=behavior)) == [
        "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less "
        "than or equal to 3600",
        'spec.behavior.scaleUp.selectPolicy: Unsupported value: "Most": supported values: '
        '"Disabled", "Max", "Min"',
        "spec.behavior.scaleUp.policies: Required value: must specify at least one Policy",
        'spec.behavior.scaleDown.policies[0].type: Unsupported value: "Share": supported '
        'values: "Percent", "Pods"',
        "spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero",
        "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 3600: must be less "
        "than or equal to 1800",
    ]


def test_horizontal_pod_autoscaler_object_and_external_metrics() -> None:
    described = {"apiVersion": "v1", "kind": "Service", "name": "front"}
    metrics = [
        {"type": "Object", "object": {"describedObject": described, "metric": {"name": "rps"}, "target": {"type": "Value"}}},
        {"type": "External", "external": {"metric": {"name": "queue/depth"}, "target": {"type": "Value", "value": "30", "averageValue": "3"}}},
    ]  # fmt: skip
    assert errors(hpa(metrics=metrics)) == [
        "spec.metrics[0].object.target.averageValue: Required value: must set either a target "
        "value or averageValue",
        "spec.metrics[1].external.metric.name: Invalid value: \"queue/depth\": may not contain '/'",
        "spec.metrics[1].external.target.value: Forbidden: may not set both a target value for "
        "metric and a per-pod target",
    ]


def quota(**spec: Any) -> dict[str, Any]:
    return obj("v1", "ResourceQuota", "compute", spec=spec)


def test_a_resource_quota_is_stored_as_given() -> None:
    given = quota(
        hard={"cpu": "4", "requests.memory": "8Gi", "pods": 20, "count/deployments.apps": "5"},
        scopeSelector={
            "matchExpressions": [
                {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}
            ]
        },
    )
    assert admit(given)["spec"] == given["spec"]
    assert admit(quota(hard={"pods": "10"}, scopes=["BestEffort"]))


def test_resource_quota_amounts() -> None:
    assert errors(quota(hard={"cpu": "-1", "pods": "1500m", "nvidia.com/gpu": "0.5"})) == [
        'spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0',
        'spec.hard[pods]: Invalid value: "1500m": must be an integer',
        'spec.hard[nvidia.com/gpu]: Invalid value: "0.5": must be an integer',
    ]
    assert errors(quota(hard={"storage": "1Gi", "gpus": "1"})) == [
        'spec.hard[storage]: Invalid value: "storage": must be a standard resource for quota',
        'spec.hard[gpus]: Invalid value: "gpus": must be a standard resource type or fully '
        "qualified",
        'spec.hard[gpus]: Invalid value: "gpus": must be a standard resource for quota',
    ]
    assert "quantities must match the regular expression" in decode_error(
        quota(hard={"cpu": "lots"})
    )


def test_resource_quota_status_is_checked_when_written_through_its_subresource() -> None:
    stored = admit(quota(hard={"pods": "10"}))
    counted = {**stored, "status": {"hard": {"pods": "10"}, "used": {"pods": "-1"}}}
    with pytest.raises(Invalid) as caught:
        CHAIN.review(counted, REGISTRY.decode(stored), now=NOW, subresource="status")
    assert [str(e) for e in caught.value.errors] == [
        'status.used[pods]: Invalid value: "-1": must be greater than or equal to 0'
    ]
    assert admit(counted, old=stored)  # a spec write's status is the stored one: not checked


def test_resource_quota_scopes() -> None:
    assert errors(quota(hard={"cpu": "1"}, scopes=["Forever"])) == [
        'spec.scopes: Invalid value: ["Forever"]: unsupported scope'
    ]
    assert errors(quota(hard={"cpu": "1", "secrets": "3"}, scopes=["Terminating"])) == [
        'spec.scopes: Invalid value: ["Terminating"]: unsupported scope applied to resource'
    ]
    assert errors(quota(hard={"pods": "1"}, scopes=["BestEffort", "NotBestEffort"])) == [
        'spec.scopes: Invalid value: ["BestEffort","NotBestEffort"]: conflicting scopes'
    ]
    stored = admit(quota(hard={"pods": "1"}, scopes=["BestEffort"]))
    assert errors(quota(hard={"pods": "1"}, scopes=["NotBestEffort"]), old=stored) == [
        'spec.scopes: Invalid value: ["NotBestEffort"]: field is immutable'
    ]


def test_resource_quota_scope_selector() -> None:
    def selector(*expressions: dict[str, Any]) -> dict[str, Any]:
        return quota(hard={"pods": "1"}, scopeSelector={"matchExpressions": list(expressions)})

    at = "spec.scopeSelector.matchExpressions"  # upstream's paths name no index
    assert errors(selector({"scopeName": "BestEffort", "operator": "In", "values": ["x"]})) == [
        f"{at}.operator: Invalid value: \"In\": must be 'Exists' when scope is any of "
        "ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
        "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
        "ResourceQuotaScopeCrossNamespacePodAffinity"
    ]
    assert errors(selector({"scopeName": "PriorityClass", "operator": "NotIn"})) == [
        f"{at}.values: Required value: must be at least one value when `operator` is 'In' or "
        "'NotIn' for scope selector"
    ]
    assert errors(selector({"scopeName": "Hourly", "operator": "Near"})) == [
        f'{at}.scopeName: Invalid value: "Hourly": unsupported scope',
        f'{at}.operator: Invalid value: "Near": not a valid selector operator',
    ]


def limit_range(*limits: dict[str, Any]) -> dict[str, Any]:
    return obj("v1", "LimitRange", "limits", spec={"limits": list(limits)})


def test_a_limit_range_is_stored_as_given() -> None:
    container = {
        "type": "Container",
        "min": {"cpu": "100m"},
        "max": {"cpu": "2", "memory": "1Gi"},
        "default": {"cpu": "500m"},
        "defaultRequest": {"cpu": "200m"},
        "maxLimitRequestRatio": {"cpu": "10"},
    }
    claim = {"type": "PersistentVolumeClaim", "max": {"storage": "10Gi"}}
    given = limit_range(container, claim)
    assert admit(given)["spec"] == given["spec"]


def test_limit_range_types_and_names() -> None:
    assert errors(limit_range({"type": "Node"}, {"type": "Pod"}, {"type": "Pod"})) == [
        'spec.limits[0].type: Invalid value: "Node": must be a standard limit type or fully '
        "qualified",
        'spec.limits[2].type: Duplicate value: "Pod"',
    ]
    assert errors(limit_range({"type": "Container", "max": {"storage": "1Gi"}})) == [
        'spec.limits[0].max[storage]: Invalid value: "storage": must be a standard resource '
        "for containers"
    ]
    assert errors(limit_range({"type": "Pod", "default": {"cpu": "1"}})) == [
        "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"
    ]
    assert errors(limit_range({"type": "PersistentVolumeClaim", "max": {"cpu": "1"}})) == [
        "spec.limits[0].limits: Required value: either minimum or maximum storage value is "
        "required, but neither was provided"
    ]


def test_limit_range_bounds_are_ordered() -> None:
    assert errors(limit_range({"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}})) == [
        'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1'
    ]
    inverted = {"type": "Container", "default": {"memory": "1Gi"}, "max": {"memory": "512Mi"}}
    assert errors(limit_range(inverted)) == [
        'spec.limits[0].default[memory]: Invalid value: "512Mi": default value 1Gi is greater '
        "than max value 512Mi"
    ]
    requested = {"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "2"}}
    assert errors(limit_range(requested)) == [
        'spec.limits[0].defaultRequest[cpu]: Invalid value: "2": default request value 2 is '
        "greater than default limit value 1"
    ]
    gpus = {"type": "Container", "default": {"x.com/gpu": "2"}, "defaultRequest": {"x.com/gpu": 1}}
    assert errors(limit_range(gpus)) == [
        'spec.limits[0].defaultRequest[x.com/gpu]: Invalid value: "1": default value 2 must '
        "equal to defaultRequest value 1 in x.com/gpu"
    ]


def test_limit_range_ratio() -> None:
    low = {"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}}
    assert errors(limit_range(low)) == [
        'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1'
    ]
    wide = {"min": {"cpu": "1"}, "max": {"cpu": "2"}, "maxLimitRequestRatio": {"cpu": "3"}}
    assert errors(limit_range({"type": "Container", **wide})) == [
        'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "3": ratio 3 is greater '
        "than max/min = 2.000000"
    ]


def network_policy(**spec: Any) -> dict[str, Any]:
    return obj("networking.k8s.io/v1", "NetworkPolicy", "deny", spec={"podSelector": {}, **spec})


def test_a_network_policy_is_stored_as_given() -> None:
    given = network_policy(
        podSelector={"matchLabels": {"app": "web"}},
        policyTypes=["Ingress", "Egress"],
        ingress=[
            {
                "from": [
                    {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}},
                    {"namespaceSelector": {}, "podSelector": {"matchLabels": {"r": "x"}}},
                ],
                "ports": [{"protocol": "TCP", "port": 80, "endPort": 90}, {"port": "http"}],
            }
        ],
        egress=[{"to": [{"ipBlock": {"cidr": "fd00::/8"}}]}],
    )
    assert admit(given)["spec"] == given["spec"]


def test_network_policy_ports() -> None:
    def ports(*given: dict[str, Any]) -> dict[str, Any]:
        return network_policy(ingress=[{"ports": list(given)}])

    at = "spec.ingress[0].ports"
    assert errors(ports({"protocol": "ICMP", "port": 0})) == [
        f'{at}[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"',
        f"{at}[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
    ]
    assert errors(ports({"port": 90, "endPort": 80}, {"port": "web", "endPort": 81})) == [
        f"{at}[0].endPort: Invalid value: 80: must be greater than or equal to `port`",
        f"{at}[1].endPort: Invalid value: 81: may not be specified when `port` is non-numeric",
    ]
    assert errors(ports({"endPort": 81})) == [
        f"{at}[0].endPort: Invalid value: 81: may not be specified when `port` is not specified"
    ]
    assert "cannot unmarshal number 1.5 into Go struct field" in decode_error(ports({"port": 1.5}))


def test_network_policy_peers_and_types() -> None:
    def peers(*given: dict[str, Any]) -> dict[str, Any]:
        return network_policy(egress=[{"to": list(given)}])

    at = "spec.egress[0].to"
    both = {"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}
    assert errors(peers({}, both)) == [
        f"{at}[0]: Required value: must specify a peer",
        f"{at}[1]: Forbidden: may not specify both ipBlock and another peer",
    ]
    assert errors(peers({"ipBlock": {"cidr": "10.0.0.0"}})) == [
        f'{at}[0].ipBlock.cidr: Invalid value: "10.0.0.0": must be a valid CIDR value, (e.g. '
        "10.9.8.0/24 or 2001:db8::/64)"
    ]
    outside = {"cidr": "10.0.0.0/16", "except": ["10.0.0.0/16", "192.168.0.0/24", "x"]}
    assert errors(peers({"ipBlock": outside})) == [
        f'{at}[0].ipBlock.except[0]: Invalid value: "10.0.0.0/16": must be a strict subset of '
        "`cidr`",
        f'{at}[0].ipBlock.except[1]: Invalid value: "192.168.0.0/24": must be a strict subset '
        "of `cidr`",
        f'{at}[0].ipBlock.except[2]: Invalid value: "x": must be a valid CIDR value, (e.g. '
        "10.9.8.0/24 or 2001:db8::/64)",
    ]
    selector = {"podSelector": {"matchExpressions": [{"key": "app", "operator": "Near"}]}}
    assert errors(peers(selector)) == [
        f'{at}[0].podSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid '
        "selector operator"
    ]
    assert errors(network_policy(policyTypes=["Ingress", "Sideways"])) == [
        'spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"'
    ]
