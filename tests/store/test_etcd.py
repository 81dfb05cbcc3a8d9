"""What only the etcd store has: several replicas on one etcd, etcd's compaction under a
live watch, and a member of a three-member etcd killed and brought back."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from cryptography.x509.oid import ExtendedKeyUsageOID
from etcd_cluster import ClientTLS, EtcdCluster, Member

from fleetwarden.api.errors import Conflict, Expired, StatusError
from fleetwarden.auth.pki import (
    CERT_VALIDITY,
    KeyPair,
    _issue,
    _subject,
    client_certificate,
    new_ca,
    new_key,
)
from fleetwarden.store import Watch, WatchEvent
from fleetwarden.store.etcd import EtcdStore
from fleetwarden.store.etcd_client import EtcdTimeout, EtcdTLS, EtcdUnavailable

from .conftest import DEPLOYMENTS, deployment, revisions

Replicas = tuple[EtcdStore, EtcdStore]


@pytest.fixture
def replicas(etcd: EtcdCluster, request: pytest.FixtureRequest) -> Iterator[Replicas]:
    """Two stores on the session's etcd under one prefix, as two hub replicas."""
    prefix = f"/{request.node.name}"
    first, second = EtcdStore(etcd.urls, prefix=prefix), EtcdStore(etcd.urls, prefix=prefix)
    yield first, second
    first.close()
    second.close()


@pytest.fixture
def own_etcd(tmp_path: Path) -> Iterator[EtcdCluster]:
    """A single etcd of the test's own, to kill and compact."""
    cluster = EtcdCluster(tmp_path).start()
    yield cluster
    cluster.stop()


@pytest.fixture
def three_members(tmp_path: Path) -> Iterator[EtcdCluster]:
    cluster = EtcdCluster(tmp_path, size=3).start()
    yield cluster
    cluster.stop()


def summary(events: list[WatchEvent]) -> list[tuple[str, str, int]]:
    return [(e.type.value, e.object["metadata"]["name"], e.resource_version) for e in events]


def heard(store: EtcdStore) -> list[WatchEvent]:
    seen: list[WatchEvent] = []
    store.subscribe(seen.append)
    return seen


def names(store: EtcdStore) -> list[str]:
    return [o["metadata"]["name"] for o in store.list(DEPLOYMENTS).items]


def ended(watch: Watch) -> list[WatchEvent]:
    """What the watch held, once it has ended by itself (read on a thread, so that a watch
    left open fails the test instead of blocking it)."""
    events: list[WatchEvent] = []
    reader = threading.Thread(target=lambda: events.extend(watch))
    reader.start()
    reader.join(5)
    assert not reader.is_alive(), "the watch is still open"
    return events


def test_a_store_closed_as_soon_as_opened_leaves_no_watch_behind(
    etcd: EtcdCluster, request: pytest.FixtureRequest
) -> None:
    before = set(threading.enumerate())
    EtcdStore(etcd.urls, prefix=f"/{request.node.name}").close()
    left = [t for t in set(threading.enumerate()) - before if t.name == "etcd-watch"]
    assert left == []


# --- two replicas ---------------------------------------------------------------------


def test_a_write_through_one_replica_is_read_at_once_through_the_other(
    replicas: Replicas,
) -> None:
    one, other = replicas
    for i in range(5):
        created = one.create(deployment(f"d{i}"))
        assert other.get(DEPLOYMENTS, f"d{i}", "default") == created
        assert names(other) == [f"d{j}" for j in range(i + 1)]
    one.delete(DEPLOYMENTS, "d0", "default")
    assert names(other) == ["d1", "d2", "d3", "d4"]


def test_a_watch_on_one_replica_hears_the_others_writes(replicas: Replicas) -> None:
    one, other = replicas
    at = revisions(other)
    watch = other.watch(DEPLOYMENTS)
    created = one.create(deployment())
    one.update({**created, "spec": {"replicas": 2}})
    one.delete(DEPLOYMENTS, "web", "default")
    other.list(DEPLOYMENTS)  # the other replica's cache has what etcd has
    watch.close()
    assert summary(list(watch)) == [
        ("ADDED", "web", at(1)),
        ("MODIFIED", "web", at(2)),
        ("DELETED", "web", at(3)),
    ]


