"""Real etcd processes for tests: one member or several, on loopback with free ports, in a
directory of the test's, stopped by PID. `.ci/run` installs Debian's etcd-server."""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

ETCD = shutil.which("etcd") or "/usr/bin/etcd"
# etcd is SIGKILLed when the test process dies, however it dies (a killed pytest leaves no
# etcd behind): util-linux's setpriv sets that, and execs etcd. Not a preexec_fn, which
# makes Python fork the test process whole, gRPC's threads and their locks with it: a
# child may then wait forever on a lock one of them held, and the test with it.
DIE_WITH_PARENT = [shutil.which("setpriv") or "/usr/bin/setpriv", "--pdeathsig=KILL"]


# Below Linux's ephemeral range (32768-60999): the port of a member killed and started again
# is not taken meanwhile as the local port of some outgoing connection (etcd would exit with
# "address already in use").
PORTS = range(20000, 32768)
_given: set[int] = set()  # none twice, though the first may not listen yet


def free_port() -> int:
    while True:
        port = random.choice(PORTS)
        if port in _given:
            continue
        _given.add(port)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


@dataclass(frozen=True)
class ClientTLS:
    """etcd serving HTTPS to clients with certificates this CA signed (--client-cert-auth)."""

    ca: Path
    cert: Path
    key: Path


@dataclass
class Member:
    name: str
    client_port: int
    peer_port: int
    data_dir: Path
    process: subprocess.Popen[bytes] | None = None
    scheme: str = "http"

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"


@dataclass
class EtcdCluster:
    """`size` etcd members; start() waits until every one answers."""

    root: Path
    size: int = 1
    members: list[Member] = field(default_factory=list)
    tls: ClientTLS | None = None  # the serving certificate and key, and the clients' CA

    def __post_init__(self) -> None:
        scheme = "https" if self.tls else "http"
        self.members = [
            Member(f"m{i}", free_port(), free_port(), self.root / f"m{i}", scheme=scheme)
            for i in range(self.size)
        ]

    @property
    def urls(self) -> list[str]:
        return [m.url for m in self.members]

    def start(self) -> EtcdCluster:
        for member in self.members:
            self.start_member(member, new=True)
        for member in self.members:
            self.wait_ready(member)
        return self

    def start_member(self, member: Member, *, new: bool = False) -> None:
        initial = ",".join(f"{m.name}={m.peer_url}" for m in self.members)
        log = open(self.root / f"{member.name}.log", "ab")  # noqa: SIM115  # the process's
        member.process = subprocess.Popen(
            [
                *DIE_WITH_PARENT,
                ETCD,
                f"--name={member.name}",
                f"--data-dir={member.data_dir}",
                f"--listen-client-urls={member.url}",
                f"--advertise-client-urls={member.url}",
                f"--listen-peer-urls={member.peer_url}",
                f"--initial-advertise-peer-urls={member.peer_url}",
                f"--initial-cluster={initial}",
                f"--initial-cluster-state={'new' if new else 'existing'}",
                "--initial-cluster-token=fleetwarden-test",
                *self._tls_flags(),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()

    def _tls_flags(self) -> list[str]:
        if self.tls is None:
            return []
        return [
            f"--cert-file={self.tls.cert}",
            f"--key-file={self.tls.key}",
            f"--trusted-ca-file={self.tls.ca}",
            "--client-cert-auth",
        ]

    def wait_ready(self, member: Member, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert member.process is not None and member.process.poll() is None, (
                f"etcd {member.name} exited: {(self.root / f'{member.name}.log').read_text()}"
            )
            try:
                if (
                    requests.get(f"{member.url}/health", timeout=1, **self._auth())
                    .json()
                    .get("health")
                    == "true"
                ):
                    return
            except (requests.RequestException, ValueError):
                pass
            time.sleep(0.05)
        raise TimeoutError(f"etcd {member.name} not healthy after {timeout} s")

    def _auth(self) -> dict[str, object]:
        """What requests needs to reach a member: the CA, and a client certificate (the
        serving one: etcd takes any its CA signed)."""
        if self.tls is None:
            return {}
        return {"verify": str(self.tls.ca), "cert": (str(self.tls.cert), str(self.tls.key))}

    def kill(self, member: Member) -> None:
        """kill -9."""
        if member.process is not None and member.process.poll() is None:
            os.kill(member.process.pid, signal.SIGKILL)
            member.process.wait()

    def stop(self) -> None:
        for member in self.members:
            if member.process is not None and member.process.poll() is None:
                member.process.terminate()
                try:
                    member.process.wait(10)
                except subprocess.TimeoutExpired:
                    self.kill(member)
