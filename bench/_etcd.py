"""A one-member etcd (Debian's etcd-server) on the loopback, for the benches that measure
the store on etcd: started in a directory of the bench's, stopped when done."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx


@contextlib.contextmanager
def etcd_server(data_dir: Path) -> Iterator[str]:
    """etcd's client URL, while it runs."""
    client, peer = free_port(), free_port()
    url, peer_url = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
    log = data_dir / "etcd.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            ["etcd", "--name=bench", f"--data-dir={data_dir / 'etcd'}",
             f"--listen-client-urls={url}", f"--advertise-client-urls={url}",
             f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
             f"--initial-cluster=bench={peer_url}"],
            stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not _healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"etcd did not start; its log ends:\n{log.read_text()[-2000:]}")
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(30)


def _healthy(url: str) -> bool:
    try:
        return bool(httpx.get(f"{url}/health").json().get("health") == "true")
    except (httpx.TransportError, ValueError):
        return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