def test_concurrent_updates_of_one_object_through_both_replicas_all_land(
    replicas: Replicas,
) -> None:
    """Without a resourceVersion, a write planned on a cache that was behind is planned
    again on the fresh object, not lost and not a conflict."""
    one, other = replicas
    at = revisions(one)
    one.create(deployment())

    def label(store: EtcdStore, who: str) -> None:
        for i in range(10):
            patch = {"metadata": {"labels": {f"{who}{i}": "x"}}}
            store.patch(DEPLOYMENTS, "web", "default", patch)

    writers = [threading.Thread(target=label, args=pair) for pair in [(one, "a"), (other, "b")]]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    stored = other.get(DEPLOYMENTS, "web", "default")
    assert stored["metadata"]["labels"] == {f"{w}{i}": "x" for w in "ab" for i in range(10)}
    assert stored["metadata"]["resourceVersion"] == str(at(21))  # one write each


def test_a_stale_resource_version_is_a_conflict_on_both_replicas(replicas: Replicas) -> None:
    one, other = replicas
    stale = one.create(deployment())
    other.update({**stale, "spec": {"replicas": 2}})
    for store in replicas:
        with pytest.raises(Conflict):
            store.update({**stale, "spec": {"replicas": 3}})
        assert store.get(DEPLOYMENTS, "web", "default")["spec"] == {"replicas": 2}


@pytest.mark.parametrize("applied", [True, False], ids=["applied", "dropped"])
def test_a_write_whose_answer_was_lost_is_sent_again_and_lands_once(
    replicas: Replicas, monkeypatch: pytest.MonkeyPatch, applied: bool
) -> None:
    """etcd's leader dies with a write in flight: the write may or may not have been
    applied. Sent again as the same compare-and-swap, it lands once either way."""
    store, other = replicas
    call, lost = store.etcd._call, []

    def lose_one_answer(operation: str, method: str, request: Any, **options: Any) -> Any:
        if method == "Txn" and not lost:
            lost.append(method)
            if applied:
                call(operation, method, request, **options)
            raise EtcdTimeout("etcd: Deadline Exceeded")
        return call(operation, method, request, **options)

    monkeypatch.setattr(store.etcd, "_call", lose_one_answer)
    at = revisions(other)
    created = store.create(deployment())
    assert lost == ["Txn"]
    assert created["metadata"]["resourceVersion"] == str(at(1))
    assert other.get(DEPLOYMENTS, "web", "default") == created
    lost.clear()
    store.delete(DEPLOYMENTS, "web", "default")
    assert names(other) == []


# --- consistent reads -----------------------------------------------------------------


