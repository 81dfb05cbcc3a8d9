"""Field selectors over HTTP: per-kind field labels in lists and watches, and the 400
BadRequest Status for a label the kind has not, before any watch event."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from .conftest import CLUSTERS, DEPLOYMENTS, Api, cluster
from .test_watch import watching

EVENTS = "/api/v1/namespaces/default/events"


def event(name: str, about: str, kind: str = "Cluster", **fields: Any) -> dict[str, Any]:
    involved = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": kind, "name": about}
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": involved,
        "reason": "TaintClusterSucceed",
        "type": "Normal",
        "source": {"component": "cluster-controller"},
        **fields,
    }


def selected(api: Api, path: str, selector: str) -> list[str]:
    reply = api.get(f"{path}?fieldSelector={quote(selector)}")
    assert reply.status == 200, reply.body
    return [item["metadata"]["name"] for item in reply.json["items"]]


def test_events_are_listed_by_their_involved_object(api: Api) -> None:
    for body in [
        event("member1.1", "member1"),
        event("member1.2", "member1", type="Warning"),
        event("member2.1", "member2"),
        event("web.1", "member1", kind="Deployment"),
    ]:
        assert api.post(EVENTS, body).status == 201
    about_member1 = "involvedObject.kind=Cluster,involvedObject.name=member1"
    assert selected(api, EVENTS, about_member1) == ["member1.1", "member1.2"]
    assert selected(api, "/api/v1/events", f"{about_member1},type=Warning") == ["member1.2"]
    assert selected(api, EVENTS, "source=cluster-controller,involvedObject.name!=member1") == [
        "member2.1"
    ]


def test_namespaces_are_listed_by_phase(api: Api) -> None:
    api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": "team"}})  # fmt: skip
    active = selected(api, "/api/v1/namespaces", "status.phase=Active")
    assert "team" in active and "default" in active
    assert selected(api, "/api/v1/namespaces", "status.phase=Terminating") == []


def test_an_unsupported_field_label_is_a_bad_request(api: Api) -> None:
    reply = api.get(f"{EVENTS}?fieldSelector={quote('involvedObject.name=a,spec.x=1')}")
    assert reply.status == 400
    assert reply.json == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "field label not supported: spec.x",
        "reason": "BadRequest",
        "code": 400,
    }
    by_namespace = api.get(f"/api/v1/namespaces?fieldSelector={quote('metadata.namespace=a')}")
    assert by_namespace.json["message"] == "field label not supported: metadata.namespace"
    deployments = api.get(f"{DEPLOYMENTS}?fieldSelector={quote('spec.replicas=1')}")
    assert (deployments.status, deployments.json["message"]) == (
        400,
        '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"',
    )


def test_a_watch_refuses_an_unsupported_field_label_before_the_stream(api: Api) -> None:
    reply = api.get(f"{EVENTS}?watch=true&fieldSelector={quote('reportingInstance=x')}")
    assert (reply.status, reply.json["reason"]) == (400, "BadRequest")
    assert reply.json["message"] == "field label not supported: reportingInstance"


def test_a_watch_streams_the_events_about_one_object(api: Api) -> None:
    api.post(CLUSTERS, cluster("member1"))
    api.post(EVENTS, event("member1.1", "member1"))
    rv = api.get(EVENTS).json["metadata"]["resourceVersion"]
    selector = quote("involvedObject.name=member1,type=Warning")
    with watching(api, f"{EVENTS}?watch=true&fieldSelector={selector}&resourceVersion={rv}") as w:
        api.post(EVENTS, event("member2.1", "member2", type="Warning"))
        api.post(EVENTS, event("member1.2", "member1", type="Warning"))
        merge = "application/merge-patch+json"
        api.patch(f"{EVENTS}/member1.1", {"type": "Warning"}, merge)  # now matches
        api.patch(f"{EVENTS}/member1.2", {"type": "Normal"}, merge)  # no longer matches
        assert w.take(3) == [
            ("ADDED", "member1.2"),
            ("ADDED", "member1.1"),
            ("DELETED", "member1.2"),
        ]
