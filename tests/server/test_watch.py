"""Watch over HTTP: streamed events, resuming, expiry, bookmarks, selectors, and a clean end
whether the client leaves, the timeout passes or the server stops."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fleetwarden.api.registry import REGISTRY
from fleetwarden.store import MemoryStore

from .conftest import CLUSTERS, DEPLOYMENTS, Api, MakeApi, cluster, deployment

MERGE = "application/merge-patch+json"
CONFIGMAP = REGISTRY.info("v1", "ConfigMap")


class Stream:
    def __init__(self, response: http.client.HTTPResponse) -> None:
        self.response = response

    def next(self) -> dict[str, Any]:
        line = self.response.readline()
        assert line, "the watch ended"
        event: dict[str, Any] = json.loads(line)
        return event

    def take(self, count: int) -> list[tuple[str, str]]:
        """(type, name) of the next events."""
        events = [self.next() for _ in range(count)]
        return [(e["type"], e["object"]["metadata"].get("name", "")) for e in events]

    def ended(self) -> bool:
        return self.response.readline() == b""


@contextmanager
def watching(api: Api, path: str, timeout: float = 10) -> Iterator[Stream]:
    conn = api.connection(timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        assert response.status == 200, response.read()
        assert response.headers["content-type"] == "application/json"
        yield Stream(response)
    finally:
        conn.close()


def names(events: list[tuple[str, str]]) -> list[str]:
    return [name for _, name in events]


def test_a_watch_streams_changes_after_the_listed_version(api: Api) -> None:
    api.post(CLUSTERS, cluster("old"))
    rv = api.get(CLUSTERS).json["metadata"]["resourceVersion"]
    with watching(api, f"{CLUSTERS}?watch=true&resourceVersion={rv}") as stream:
        api.post(CLUSTERS, cluster("new"))
        api.patch(f"{CLUSTERS}/new", {"metadata": {"labels": {"a": "b"}}}, MERGE)
        api.delete(f"{CLUSTERS}/new")
        assert stream.take(3) == [("ADDED", "new"), ("MODIFIED", "new"), ("DELETED", "new")]


def test_a_watch_without_a_version_starts_with_what_exists(api: Api) -> None:
    api.post(CLUSTERS, cluster("a"))
    with watching(api, f"{CLUSTERS}?watch=1") as stream:
        assert stream.take(1) == [("ADDED", "a")]
        api.post(CLUSTERS, cluster("b"))
        assert stream.take(1) == [("ADDED", "b")]


def test_the_legacy_watch_path_and_a_watch_of_one_object(api: Api) -> None:
    api.post(DEPLOYMENTS, deployment("a"))
    api.post(DEPLOYMENTS, deployment("b"))
    path = "/apis/apps/v1/watch/namespaces/default/deployments/b?resourceVersion=0"
    with watching(api, path) as stream:
        assert stream.take(1) == [("ADDED", "b")]
        api.patch(f"{DEPLOYMENTS}/a", {"spec": {"replicas": 2}}, MERGE)
        api.patch(f"{DEPLOYMENTS}/b", {"spec": {"replicas": 2}}, MERGE)
        assert stream.take(1) == [("MODIFIED", "b")]


def test_a_version_too_old_is_an_expired_error_event(make_api: MakeApi) -> None:
    api = make_api(MemoryStore(event_log_size=2))
    for i in range(5):
        api.post(CLUSTERS, cluster(f"m{i}"))
    with watching(api, f"{CLUSTERS}?watch=true&resourceVersion=1") as stream:
        event = stream.next()
        assert event["type"] == "ERROR"
        assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
        assert event["object"]["message"].startswith("too old resource version: 1")
        assert stream.ended()


def test_label_selectors_turn_changes_into_added_and_deleted(api: Api) -> None:
    api.post(DEPLOYMENTS, deployment("web", tier="web"))
    rv = api.get(DEPLOYMENTS).json["metadata"]["resourceVersion"]
    path = f"{DEPLOYMENTS}?watch=true&labelSelector=tier%3Dweb&resourceVersion={rv}"
    with watching(api, path) as stream:
        api.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 3}}, MERGE)
        api.post(DEPLOYMENTS, deployment("db", tier="db"))
        api.patch(f"{DEPLOYMENTS}/web", {"metadata": {"labels": {"tier": "old"}}}, MERGE)
        api.patch(f"{DEPLOYMENTS}/db", {"metadata": {"labels": {"tier": "web"}}}, MERGE)
        api.delete(f"{DEPLOYMENTS}/db")
        assert stream.take(4) == [
            ("MODIFIED", "web"),
            ("DELETED", "web"),  # no longer matches
            ("ADDED", "db"),  # matches from now on
            ("DELETED", "db"),
        ]


def test_bookmarks_and_the_timeout(make_api: MakeApi) -> None:
    api = make_api(bookmark_interval=0.2)
    created = api.post(CLUSTERS, cluster()).json
    rv = created["metadata"]["resourceVersion"]
    started = time.monotonic()
    path = f"{CLUSTERS}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=1"
    with watching(api, path) as stream:
        bookmark = stream.next()
        assert bookmark == {
            "type": "BOOKMARK",
            "object": {
                "kind": "Cluster",
                "apiVersion": "cluster.karmada.io/v1alpha1",
                "metadata": {"resourceVersion": rv},
            },
        }
        while (event := stream.response.readline()) != b"":
            assert json.loads(event)["type"] == "BOOKMARK"
    assert 0.9 < time.monotonic() - started < 5


def watch_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "fleetwarden-watch")


def wait_for(condition: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_a_client_that_leaves_leaves_no_thread_behind(api: Api) -> None:
    before = watch_threads()
    with watching(api, f"{CLUSTERS}?watch=true") as stream:
        api.post(CLUSTERS, cluster())
        assert stream.take(1) == [("ADDED", "member1")]
        assert watch_threads() == before + 1
    assert wait_for(lambda: watch_threads() == before)
    assert wait_for(lambda: not api.server.app._watches)


def test_stopping_the_server_ends_its_watches(api: Api) -> None:
    with watching(api, f"{CLUSTERS}?watch=true") as stream:
        api.post(CLUSTERS, cluster())
        assert stream.take(1) == [("ADDED", "member1")]
        started = time.monotonic()
        api.server.stop()
        assert stream.ended()
        assert time.monotonic() - started < 5
    assert wait_for(lambda: watch_threads() == 0)


def test_a_bad_selector_is_refused_before_the_stream(api: Api) -> None:
    reply = api.get(f"{CLUSTERS}?watch=true&fieldSelector=spec.syncMode%3DPush")
    assert reply.status == 400
    assert reply.json["message"] == (
        '"spec.syncMode" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )


def idle_watch(api: Api, path: str) -> http.client.HTTPResponse:
    """A watch whose client reads its headers, then nothing, with a receive buffer kept
    small so that the server's side fills soon."""
    conn = http.client.HTTPConnection("127.0.0.1", int(api.url.rsplit(":", 1)[1]), timeout=30)
    conn.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    conn.sock.connect((conn.host, conn.port))
    conn.request("GET", path)
    response = conn.getresponse()
    assert response.status == 200
    return response


