"""The RBAC policy a hub starts with, as kube-apiserver's bootstrap policy: the cluster roles
every Kubernetes user expects (cluster-admin, admin, edit, view and the system roles
behind them) and their bindings; then the roles Karmada and OCM ship for their own kinds,
aggregated into admin, edit and view, and those their agents join with.

Every object carries kubernetes.io/bootstrapping=rbac-defaults and the autoupdate
annotation: at each start the hub adds what is missing to them, unless a user set the
annotation to "false".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fleetwarden.api import rbac
from fleetwarden.api.authentication import (
    AUTHENTICATED,
    SERVICE_ACCOUNTS_GROUP,
    SYSTEM_MASTERS,
    UNAUTHENTICATED,
)

Obj = dict[str, Any]

READ = ("get", "list", "watch")
WRITE = ("create", "delete", "deletecollection", "patch", "update")
ALL_VERBS = ("*",)

AGGREGATE_TO_ADMIN = "rbac.authorization.k8s.io/aggregate-to-admin"
AGGREGATE_TO_EDIT = "rbac.authorization.k8s.io/aggregate-to-edit"
AGGREGATE_TO_VIEW = "rbac.authorization.k8s.io/aggregate-to-view"


def rule(
    groups: Sequence[str], resources: Sequence[str], verbs: Sequence[str], names: Sequence[str] = ()
) -> Obj:
    """A PolicyRule, its verbs sorted as the bootstrap fixtures keep them."""
    wire: Obj = {"apiGroups": list(groups), "resources": list(resources)}
    if names:
        wire["resourceNames"] = list(names)
    wire["verbs"] = sorted(verbs)
    return wire


def url_rule(urls: Sequence[str], verbs: Sequence[str]) -> Obj:
    return {"nonResourceURLs": list(urls), "verbs": list(verbs)}


def cluster_role(
    name: str,
    rules: Sequence[Obj] = (),
    *,
    labels: dict[str, str] | None = None,
    aggregate_from: Sequence[str] = (),
) -> Obj:
    """A bootstrap ClusterRole; with `aggregate_from`, its rules are those of the roles
    carrying each label set to "true" (filled in by the aggregation controller)."""
    role = _bootstrap(rbac.CLUSTER_ROLE_KIND.kind, name, labels)
    if aggregate_from:
        selectors = [{"matchLabels": {label: "true"}} for label in aggregate_from]
        role["aggregationRule"] = {"clusterRoleSelectors": selectors}
    else:
        role["rules"] = list(rules)
    return role


def cluster_role_binding(name: str, subjects: Sequence[Obj], role: str | None = None) -> Obj:
    binding = _bootstrap(rbac.CLUSTER_ROLE_BINDING_KIND.kind, name)
    binding["roleRef"] = {"apiGroup": rbac.GROUP, "kind": rbac.CLUSTER_ROLE, "name": role or name}
    binding["subjects"] = list(subjects)
    return binding


def group(name: str) -> Obj:
    return {"apiGroup": rbac.GROUP, "kind": rbac.GROUP_KIND, "name": name}


def user(name: str) -> Obj:
    return {"apiGroup": rbac.GROUP, "kind": rbac.USER, "name": name}


def _bootstrap(kind: str, name: str, labels: dict[str, str] | None = None) -> Obj:
    return {
        "apiVersion": rbac.API_VERSION,
        "kind": kind,
        "metadata": {
            "name": name,
            "labels": {rbac.BOOTSTRAPPING_LABEL: rbac.BOOTSTRAPPING_VALUE, **(labels or {})},
            "annotations": {rbac.AUTOUPDATE_ANNOTATION: "true"},
        },
    }


_CORE_VIEW = [
    "configmaps",
    "endpoints",
    "persistentvolumeclaims",
    "persistentvolumeclaims/status",
    "pods",
    "replicationcontrollers",
    "replicationcontrollers/scale",
    "serviceaccounts",
    "services",
    "services/status",
]
_CORE_STATUS = [
    "bindings",
    "limitranges",
    "namespaces/status",
    "pods/log",
    "pods/status",
    "replicationcontrollers/status",
    "resourcequotas",
    "resourcequotas/status",
]
_APPS = [
    "controllerrevisions",
    "daemonsets",
    "daemonsets/status",
    "deployments",
    "deployments/scale",
    "deployments/status",
    "replicasets",
    "replicasets/scale",
    "replicasets/status",
    "statefulsets",
    "statefulsets/scale",
    "statefulsets/status",
]


def _aggregate_to_view() -> list[Obj]:
    return [
        rule([""], _CORE_VIEW, READ),
        rule([""], _CORE_STATUS, READ),
        rule([""], ["namespaces"], READ),
        rule(["", "events.k8s.io"], ["events"], READ),
        rule(["discovery.k8s.io"], ["endpointslices"], READ),
        rule(["apps"], _APPS, READ),
        rule(
            ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"], READ
        ),
        rule(["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"], READ),
        rule(["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"], READ),
        rule(["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"], READ),
    ]


def _aggregate_to_edit() -> list[Obj]:
    pods = ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]
    core = [
        "configmaps",
        "persistentvolumeclaims",
        "replicationcontrollers",
        "replicationcontrollers/scale",
        "secrets",
        "serviceaccounts",
        "services",
        "services/proxy",
    ]
    apps = [
        "daemonsets",
        "deployments",
        "deployments/rollback",
        "deployments/scale",
        "replicasets",
        "replicasets/scale",
        "statefulsets",
        "statefulsets/scale",
    ]
    return [
        rule([""], [*pods[1:], "secrets", "services/proxy"], READ),
        rule([""], ["serviceaccounts"], ["impersonate"]),
        rule([""], pods, WRITE),
        rule([""], ["pods/eviction"], ["create"]),
        rule([""], core, WRITE),
        rule([""], ["serviceaccounts/token"], ["create"]),
        rule(["", "events.k8s.io"], ["events"], WRITE),
        rule(["apps"], apps, WRITE),
        rule(["autoscaling"], ["horizontalpodautoscalers"], WRITE),
        rule(["batch"], ["cronjobs", "jobs"], WRITE),
        rule(["policy"], ["poddisruptionbudgets"], WRITE),
        rule(["networking.k8s.io"], ["ingresses", "networkpolicies"], WRITE),
        rule(["coordination.k8s.io"], ["leases"], [*READ, *WRITE]),
    ]


def _aggregate_to_admin() -> list[Obj]:
    return [
        rule(["authorization.k8s.io"], ["localsubjectaccessreviews"], ["create"]),
        rule([rbac.GROUP], ["rolebindings", "roles"], [*READ, *WRITE]),
    ]


_PUBLIC_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
# Where the service account issuer's OIDC discovery is served (ServiceAccountIssuerDiscovery).
OPENID_CONFIGURATION, JWKS = "/.well-known/openid-configuration", "/openid/v1/jwks"
_ISSUER_DISCOVERY_URLS = [OPENID_CONFIGURATION, f"{OPENID_CONFIGURATION}/", JWKS, f"{JWKS}/"]
_DISCOVERY_URLS = sorted(
    ["/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", *_PUBLIC_URLS]
)


def kubernetes_policy() -> list[Obj]:
    """kube-apiserver's bootstrap roles and bindings, those a hub's users meet."""
    return [
        cluster_role("cluster-admin", [rule(["*"], ["*"], ALL_VERBS), url_rule(["*"], ALL_VERBS)]),
        cluster_role("admin", aggregate_from=[AGGREGATE_TO_ADMIN]),
        cluster_role(
            "edit", labels={AGGREGATE_TO_ADMIN: "true"}, aggregate_from=[AGGREGATE_TO_EDIT]
        ),
        cluster_role(
            "view", labels={AGGREGATE_TO_EDIT: "true"}, aggregate_from=[AGGREGATE_TO_VIEW]
        ),
        cluster_role(
            "system:aggregate-to-admin", _aggregate_to_admin(), labels={AGGREGATE_TO_ADMIN: "true"}
        ),
        cluster_role(
            "system:aggregate-to-edit", _aggregate_to_edit(), labels={AGGREGATE_TO_EDIT: "true"}
        ),
        cluster_role(
            "system:aggregate-to-view", _aggregate_to_view(), labels={AGGREGATE_TO_VIEW: "true"}
        ),
        cluster_role("system:discovery", [url_rule(_DISCOVERY_URLS, ["get"])]),
        cluster_role(
            "system:basic-user",
            [
                rule(
                    ["authorization.k8s.io"],
                    ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    ["create"],
                ),
                rule(["authentication.k8s.io"], ["selfsubjectreviews"], ["create"]),
            ],
        ),
        cluster_role("system:public-info-viewer", [url_rule(_PUBLIC_URLS, ["get"])]),
        cluster_role(
            "system:node-bootstrapper",
            [rule(["certificates.k8s.io"], ["certificatesigningrequests"], ["create", *READ])],
        ),
        cluster_role(
            "system:auth-delegator",
            [
                rule(["authentication.k8s.io"], ["tokenreviews"], ["create"]),
                rule(["authorization.k8s.io"], ["subjectaccessreviews"], ["create"]),
            ],
        ),
        cluster_role(
            "system:service-account-issuer-discovery", [url_rule(_ISSUER_DISCOVERY_URLS, ["get"])]
        ),
        cluster_role_binding("cluster-admin", [group(SYSTEM_MASTERS)]),
        cluster_role_binding("system:basic-user", [group(AUTHENTICATED)]),
        cluster_role_binding("system:discovery", [group(AUTHENTICATED)]),
        cluster_role_binding(
            "system:public-info-viewer", [group(AUTHENTICATED), group(UNAUTHENTICATED)]
        ),
        cluster_role_binding(
            "system:service-account-issuer-discovery", [group(SERVICE_ACCOUNTS_GROUP)]
        ),
    ]


def _with_status(*resources: str) -> list[str]:
    return [name for resource in resources for name in (resource, f"{resource}/status")]


_KARMADA_KINDS = [
    ("autoscaling.karmada.io", _with_status("cronfederatedhpas", "federatedhpas")),
    ("multicluster.x-k8s.io", _with_status("serviceexports", "serviceimports")),
    ("networking.karmada.io", _with_status("multiclusteringresses", "multiclusterservices")),
    ("policy.karmada.io", ["overridepolicies", "propagationpolicies"]),
    ("work.karmada.io", _with_status("resourcebindings", "works")),
]


def karmada_policy() -> list[Obj]:
    """karmada-view and karmada-edit, aggregated into view, edit and so admin: the
    namespaced kinds of Karmada's API (artifacts/deploy/admin-clusterrole-aggregation.yaml)."""

    def rules(verbs: Sequence[str]) -> list[Obj]:
        return [rule([group], resources, verbs) for group, resources in _KARMADA_KINDS]

    return [
        cluster_role("karmada-view", rules(READ), labels={AGGREGATE_TO_VIEW: "true"}),
        cluster_role("karmada-edit", rules(WRITE), labels={AGGREGATE_TO_EDIT: "true"}),
    ]
