"""`fleetwarden up` and `fleetwarden agent` as a user types them: every setting a flag by
Karmada's name, refused values named, a hub that cannot be reached."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import fields
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleetwarden.cli import app
from fleetwarden.cli.serving import Serving
from fleetwarden.cli.up import Hub
from fleetwarden.client.client import Client
from fleetwarden.client.errors import ServerError
from fleetwarden.client.kubeconfig import write_kubeconfig
from fleetwarden.runtime.settings import Settings

runner = CliRunner()


def test_every_setting_is_a_flag_of_up_with_karmadas_default() -> None:
    result = runner.invoke(app, ["up", "--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0
    for setting in fields(Settings):
        assert f"--{setting.name.replace('_', '-')} " in result.stdout
    assert "Default: 40s." in result.stdout  # cluster-lease-duration


def test_a_setting_that_does_not_parse_is_refused_naming_the_flag(tmp_path: Path) -> None:
    result = runner.invoke(app, ["up", f"--data-dir={tmp_path}", "--cluster-lease-duration=forty"])
    assert result.exit_code == 2
    assert "--cluster-lease-duration" in result.stderr
    assert 'invalid value "forty"' in result.stderr
    assert not (tmp_path / "kubeconfig").exists()


def test_the_agent_takes_only_karmada_agents_settings() -> None:
    result = runner.invoke(app, ["agent", "--help"], env={"COLUMNS": "300"})
    assert "--cluster-lease-duration " in result.stdout
    assert "--graceful-eviction-timeout" not in result.stdout


def test_an_agent_whose_hub_does_not_answer_exits_with_the_reason(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, "http://127.0.0.1:1")
    result = runner.invoke(
        app, ["agent", f"--hub-kubeconfig={kubeconfig}", "--cluster-name=member1"]
    )
    assert result.exit_code == 1
    assert (
        "error: joining http://127.0.0.1:1: The connection to the server 127.0.0.1:1 was refused"
        in result.stderr
    )


def test_an_agent_refuses_an_unknown_mode(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["agent", "--hub-kubeconfig=x", "--cluster-name=member1", "--mode=sideways"]
    )
    assert result.exit_code == 2
    assert '"sideways": use pull, push or ocm' in result.stderr


@pytest.mark.parametrize(
    ("mode", "name", "why"),
    [
        ("pull", "m" * 49, "must be no more than 48 characters"),
        ("ocm", "Cluster1", "a lowercase RFC 1123 label must consist of"),
        ("push", "a/../b", "a lowercase RFC 1123 label must consist of"),
    ],
)
def test_an_agent_refuses_a_cluster_name_the_hub_would_not_take(
    mode: str, name: str, why: str
) -> None:
    result = runner.invoke(
        app, ["agent", "--hub-kubeconfig=x", f"--cluster-name={name}", f"--mode={mode}"]
    )
    assert result.exit_code == 2
    assert why in " ".join(result.stderr.replace("│", " ").split())


def test_a_token_that_has_expired_already_is_refused() -> None:
    result = runner.invoke(app, ["token", "create", "--ttl=-1h", "--kubeconfig=/nonexistent"])
    assert result.exit_code == 2
    assert "-1h: a token cannot have expired already" in result.stderr


def test_a_second_hub_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    first = Hub(tmp_path, Serving(port=0), Settings())
    first.start()
    try:
        result = runner.invoke(app, ["up", f"--data-dir={tmp_path}", "--port=0"])
    finally:
        first.stop()
    assert result.exit_code == 1
    assert "fleetwarden.db" in result.stderr
    assert "is another process using it?" in result.stderr


def test_ocm_flags_are_refused_in_another_mode() -> None:
    result = runner.invoke(
        app, ["agent", "--hub-kubeconfig=x", "--cluster-name=member1", "--accept"]
    )
    assert result.exit_code == 2
    assert "--accept" in result.stderr
    assert "only for --mode ocm" in result.stderr


def test_a_member_api_is_a_simulated_members_with_nodes() -> None:
    command = ["agent", "--hub-kubeconfig=x", "--cluster-name=member1"]
    for flags, flag, reason in (
        (["--member-api-dir=d"], "--member-api-dir", "needs --nodes"),
        (["--nodes=3", "--member-kubeconfig=k"], "--nodes", "only for a simulated member"),
        (["--member-api-dir=d", "--member-kubeconfig=k"], "--member-api-dir", "only for a "),
    ):
        result = runner.invoke(app, [*command, *flags], env={"COLUMNS": "300"})
        assert result.exit_code == 2
        assert f"Invalid value for {flag}: {reason}" in result.stderr


def test_a_cluster_claim_must_be_a_name_and_a_value() -> None:
    command = ["agent", "--hub-kubeconfig=x", "--cluster-name=cluster1", "--mode=ocm"]
    for claim, reason in (
        ("Region_1=us", 'Invalid value: "Region_1": a lowercase RFC 1123 subdomain must'),
        ("region", '"region": expected NAME=VALUE'),
    ):
        result = runner.invoke(app, [*command, f"--cluster-claim={claim}"], env={"COLUMNS": "300"})
        assert result.exit_code == 2
        assert f"Invalid value for --cluster-claim: {reason}" in result.stderr


def test_a_hub_whose_store_file_is_removed_stops_being_ready_and_refuses_writes(
    tmp_path: Path, admin_client: Callable[[Hub], Client]
) -> None:
    hub = Hub(tmp_path, Serving(port=0), Settings())
    hub.start()
    try:
        client = admin_client(hub)
        assert client.get_raw("/readyz").text == "ok"
        for file in tmp_path.glob("fleetwarden.db*"):
            file.unlink()
        with pytest.raises(ServerError) as not_ready:
            client.get_raw("/readyz")
        assert not_ready.value.code == 500
        with pytest.raises(ServerError) as refused:
            client.create({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "cm", "namespace": "default"}})  # fmt: skip
        assert refused.value.code == 503
        assert "was removed or replaced while the hub ran" in refused.value.message
    finally:
        hub.stop()


def test_a_store_that_is_no_database_is_one_line_and_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "fleetwarden.db").write_bytes(b"not a database " * 100)
    result = runner.invoke(app, ["up", f"--data-dir={tmp_path}", "--port=0"])
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: {tmp_path / 'fleetwarden.db'}: file is not a database (is it a fleetwarden "
        "store?)\n"
    )


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port another program listens on."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def test_a_port_taken_is_named_and_a_new_data_dir_is_left_as_it_was(
    tmp_path: Path, taken_port: int
) -> None:
    data_dir = tmp_path / "hub"
    result = runner.invoke(app, ["up", f"--data-dir={data_dir}", f"--port={taken_port}"])
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: failed to listen on 127.0.0.1:{taken_port}: address already in use\n"
    )
    assert not data_dir.exists()


def test_a_port_taken_leaves_an_existing_hubs_data_dir_alone(
    tmp_path: Path, taken_port: int
) -> None:
    first = Hub(tmp_path, Serving(port=0), Settings())
    first.start()
    first.stop()
    before = sorted(tmp_path.rglob("*"))
    result = runner.invoke(app, ["up", f"--data-dir={tmp_path}", f"--port={taken_port}"])
    assert result.exit_code == 1
    assert f"127.0.0.1:{taken_port}" in result.stderr
    assert sorted(tmp_path.rglob("*")) == before


def test_an_etcd_server_that_is_no_url_is_refused_naming_the_flag(tmp_path: Path) -> None:
    data_dir = tmp_path / "hub"
    result = runner.invoke(
        app, ["up", f"--data-dir={data_dir}", "--port=0", "--etcd-servers=ftp://etcd:2379"]
    )
    assert result.exit_code == 1
    assert result.stderr == (
        "error: --etcd-servers: 'ftp://etcd:2379' is not an http(s)://host:port URL\n"
    )
    assert not data_dir.exists()  # nothing made of a start that could not be


def test_an_etcd_that_does_not_answer_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens: refused at once
    data_dir = tmp_path / "hub"
    result = runner.invoke(
        app, ["up", f"--data-dir={data_dir}", "--port=0", f"--etcd-servers=http://127.0.0.1:{port}"]
    )
    assert result.exit_code == 1
    assert result.stderr.startswith("error: etcd unavailable: ")
    assert result.stderr.count("\n") == 1
    assert not data_dir.exists()


STOPPED_BY_SIGNALS = """
import os, signal, sys, threading, time
from fleetwarden.cli.up import stop_on_signals