def versions(
    response: http.client.HTTPResponse, count: int | None = None, seen: list[int] | None = None
) -> list[int]:
    """The resourceVersions of the next `count` events, or of all until the stream ends;
    added to `seen` as they come, if given."""
    seen = [] if seen is None else seen
    while count is None or len(seen) < count:
        line = response.readline()
        if not line:
            break
        seen.append(int(json.loads(line)["object"]["metadata"]["resourceVersion"]))
    return seen


def flood(api: Api, updates: int, idle: int) -> tuple[list[http.client.HTTPResponse], int]:
    """Open `idle` watches that do not read, then update a ConfigMap `updates` times with
    32 KB of new data, no faster than a watch that reads keeps up; check that it got every
    update. The idle watches, and the most memory held meanwhile."""
    configmaps = "/api/v1/namespaces/default/configmaps"
    api.post(configmaps, {"metadata": {"name": "cm"}})
    watch = f"{configmaps}?watch=1&resourceVersion={api.store.resource_version}"
    expected = list(range(api.store.resource_version + 1, api.store.resource_version + 1 + updates))
    responses = [idle_watch(api, watch) for _ in range(idle)]
    with watching(api, watch, timeout=60) as stream:
        read: list[int] = []
        threading.Thread(target=versions, args=(stream.response, updates, read)).start()
        tracemalloc.start()
        try:
            for i in range(updates):
                while i - len(read) > 50:  # no faster than it reads
                    time.sleep(0.001)
                data = {"data": {"v": f"{i:06d}" + "x" * 32 * 1024}}
                api.store.patch(CONFIGMAP, "cm", "default", data)
            assert wait_for(lambda: len(read) == updates, timeout=60)
            held = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert read == expected
    return responses, held


def test_watches_that_do_not_read_hold_a_bounded_amount_of_memory(make_api: MakeApi) -> None:
    """Twenty watches never read while 3,000 updates of 32 KB (94 MiB) go by, more than
    the store's log keeps: unbounded, they held every update."""
    api = make_api(MemoryStore(watch_buffer=100, event_log_size=100))
    idle, held = flood(api, 3_000, 20)
    try:
        assert held < 48 * 2**20, f"{held / 2**20:.0f} MiB"
    finally:
        for response in idle:
            response.close()


def test_a_watch_that_does_not_read_is_ended_and_resumes_with_nothing_missed(
    make_api: MakeApi,
) -> None:
    """Once the store holds 100 events for it (after what its socket and the relay hold),
    the watch is ended; its client gets what was held, then the end, and resumes from the
    last resourceVersion it got."""
    api = make_api(MemoryStore(watch_buffer=100, event_log_size=2_000))
    start = api.store.resource_version + 1  # the ConfigMap flood creates
    [idle], _ = flood(api, 1_500, 1)
    try:
        expected = list(range(start + 1, start + 1_501))
        got = versions(idle)  # now read: what was held, then the end
        assert 100 < len(got) < 1_500 and got == expected[: len(got)]  # ended early
    finally:
        idle.close()
    resume = f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={got[-1]}"
    with watching(api, resume, 60) as resumed:
        assert got + versions(resumed.response, 1_500 - len(got)) == expected