def test_concurrent_reads_share_one_read_of_etcds_revision(
    replicas: Replicas, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = replicas
    store.create(deployment())
    asked, let_go = [], threading.Event()
    revision = store.etcd.revision

    def slow_revision() -> int:
        asked.append(1)
        let_go.wait(5)
        return revision()

    monkeypatch.setattr(store.etcd, "revision", slow_revision)
    readers = [
        threading.Thread(target=store.get, args=(DEPLOYMENTS, "web", "default")) for _ in range(8)
    ]
    for reader in readers:
        reader.start()
    time.sleep(0.2)  # every reader waiting: one on etcd, the others for the next round
    let_go.set()
    for reader in readers:
        reader.join(5)
    assert len(asked) == 2


def test_a_read_that_comes_while_a_read_is_under_way_waits_for_a_fresh_one(
    replicas: Replicas, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read under way may have been answered before a write the second reader knows
    of: that reader waits for a read of its own, which sees the write."""
    one, other = replicas
    first, let_go, heard = threading.Event(), threading.Event(), threading.Event()
    revision, receive = other.etcd.revision, other._receive

    def answered_before_the_write() -> int:
        if first.is_set():
            heard.set()  # the other replica's watch brings the write from now on
            return revision()
        answer = revision()  # etcd's revision before the write
        first.set()
        let_go.wait(5)
        return answer

    def late_watch(events: Any) -> None:
        heard.wait(5)
        receive(events)

    monkeypatch.setattr(other.etcd, "revision", answered_before_the_write)
    monkeypatch.setattr(other, "_receive", late_watch)
    early = threading.Thread(target=lambda: names(other))
    early.start()
    assert first.wait(5)
    one.create(deployment("written"))  # acknowledged while the first read is under way
    late: list[list[str]] = []
    reader = threading.Thread(target=lambda: late.append(names(other)))
    reader.start()
    time.sleep(0.1)
    let_go.set()
    reader.join(5)
    heard.set()
    early.join(5)
    assert late == [["written"]]


def test_a_read_at_resource_version_0_asks_etcd_nothing(
    replicas: Replicas, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = replicas
    created = store.create(deployment())

    def no_etcd() -> int:
        raise AssertionError("etcd asked")

    monkeypatch.setattr(store.etcd, "revision", no_etcd)
    assert store.get(DEPLOYMENTS, "web", "default", resource_version="0") == created


# --- compaction -----------------------------------------------------------------------


def gated(watch: Callable[[int], Any], gate: threading.Event) -> Callable[[int], Any]:
    """The store's etcd watch, opened only once the gate is open: its watch stays behind."""

    def open_when_let(start_revision: int) -> Any:
        gate.wait()
        return watch(start_revision)

    return open_when_let


def test_a_replica_whose_watch_falls_behind_a_compaction_lists_again(
    own_etcd: EtcdCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    behind, writer = EtcdStore(own_etcd.urls), EtcdStore(own_etcd.urls)
    try:
        for name in ("changed", "gone", "kept"):
            behind.create(deployment(name))
        before = behind.resource_version
        subscribed, watch = heard(behind), behind.watch(DEPLOYMENTS)
        gate = threading.Event()
        monkeypatch.setattr(behind.etcd, "watch", gated(behind.etcd.watch, gate))
        (member,) = own_etcd.members
        own_etcd.kill(member)  # breaks both stores' watches
        own_etcd.start_member(member)
        own_etcd.wait_ready(member)
        changed = writer.patch(DEPLOYMENTS, "changed", "default", {"spec": {"replicas": 2}})
        writer.delete(DEPLOYMENTS, "gone", "default")
        added = writer.create(deployment("new"))
        writer.etcd.compact(writer.etcd.revision())
        gate.set()

        assert names(behind) == ["changed", "kept", "new"]
        assert summary(subscribed) == [
            ("MODIFIED", "changed", int(changed["metadata"]["resourceVersion"])),
            ("ADDED", "new", int(added["metadata"]["resourceVersion"])),
            ("DELETED", "gone", behind.resource_version),
        ]
        assert ended(watch) == []  # its events in between are lost: it is ended
        with pytest.raises(Expired):
            behind.watch(DEPLOYMENTS, resource_version=str(before))
    finally:
        behind.close()
        writer.close()


# --- a member of three killed ---------------------------------------------------------


def is_leader(member: Member) -> bool:
    status = requests.post(f"{member.url}/v3/maintenance/status", json={}, timeout=5).json()
    return bool(status["header"]["member_id"] == status["leader"])


def test_a_store_goes_on_through_the_other_members_and_a_restarted_one_catches_up(
    three_members: EtcdCluster,
) -> None:
    cluster = three_members
    # A follower, so that no election stalls the writes; the store asks it first.
    killed = next(m for m in cluster.members if not is_leader(m))
    others = [m for m in cluster.members if m is not killed]
    store = EtcdStore([killed.url, *(m.url for m in others)])
    try:
        store.create(deployment("before"))
        cluster.kill(killed)
        watch = store.watch(DEPLOYMENTS)
        created = store.create(deployment("during"))
        assert store.get(DEPLOYMENTS, "during", "default") == created
        assert names(store) == ["before", "during"]
        watch.close()
        assert summary(list(watch)) == [("ADDED", "during", store.resource_version)]

        cluster.start_member(killed)
        cluster.wait_ready(killed)
        rejoined = EtcdStore([killed.url])
        try:
            assert rejoined.get(DEPLOYMENTS, "during", "default") == created
        finally:
            rejoined.close()
    finally:
        store.close()


def test_while_etcd_is_gone_requests_fail_fast_and_all_resumes_when_it_is_back(
    own_etcd: EtcdCluster,
) -> None:
    store = EtcdStore(own_etcd.urls, prefix="/outage", timeout=2)
    try:
        watch = store.watch(DEPLOYMENTS)
        store.create(deployment("before"))
        (member,) = own_etcd.members
        own_etcd.kill(member)
        started = time.monotonic()
        with pytest.raises(EtcdUnavailable) as refused:
            store.create(deployment("during"))
        assert refused.value.code == 503
        with pytest.raises(StatusError) as unread:
            store.get(DEPLOYMENTS, "before", "default")
        assert unread.value.code in (503, 504)
        assert time.monotonic() - started < 5  # fast: no request waits out a long timeout
        assert eventually(lambda: not store.healthy)  # /readyz of a hub on it fails
        own_etcd.start_member(member)
        own_etcd.wait_ready(member)
        assert eventually(lambda: store.healthy)
        store.create(deployment("after"))
        assert names(store) == ["after", "before"]
        # The watch taken before the outage hears what was written after it.
        events = iter(watch)
        assert [next(events).object["metadata"]["name"] for _ in range(2)] == ["before", "after"]
    finally:
        store.close()


def eventually(check: Callable[[], bool], timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_an_owner_a_subscriber_deletes_has_its_dependents_collected(
    replicas: Replicas,
) -> None:
    store, _ = replicas
    owner = store.create(deployment("owner"))
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "owner"}
    store.create(deployment("child", ownerReferences=[{**ref, "uid": owner["metadata"]["uid"]}]))

    def delete_owner_on_trigger(event: WatchEvent) -> None:
        if event.object["metadata"]["name"] == "trigger":
            store.delete(DEPLOYMENTS, "owner", "default")

    store.subscribe(delete_owner_on_trigger)
    store.create(deployment("trigger"))
    assert names(store) == ["trigger"]


def test_the_store_reaches_an_etcd_that_wants_tls_and_client_certificates(
    tmp_path: Path,
) -> None:
    now = datetime.now(UTC)
    ca = new_ca("etcd-ca", now)
    server = etcd_certificate(ca, now)
    client = client_certificate(ca, "fleetwarden", [], now)
    files = {
        name: tmp_path / f"{name}.pem"
        for name in ("ca", "server", "server-key", "client", "client-key")
    }
    files["ca"].write_bytes(ca.certificate_pem())
    server.write(files["server"], files["server-key"])
    client.write(files["client"], files["client-key"])
    cluster = EtcdCluster(
        tmp_path / "etcd", tls=ClientTLS(files["ca"], files["server"], files["server-key"])
    )
    (tmp_path / "etcd").mkdir()
    cluster.start()
    try:
        assert cluster.urls[0].startswith("https://")
        tls = EtcdTLS(str(files["ca"]), str(files["client"]), str(files["client-key"]))
        store = EtcdStore(cluster.urls, prefix="/tls", tls=tls)
        try:
            store.create(deployment("secure"))
            assert names(store) == ["secure"]
        finally:
            store.close()
        # Without a client certificate etcd refuses the connection: nothing is served.
        with pytest.raises(EtcdUnavailable):
            EtcdStore(cluster.urls, prefix="/tls", tls=EtcdTLS(str(files["ca"])), timeout=2)
    finally:
        cluster.stop()


def etcd_certificate(ca: KeyPair, now: datetime) -> KeyPair:
    """etcd's certificate: it serves with it and its own gateway connects to it with it too,
    so it must be good for both server and client authentication."""
    key = new_key()
    usages = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
    subject = _subject("etcd", [])
    expiry = now + CERT_VALIDITY
    return KeyPair(
        _issue(ca, key.public_key(), subject, usages, now, expiry, sans=["127.0.0.1"]), key
    )


class Unanswering:
    """A TCP front for etcd that takes connections and says nothing on them (an etcd too
    loaded to answer) until `answer()`; from then on it relays them to etcd."""

    def __init__(self, url: str) -> None:
        self.target = urlsplit(url)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.answering = threading.Event()
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def answer(self) -> None:
        self.answering.set()

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):  # closed
            while True:
                client, _ = self.listener.accept()
                self.sockets.append(client)
                threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        self.answering.wait()
        address = (self.target.hostname, self.target.port)
        with contextlib.suppress(OSError):
            server = socket.create_connection(address)  # type: ignore[arg-type]
            self.sockets.append(server)
            threading.Thread(target=_pipe, args=(server, client), daemon=True).start()
            _pipe(client, server)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)


def test_a_store_opened_while_etcd_is_slow_to_answer_waits_for_it(
    etcd: EtcdCluster, caplog: pytest.LogCaptureFixture
) -> None:
    front = Unanswering(etcd.urls[0])
    try:
        threading.Timer(3, front.answer).start()
        with caplog.at_level(logging.WARNING, "fleetwarden.store.etcd"):
            store = EtcdStore([front.url], prefix="/slow-start", timeout=1)
        try:
            store.create(deployment("late"))
            assert names(store) == ["late"]
        finally:
            store.close()
    finally:
        front.close()
    waited = [m for m in caplog.messages if m.endswith("; listing again")]
    assert waited and waited[0].startswith(f"etcd unavailable: {front.url}: ")