stop = stop_on_signals()
def pelt():  # a burst, as a supervisor that sends SIGTERM again and again
    for _ in range(70_000):  # more bytes than a pipe holds
        os.kill(os.getpid(), signal.SIGTERM)
threading.Thread(target=pelt, daemon=True).start()
deadline = time.monotonic() + 10
while not stop.wait(0.00001) and time.monotonic() < deadline:
    pass  # the main thread in and out of the Event's wait, where a handler lands
sys.exit(0 if stop.is_set() else 1)
"""


def test_a_burst_of_sigterm_stops_a_process_waiting_on_its_stop_event() -> None:
    """The handler runs on the main thread, inside `stop.wait()`: it must not take the
    Event's lock, and a full pipe must not block it."""
    done = subprocess.run([sys.executable, "-c", STOPPED_BY_SIGNALS], timeout=30, check=False)
    assert done.returncode == 0


SIGNALLED_ON_ANOTHER_THREAD = """
import signal, threading, time
from fleetwarden.cli.up import stop_on_signals, wait_for

stop = stop_on_signals()
sleeper = threading.Thread(target=time.sleep, args=(60,), daemon=True)
sleeper.start()
# As the kernel may deliver a process's SIGTERM to any thread: here, not the main one.
threading.Timer(0.2, signal.pthread_kill, (sleeper.ident, signal.SIGTERM)).start()
wait_for(stop)
"""


def test_a_sigterm_delivered_to_another_thread_stops_the_wait() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SIGNALLED_ON_ANOTHER_THREAD], timeout=30, check=False
    )
    assert done.returncode == 0
