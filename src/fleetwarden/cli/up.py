"""`fleetwarden up`: the hub in real time, on 127.0.0.1.

One process: the SQLite store in --data-dir, the admission chain, every hub controller
under the real-time driver, and the Kubernetes-compatible API server; a kubeconfig for it
is written to <data-dir>/kubeconfig. With --members N, N `fleetwarden agent` processes
(member1..N, Pull mode) join at once and stop with the hub, each member simulating
--member-nodes nodes and serving its own API, which the kubeconfig reaches as context
memberN (cli/member_api.py); with --ocm-members N, N more (cluster1..N, OCM mode, their
ManagedClusters accepted). SIGINT or SIGTERM stops
everything in order; the next `up` on the same data dir resumes from the store.

Every setting (runtime/settings.py) is a flag, by Karmada's name and with its default.

With --leader-elect (the default) each upstream binary's controllers (hub.py names their
locks) run only while this replica holds that binary's Lease, so that replicas sharing a
store run each once; the API server serves whatever the locks. The SQLite store is this
process's alone (it locks the file), so a Lease left in it by a process killed before
(`kill -9`) is taken at once rather than waited out.

The hub's parts (the server, the store, the controllers) are imported when the hub is built,
not with this module: every `fleetwarden` command imports it, for its options.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from fleetwarden.api.errors import AlreadyExists, Conflict, NotFound, StatusError
from fleetwarden.runtime.settings import (
    FeatureGates,
    LeaderElectionConfiguration,
    Settings,
    SettingsError,
)
from fleetwarden.semantics.durations import format_duration

if TYPE_CHECKING:
    from fleetwarden.cli.serving import Serving
    from fleetwarden.hub import Lock
    from fleetwarden.runtime.leader_election import LeaderElector
    from fleetwarden.runtime.manager import Controller
    from fleetwarden.runtime.metrics import Metrics
    from fleetwarden.store import CoreStore
    from fleetwarden.store.core import KindsFunc

logger = logging.getLogger(__name__)

STORE_FILE = "fleetwarden.db"
KUBECONFIG_FILE = "kubeconfig"
MEMBERS_DIR = "members"
# How long `up`'s agents may join with its bootstrap token, and wait to be accepted.
BOOTSTRAP_TOKEN_TTL = timedelta(hours=24)
ACCEPT_WAIT = 120.0
# An exited agent starts again after RESTART_DELAY, doubled at each exit up to the longest.
RESTART_DELAY = 1.0
RESTART_DELAY_MAX = 60.0
SUPERVISE_INTERVAL = 0.2
# Tries at writing the settings ConfigMap while other replicas write it too.
PUBLISH_ATTEMPTS = 5
# The nodes of each simulated member `up --members` starts.
DEFAULT_MEMBER_NODES = 3
# How long an agent gets to stop on SIGTERM before it is killed.
AGENT_STOP_TIMEOUT = 10.0

_Command = TypeVar("_Command", bound=Callable[..., None])


# settings as flags --------------------------------------------------------------------------


def settings_flags(only: Iterable[str] | None = None) -> Callable[[_Command], _Command]:
    """Give a command the settings (all, or the flags named) as `--flag` options with
    Karmada's names and defaults; it receives them parsed, as its `settings` argument.

    A bool setting takes a value, `--flag=true` or `--flag=false` (pflag's bare `--flag`
    is not taken: click has no option with an optional value).
    """
    named = None if only is None else set(only)
    chosen = [f for f in fields(Settings) if named is None or f.name.replace("_", "-") in named]
    defaults = Settings()

    def decorate(command: _Command) -> _Command:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "settings"]
        flags = [
            inspect.Parameter(
                f.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=None,
                annotation=Annotated[str | None, _option(f.name, getattr(defaults, f.name))],
            )
            for f in chosen
        ]

        @functools.wraps(command)
        def run(**kwargs: Any) -> None:
            given = {
                f.name.replace("_", "-"): value
                for f in chosen
                if (value := kwargs.pop(f.name)) is not None
            }
            try:
                settings = Settings.from_flags(given)
            except SettingsError as exc:
                raise typer.BadParameter(str(exc), param_hint=f"--{exc.setting}") from None
            command(settings=settings, **kwargs)

        run.__signature__ = signature.replace(parameters=[*own, *flags])  # type: ignore[attr-defined]
        run.__annotations__ = {}
        return run  # type: ignore[return-value]

    return decorate


def _option(name: str, default: object) -> Any:
    flag = name.replace("_", "-")
    return typer.Option(
        f"--{flag}",
        help=f"Default: {_go_text(default)}.",
        metavar=_metavar(default),
        show_default=False,
        rich_help_panel="Settings",
    )


def _go_text(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, timedelta):
        return format_duration(value)
    if isinstance(value, FeatureGates):
        return "Karmada's defaults" if not value.overrides else str(value.overrides)
    return "unset" if value is None else str(value)


def _metavar(default: object) -> str:
    if isinstance(default, bool):
        return "BOOL"
    if isinstance(default, timedelta):
        return "DURATION"
    if isinstance(default, int | float):
        return "NUMBER"
    return "TEXT"


# the hub --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Storage:
    """Where the hub keeps its objects: the SQLite file in its data dir (this process's
    alone), or etcd (kube-apiserver's --etcd-* flags), which several replicas share."""

    etcd_servers: tuple[str, ...] = ()
    etcd_prefix: str = "/registry"
    etcd_cafile: Path | None = None
    etcd_certfile: Path | None = None
    etcd_keyfile: Path | None = None

    @property
    def exclusive(self) -> bool:
        """Whether no other process can be using the store (then a Lease held by another
        identity was left by a process that is gone)."""
        return not self.etcd_servers

    def open(self, data_dir: Path, kinds: KindsFunc, metrics: Metrics) -> CoreStore:
        if not self.etcd_servers:
            from fleetwarden.store import SqliteStore

            return SqliteStore(_owner_only(data_dir / STORE_FILE), kinds=kinds)
        from fleetwarden.store.etcd import EtcdStore
        from fleetwarden.store.etcd_client import EtcdTLS

        files = (self.etcd_cafile, self.etcd_certfile, self.etcd_keyfile)
        cafile, certfile, keyfile = (str(f) if f else None for f in files)
        store = EtcdStore(
            self.etcd_servers, prefix=self.etcd_prefix, tls=EtcdTLS(cafile, certfile, keyfile),
            kinds=kinds, observe=metrics.observe_etcd,
        )  # fmt: skip
        metrics.watch_cache(lambda: store.cached_objects)
        return store


def publish_settings(store: CoreStore, settings: Settings) -> None:
    """The ConfigMap karmada-system/fleetwarden-hub-settings: this hub's settings by flag
    name, for `fleetwarden what-if` to run its copy of the fleet as the hub runs it.
    Replicas starting together on one store each write it; the last one's stays."""
    from fleetwarden.api.registry import REGISTRY
    from fleetwarden.server.namespaces import ensure_namespace
    from fleetwarden.sim.whatif import SETTINGS_CONFIGMAP, SETTINGS_NAMESPACE

    ensure_namespace(store, SETTINGS_NAMESPACE)
    info = REGISTRY.info("v1", "ConfigMap")
    meta = {"name": SETTINGS_CONFIGMAP, "namespace": SETTINGS_NAMESPACE}
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                  "data": settings.to_flags()}  # fmt: skip
    for _ in range(PUBLISH_ATTEMPTS):
        try:
            current = store.get(info, SETTINGS_CONFIGMAP, SETTINGS_NAMESPACE)
            meta["resourceVersion"] = current["metadata"]["resourceVersion"]
            store.update(config_map)
            return
        except NotFound:
            meta.pop("resourceVersion", None)
            with contextlib.suppress(AlreadyExists):
                store.create(config_map)
                return
        except Conflict:
            continue
    # Not worth failing the hub for: what-if then says it runs with the defaults.
    logger.warning("could not write %s/%s", SETTINGS_NAMESPACE, SETTINGS_CONFIGMAP)


class Hub:
    """The hub's parts, composed; start() serves, stop() undoes it in reverse."""

    def __init__(
        self,
        data_dir: Path,
        serving: Serving,
        settings: Settings,
        leader_election: LeaderElectionConfiguration | None = None,
        storage: Storage | None = None,
    ) -> None:
        from fleetwarden.admission import default_chain
        from fleetwarden.api.registry import REGISTRY
        from fleetwarden.auth.pki import HubPKI
        from fleetwarden.cli.serving import PKI_DIR
        from fleetwarden.controllers.rbac.bootstrap import ensure_bootstrap_policy
        from fleetwarden.hub import bootstrap_policy
        from fleetwarden.members.real import HttpMembers
        from fleetwarden.runtime.clock import RealClock
        from fleetwarden.runtime.custom_kinds import CustomKinds
        from fleetwarden.runtime.manager import ControllerManager, RealDriver
        from fleetwarden.runtime.metrics import Metrics
        from fleetwarden.server import Server, create_app

        serving.check()
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        data_dir.chmod(0o700)  # it holds keys and the store: its owner's alone
        # The hub's kinds: the registered ones and those its CRDs serve.
        registry = REGISTRY.overlay()
        self.metrics = Metrics(process=True)
        self.storage = storage or Storage()
        self.store = self.storage.open(data_dir, registry.info, self.metrics)
        self.custom_kinds = CustomKinds(self.store, registry)
        clock = RealClock()
        self.serving, self.pki = serving, HubPKI(data_dir / PKI_DIR)
        tls = serving.tls(self.pki, clock.now())
        ensure_bootstrap_policy(self.store, bootstrap_policy())
        manager = ControllerManager(self.store, clock, settings, self.metrics, registry)
        clusters = manager.cache.informer(REGISTRY.info("cluster.karmada.io/v1alpha1", "Cluster"))
        self.members = HttpMembers(clusters)
        self.service_accounts = serving.service_accounts(self.pki, self.store, clock)
        self.security = serving.security(self.store, clock, self.service_accounts)
        election = leader_election or LeaderElectionConfiguration()
        groups = self._controllers()
        for lock, controllers in groups.items():
            if lock is None or not election.leader_elect:
                for controller in controllers:
                    manager.add(controller)
        self.metrics.watch_clusters(clusters.list)
        self.driver = RealDriver(manager)
        locks = [lock for lock in groups if lock is not None] if election.leader_elect else []
        self.electors = self._electors(election, locks)
        self._electing = threading.Event()
        self._election_threads: list[threading.Thread] = []
        self._ready = threading.Event()
        app = create_app(
            self.store, default_chain(registry), clock, ready=self.ready,
            metrics=self.metrics.expose, admission=settings.admission_config(),
            security=self.security, service_accounts=self.service_accounts,
        )  # fmt: skip
        self.server = Server(app, serving.bind_address, serving.port, tls)
        self.settings = settings

    def _controllers(self) -> dict[Lock | None, list[Controller]]:
        """The hub's controllers by lock, made anew at each call."""
        from fleetwarden.hub import (
            by_lock,
            certificate_controllers,
            locked_hub_controllers,
            service_account_controllers,
        )

        controllers = locked_hub_controllers(self.members)
        if self.serving.signs_client_certificates:  # then it answers agents' requests for them
            controllers += certificate_controllers(self.pki.ca(), self.security.authorizer)
        root_ca = self.pki.ca_cert.read_bytes() if self.pki.ca_cert.exists() else None
        controllers += service_account_controllers(self.service_accounts, root_ca)
        return by_lock(controllers)

    def _electors(
        self, config: LeaderElectionConfiguration, locks: Sequence[Lock]
    ) -> list[LeaderElector]:
        """One elector per lock, all with this process's identity; each runs its lock's
        controllers (made anew) while it leads."""
        from fleetwarden.runtime.leader_election import (
            ElectedControllers,
            LeaderElector,
            new_identity,
        )

        identity = new_identity()
        logger.info("leader election identity: %s", identity)
        electors = []
        for lock in locks:
            elected = ElectedControllers(
                self.driver, functools.partial(self._lock_controllers, lock), lock.name
            )
            namespace = lock.namespace or config.resource_namespace
            electors.append(LeaderElector(
                self.store, self.driver.manager.clock, lock.name, namespace, identity, config,
                elected.callbacks(), exclusive=self.storage.exclusive, metrics=self.metrics,
            ))  # fmt: skip
        return electors

    def _lock_controllers(self, lock: Lock) -> list[Controller]:
        return self._controllers()[lock]

    def ready(self) -> bool:
        """/readyz: started, and its store still usable (the file it opened; etcd
        watched)."""
        return self._ready.is_set() and self.store.healthy

    @property
    def url(self) -> str:
        """Where the API is served (known once started, for port 0)."""
        return self.server.url

    @property
    def client_url(self) -> str:
        """Where a client on this machine reaches it."""
        scheme = "https" if self.server.tls else "http"
        host = self.serving.client_address
        return f"{scheme}://{f'[{host}]' if ':' in host else host}:{self.server.port}"

    def start(self) -> None:
        from fleetwarden.auth.bootstrap import JWKS
        from fleetwarden.controllers.karmada.names import NAMESPACE_KARMADA_CLUSTER
        from fleetwarden.server.namespaces import ensure_namespace

        # Where karmada-agent keeps its Cluster's Lease; karmada's installer creates it.
        ensure_namespace(self.store, NAMESPACE_KARMADA_CLUSTER)
        for elector in self.electors:  # where each lock's Lease lives
            ensure_namespace(self.store, elector.namespace)
        publish_settings(self.store, self.settings)
        self.server.start()
        if self.server.tls:  # the issuer's keys, announced where the hub is reached
            jwks = self.serving.service_account_jwks_uri or f"{self.client_url}{JWKS}"
            self.server.app.jwks_uri = jwks
        self.driver.start()
        for elector in self.electors:
            thread = threading.Thread(
                target=elector.run, args=(self._electing,), name=f"elect-{elector.name}"
            )
            thread.start()
            self._election_threads.append(thread)
        self._ready.set()

    def write_kubeconfig(self, path: Path, members: Mapping[str, str] | None = None) -> None:
        """The administrator's kubeconfig: the CA clients trust and a client certificate in
        system:masters; and a context for each member API served (name to URL), whose
        certificates the hub's CA signs."""
        from fleetwarden.client.kubeconfig import Context, write_kubeconfig

        admin = self.serving.admin_credentials(self.pki, datetime.now(UTC))
        ca = self.pki.ca_cert.read_bytes() if members else None
        write_kubeconfig(
            path, self.client_url, ca=self._client_ca(),
            certificate=admin.certificate_pem() if admin else None,
            key=admin.key_pem() if admin else None,
            more=[Context(name, url, ca) for name, url in sorted((members or {}).items())],
        )  # fmt: skip

    def member_api_dir(self, directory: Path) -> Path:
        """Where a member agent serves its API from: the hub's CA (clients' certificates are
        the hub's) and a serving certificate it signs for the loopback."""
        from fleetwarden.auth.pki import serving_certificate
        from fleetwarden.cli.member_api import CLIENT_CA, SERVING_CERT, SERVING_KEY
        from fleetwarden.client.kubeconfig import write_private_file

        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_private_file(directory / CLIENT_CA, self.pki.ca_cert.read_bytes())
        pair = serving_certificate(self.pki.ca(), (), datetime.now(UTC))
        pair.write(directory / SERVING_CERT, directory / SERVING_KEY)
        return directory

    def _client_ca(self) -> bytes | None:
        """The CA a client verifies the hub with: the hub's own, unless it serves a
        certificate of yours (then the system's trust applies)."""
        own_serving = self.server.tls is not None and not self.serving.tls_cert_file
        return self.pki.ca_cert.read_bytes() if own_serving else None

    def agent_credentials(self, directory: Path) -> Callable[[str], list[str]]:
        """A bootstrap token (valid a day) for the agents `up` starts, written as a
        bootstrap kubeconfig, and each agent's flags: join with it, keep its own
        kubeconfig in <directory>/<name>.kubeconfig."""
        from fleetwarden.api.karmada.cluster import AGENT_BOOTSTRAP_GROUP as KARMADA_BOOTSTRAP_GROUP
        from fleetwarden.api.ocm.cluster import AGENT_BOOTSTRAP_GROUP as OCM_BOOTSTRAP_GROUP
        from fleetwarden.auth.authn import bootstrap_token_secret, new_bootstrap_token
        from fleetwarden.client.kubeconfig import write_kubeconfig

        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        token = new_bootstrap_token()
        expiration = datetime.now(UTC) + BOOTSTRAP_TOKEN_TTL
        groups = [KARMADA_BOOTSTRAP_GROUP, OCM_BOOTSTRAP_GROUP]
        self.store.create(bootstrap_token_secret(token, groups, expiration, "fleetwarden up"))
        bootstrap = directory / "bootstrap.kubeconfig"
        write_kubeconfig(bootstrap, self.client_url, ca=self._client_ca(), token=token)
        return lambda name: [
            f"--bootstrap-kubeconfig={bootstrap}",
            f"--hub-kubeconfig={directory / name}.kubeconfig",
        ]

    def stop(self) -> None:
        self._ready.clear()
        self.server.stop()
        # Each elector stops its lock's controllers and releases its Lease, for another
        # replica to take at once.
        self._electing.set()
        for thread in self._election_threads:
            thread.join()
        self.driver.stop()
        self.members.close()
        self.custom_kinds.close()
        if self.security.audit is not None:
            self.security.audit.close()
        self.store.close()


def _owner_only(path: Path) -> Path:
    """The file, made (or left) readable by its owner alone: the store holds Secrets, and
    SQLite gives its journal files the database file's mode."""
    os.close(os.open(path, os.O_CREAT | os.O_RDONLY, 0o600))
    mode = path.stat().st_mode
    if mode & 0o077:
        path.chmod(mode & 0o700)
    return path


# members ----------------------------------------------------------------------------------------

# The settings karmada-agent takes (cmd/agent/app/options/options.go) that ours reads.
AGENT_SETTINGS = (
    "cluster-lease-duration",
    "cluster-lease-renew-interval-fraction",
    "cluster-status-update-frequency",
    "cluster-success-threshold",
    "cluster-failure-threshold",
)


class Agents:
    """The member agents `up --members` and `--ocm-members` start, supervised: their logs and
    pid files in <data-dir>/members; one that exits is logged, reaped and started again
    after a delay that doubles from RESTART_DELAY up to RESTART_DELAY_MAX (back to the
    shortest once it stayed up that long); each ends when the hub does, even when the hub
    is killed (their standard input, a pipe from the hub, closes)."""

    def __init__(
        self, data_dir: Path, credentials: Callable[[str], list[str]], flags: Sequence[str]
    ) -> None:
        self.dir = data_dir / MEMBERS_DIR
        self.credentials, self.flags = credentials, list(flags)
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self._commands: dict[str, list[str]] = {}
        self._started: dict[str, float] = {}
        self._delays: dict[str, float] = {}
        self._due: dict[str, float] = {}  # when an exited agent starts again
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._supervisor = threading.Thread(target=self._supervise, name="agents", daemon=True)

    def start(
        self, prefix: str, count: int, *flags: str, each: Callable[[str], list[str]] | None = None
    ) -> None:
        """`count` agents, <prefix>1..<prefix>N, with these flags (and `each` of their name)
        besides the settings and their kubeconfig flags (`credentials` of their name)."""
        self.dir.mkdir(mode=0o700, exist_ok=True)
        with self._lock:
            for i in range(1, count + 1):
                name = f"{prefix}{i}"
                own = each(name) if each is not None else []
                self._commands[name] = fleetwarden_command(
                    "agent", *self.credentials(name), f"--cluster-name={name}",
                    "--exit-on-stdin-close", *flags, *own, *self.flags,
                )  # fmt: skip
                self._spawn(name)
                logger.info(
                    "agent %s started (pid %d), logging to %s",
                    name, self.processes[name].pid, self.dir / f"{name}.log",
                )  # fmt: skip
        if self.processes and not self._supervisor.is_alive():
            self._supervisor.start()

    def _spawn(self, name: str) -> None:
        with (self.dir / f"{name}.log").open("ab") as log:
            process = subprocess.Popen(
                self._commands[name], stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT
            )
        self.processes[name] = process
        self._started[name] = time.monotonic()
        (self.dir / f"{name}.pid").write_text(f"{process.pid}\n")

    def _supervise(self) -> None:
        while not self._stopping.wait(SUPERVISE_INTERVAL):
            with self._lock:
                if self._stopping.is_set():
                    return
                for name, process in list(self.processes.items()):
                    self._look_after(name, process)

    def _look_after(self, name: str, process: subprocess.Popen[bytes]) -> None:
        code = process.poll()  # reaps it, if it ended
        now = time.monotonic()
        if code is None:
            return
        due = self._due.get(name)
        if due is None:
            delay = self._next_delay(name, now)
            self._due[name] = now + delay
            logger.warning(
                "agent %s (pid %d) exited with %s; starting it again in %g s",
                name, process.pid, _exit_status(code), delay,
            )  # fmt: skip
        elif now >= due:
            del self._due[name]
            self._spawn(name)
            logger.info("agent %s started again (pid %d)", name, self.processes[name].pid)

    def _next_delay(self, name: str, now: float) -> float:
        if now - self._started[name] >= RESTART_DELAY_MAX:
            self._delays.pop(name, None)  # it ran well: start again at once
        delay = self._delays.get(name, RESTART_DELAY / 2) * 2
        self._delays[name] = min(delay, RESTART_DELAY_MAX)
        return self._delays[name]

    def stop(self) -> None:
        """SIGTERM to every agent still running, and how each ended, logged (an agent
        that exited before was logged then)."""
        self._stopping.set()
        with self._lock:
            running = {name: p for name, p in self.processes.items() if p.poll() is None}
            for process in running.values():
                process.terminate()
            for name, process in running.items():
                logger.info("agent %s (pid %d) %s", name, process.pid, _stopped(process))
            for name in self.processes:
                (self.dir / f"{name}.pid").unlink(missing_ok=True)


def _stopped(process: subprocess.Popen[bytes]) -> str:
    """How an agent sent SIGTERM ended: its exit status, or killed after AGENT_STOP_TIMEOUT."""
    try:
        return f"stopped with {_exit_status(process.wait(AGENT_STOP_TIMEOUT))}"
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return f"did not stop within {AGENT_STOP_TIMEOUT:g} s: killed"


def _exit_status(code: int) -> str:
    """`status 1`, or the signal that ended it (`SIGKILL`)."""
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"status {code}"


# `python -c` names the program "-c" in usage lines: name it as the command is named.
_RUN_CLI = "import sys; sys.argv[0] = 'fleetwarden'; from fleetwarden.cli import main; main()"


def fleetwarden_command(*args: str) -> list[str]:
    """`fleetwarden ARGS...`, run by the Python running this process."""
    return [sys.executable, "-c", _RUN_CLI, *args]


def agent_flags(settings: Settings) -> list[str]:
    """The hub's values of the agents' settings, as their flags."""
    return [
        f"--{flag}={_go_text(getattr(settings, flag.replace('-', '_')))}" for flag in AGENT_SETTINGS
    ]


def ocm_agent_flags(lease_duration_seconds: int | None, *, accept: bool) -> list[str]:
    """An OCM agent's flags: the lease duration given, and accepted at once when it runs
    as an administrator (on a hub that signs no certificates)."""
    flags = ["--mode=ocm", *(["--accept"] if accept else [])]
    if lease_duration_seconds is not None:
        flags.append(f"--lease-duration-seconds={lease_duration_seconds}")
    return flags


# the command ------------------------------------------------------------------------------------


_SERVING = "Serving"
_LEADER_ELECTION = "Leader election"


def _leader_option(attr: str, help: str) -> Any:
    """A leader-election flag, with karmada-controller-manager's name, help and default."""
    default = getattr(LeaderElectionConfiguration(), attr)
    return typer.Option(
        f"--{LeaderElectionConfiguration.flag(attr)}",
        help=f"{help} Default: {_go_text(default)}.",
        metavar=_metavar(default),
        show_default=False,
        rich_help_panel=_LEADER_ELECTION,
    )


def _leader_election(**flags: str | None) -> LeaderElectionConfiguration:
    given = {
        LeaderElectionConfiguration.flag(attr): value
        for attr, value in flags.items()
        if value is not None
    }
    try:
        return LeaderElectionConfiguration.from_flags(given)
    except SettingsError as exc:
        raise typer.BadParameter(str(exc), param_hint=f"--{exc.setting}") from None


def _storage_option(help: str, metavar: str) -> Any:
    return typer.Option(help=help, metavar=metavar, rich_help_panel="Storage")


def _serving_option(help: str, metavar: str | None = None) -> Any:
    return typer.Option(help=help, metavar=metavar, rich_help_panel=_SERVING)


@settings_flags()
def up(
    port: Annotated[
        int, _serving_option("The API server's port (0: any free one).", "PORT")
    ] = 6443,
    bind_address: Annotated[
        str,
        _serving_option(
            "The IP address to serve on (0.0.0.0 or :: for every interface); any but the "
            "loopback needs HTTPS, the default.",
            "IP",
        ),
    ] = "127.0.0.1",
    data_dir: Annotated[
        Path,
        typer.Option(
            help="Where the store (SQLite), the certificates and the kubeconfig are kept."
        ),
    ] = Path(".fleetwarden"),
    tls_cert_file: Annotated[
        Path | None,
        _serving_option(
            "The serving certificate, PEM (default: one the hub's CA signs, in <data-dir>/pki).",
            "FILE",
        ),
    ] = None,
    tls_private_key_file: Annotated[
        Path | None, _serving_option("The serving certificate's private key, PEM.", "FILE")
    ] = None,
    client_ca_file: Annotated[
        Path | None,
        _serving_option(
            "The CA whose client certificates authenticate (CN the user, O its groups); "
            "default: the hub's own CA.",
            "FILE",
        ),
    ] = None,
    tls_san: Annotated[
        list[str] | None,
        _serving_option(
            "A further name or IP address for the serving certificate (repeatable).", "NAME"
        ),
    ] = None,
    token_auth_file: Annotated[
        Path | None,
        _serving_option(
            'Bearer tokens, as kube-apiserver reads them: token,user,uid,"group1,group2".',
            "FILE",
        ),
    ] = None,
    anonymous_auth: Annotated[
        bool,
        _serving_option(
            "Take requests without credentials as system:anonymous (RBAC decides what it may "
            "do) instead of refusing them with 401."
        ),
    ] = False,
    enable_bootstrap_token_auth: Annotated[
        bool,
        _serving_option(
            "Authenticate bootstrap tokens (Secrets bootstrap-token-<id> in kube-system), "
            "with which agents ask for their certificates."
        ),
    ] = True,
    audit_log_path: Annotated[
        Path | None,
        _serving_option("Log every request there, one audit.k8s.io/v1 Event a line.", "FILE"),
    ] = None,
    service_account_issuer: Annotated[
        str | None,
        _serving_option(
            "The issuer (iss) of the service account tokens the hub issues and takes "
            "(default: https://kubernetes.default.svc.cluster.local, as kubeadm's).",
            "URL",
        ),
    ] = None,
    service_account_signing_key_file: Annotated[
        Path | None,
        _serving_option(
            "The RSA key service account tokens are signed with, PEM (default: one made in "
            "<data-dir>/pki/sa.key).",
            "FILE",
        ),
    ] = None,
    service_account_jwks_uri: Annotated[
        str | None,
        _serving_option(
            "Where the OIDC discovery document (/.well-known/openid-configuration) says the "
            "issuer's keys are (default: https://<the hub's address>/openid/v1/jwks).",
            "URL",
        ),
    ] = None,
    api_audiences: Annotated[
        list[str] | None,
        _serving_option(
            "An audience the hub takes service account tokens for (repeatable; default: the "
            "issuer).",
            "AUDIENCE",
        ),
    ] = None,
    insecure_serving: Annotated[
        bool,
        _serving_option(
            "Serve plain HTTP, every request an administrator's: for tests and demos, on the "
            "loopback only."
        ),
    ] = False,
    members: Annotated[
        int,
        typer.Option(
            help="Start this many member agents (member1..N, Pull mode), each member's own "
            "API served for `kubectl --context memberN` (over HTTPS)."
        ),
    ] = 0,
    member_nodes: Annotated[
        int,
        typer.Option(
            min=0,
            help="The nodes of each simulated member of --members (node1..N), its workloads' "
            "pods run on (0: none, workloads healthy once applied).",
        ),
    ] = DEFAULT_MEMBER_NODES,
    ocm_members: Annotated[
        int,
        typer.Option(
            help="Start this many OCM registration agents (cluster1..N), their "
            "ManagedClusters accepted."
        ),
    ] = 0,
    ocm_lease_duration_seconds: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="The leaseDurationSeconds of the ManagedClusters the OCM agents create "
            "(default: 60).",
        ),
    ] = None,
    leader_elect: Annotated[
        str | None,
        _leader_option(
            "leader_elect",
            "Start a leader election client and gain leadership before executing the main "
            "loop. Enable this when running replicated components for high availability.",
        ),
    ] = None,
    leader_elect_lease_duration: Annotated[
        str | None,
        _leader_option(
            "lease_duration",
            "The duration that non-leader candidates will wait after observing a leadership "
            "renewal until attempting to acquire leadership of a led but unrenewed leader "
            "slot.",
        ),
    ] = None,
    leader_elect_renew_deadline: Annotated[
        str | None,
        _leader_option(
            "renew_deadline",
            "The interval between attempts by the acting master to renew a leadership slot "
            "before it stops leading. This must be less than or equal to the lease duration.",
        ),
    ] = None,
    leader_elect_retry_period: Annotated[
        str | None,
        _leader_option(
            "retry_period",
            "The duration the clients should wait between attempting acquisition and "
            "renewal of a leadership.",
        ),
    ] = None,
    leader_elect_resource_namespace: Annotated[
        str | None,
        _leader_option(
            "resource_namespace",
            "The namespace of the Karmada locks' Leases (OCM's are in "
            "open-cluster-management-hub, kube-controller-manager's in kube-system).",
        ),
    ] = None,
    etcd_servers: Annotated[
        list[str] | None,
        _storage_option(
            "etcd's client URLs, comma-separated (repeatable): the store of several replicas, "
            "instead of SQLite in --data-dir.",
            "URL,...",
        ),
    ] = None,
    etcd_prefix: Annotated[
        str, _storage_option("The prefix of every key the hub keeps in etcd.", "PREFIX")
    ] = "/registry",
    etcd_cafile: Annotated[
        Path | None, _storage_option("The CA that signed etcd's serving certificate.", "FILE")
    ] = None,
    etcd_certfile: Annotated[
        Path | None, _storage_option("The client certificate for etcd, PEM.", "FILE")
    ] = None,
    etcd_keyfile: Annotated[
        Path | None, _storage_option("The client certificate's private key, PEM.", "FILE")
    ] = None,
    *,
    settings: Settings,
) -> None:
    """Run the hub: store, admission, controllers and API server, until SIGINT or SIGTERM."""
    from fleetwarden.auth.authn import TokenFileError
    from fleetwarden.cli.serving import Serving, ServingError
    from fleetwarden.store.sqlite import StoreError

    leader_election = _leader_election(
        leader_elect=leader_elect, lease_duration=leader_elect_lease_duration,
        renew_deadline=leader_elect_renew_deadline, retry_period=leader_elect_retry_period,
        resource_namespace=leader_elect_resource_namespace,
    )  # fmt: skip
    storage = Storage(
        tuple(url for urls in etcd_servers or () for url in urls.split(",") if url),
        etcd_prefix, etcd_cafile, etcd_certfile, etcd_keyfile,
    )  # fmt: skip
    # Absolute: the agents' command lines name the hub's files, and tell two hubs apart.
    data_dir = data_dir.absolute()
    serving = Serving(
        bind_address=bind_address, port=port, insecure_serving=insecure_serving,
        tls_cert_file=tls_cert_file, tls_private_key_file=tls_private_key_file,
        client_ca_file=client_ca_file, tls_sans=tuple(tls_san or ()),
        token_auth_file=token_auth_file, anonymous_auth=anonymous_auth,
        enable_bootstrap_token_auth=enable_bootstrap_token_auth, audit_log_path=audit_log_path,
        service_account_issuer=service_account_issuer,
        service_account_signing_key_file=service_account_signing_key_file,
        service_account_jwks_uri=service_account_jwks_uri,
        api_audiences=tuple(api_audiences or ()),
    )  # fmt: skip
    try:
        if (members or ocm_members) and serving.client_ca_file:
            raise ServingError(
                "--client-ca-file: the agents of --members and --ocm-members join with "
                "certificates the hub's own CA signs; start them yourself with credentials "
                "your CA issued"
            )
        hub = start_hub(data_dir, serving, settings, leader_election, storage)
    except (StoreError, OSError, ValueError, StatusError, TokenFileError) as exc:
        typer.echo(f"error: {_reason(exc)}", err=True)
        raise typer.Exit(1) from None
    configure_process()
    stop = stop_on_signals()
    kubeconfig = data_dir / KUBECONFIG_FILE
    hub.write_kubeconfig(kubeconfig)
    joining = serving.signs_client_certificates and bool(members or ocm_members)
    credentials = hub.agent_credentials(data_dir / MEMBERS_DIR) if joining else None
    agents = Agents(
        data_dir, credentials or (lambda name: [f"--hub-kubeconfig={kubeconfig}"]),
        agent_flags(settings),
    )  # fmt: skip
    # Each member serves its own API when it has nodes to show, and TLS to serve it with.
    names = [f"member{i}" for i in range(1, members + 1)] if joining and member_nodes else []
    apis = {name: data_dir / MEMBERS_DIR / f"{name}-api" for name in names}

    def api_flags(name: str) -> list[str]:
        return [f"--member-api-dir={hub.member_api_dir(apis[name])}"] if name in apis else []

    try:
        agents.start("member", members, f"--nodes={member_nodes}", each=api_flags)
        ocm_flags = ocm_agent_flags(ocm_lease_duration_seconds, accept=not joining)
        agents.start("cluster", ocm_members, *ocm_flags)
        if joining:
            accept_in_background(kubeconfig, [f"cluster{i}" for i in range(1, ocm_members + 1)])
        if apis:
            member_contexts_in_background(hub, kubeconfig, apis, stop)
        typer.echo(f"fleetwarden hub serving on {hub.url}")
        typer.echo(f"dashboard: {hub.client_url}/")
        typer.echo(f"export KUBECONFIG={kubeconfig.resolve()}")
        if apis:
            typer.echo(f"member APIs: kubectl --context NAME once each serves ({', '.join(apis)})")
        wait_for(stop)
    finally:
        logger.info("shutting down: the agents, then the hub")
        agents.stop()
        hub.stop()
        logger.info("shutdown complete")


def start_hub(
    data_dir: Path,
    serving: Serving,
    settings: Settings,
    leader_election: LeaderElectionConfiguration | None = None,
    storage: Storage | None = None,
) -> Hub:
    """The hub, started. A start that fails (its port taken, say) after it created the
    store removes the store and all else it made in the data dir again: an empty store
    left behind would pass for a hub's on the next start."""
    before = _paths(data_dir)
    new_store = not (data_dir / STORE_FILE).exists()
    hub = None
    try:
        hub = Hub(data_dir, serving, settings, leader_election, storage)
        hub.start()
    except BaseException:
        if hub is not None:
            hub.stop()
        if new_store:
            _remove_all_but(data_dir, before)
        raise
    return hub


def _paths(directory: Path) -> set[Path]:
    return {directory, *directory.rglob("*")} if directory.exists() else set()


def _remove_all_but(directory: Path, kept: set[Path]) -> None:
    # In reverse order a directory comes after what it holds.
    for path in sorted(_paths(directory) - kept, reverse=True):
        if path.is_dir():
            path.rmdir()
        else:
            path.unlink()


def _reason(exc: Exception) -> str:
    """The error in one line; an OSError without its `[Errno 98]`."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc)


def accept_in_background(kubeconfig: Path, clusters: Sequence[str]) -> None:
    """What an administrator does for the OCM agents `up` starts: accept each cluster once
    its agent asked for a certificate (`fleetwarden accept managedclusters NAME`)."""
    from fleetwarden.client.client import Client
    from fleetwarden.client.errors import ClientError
    from fleetwarden.client.kubeconfig import load_kubeconfig
    from fleetwarden.members.accept import accept

    def accept_all() -> None:
        with Client.from_kubeconfig(load_kubeconfig(str(kubeconfig))) as client:
            for cluster in clusters:
                try:
                    accept(client, cluster, wait=ACCEPT_WAIT, say=logger.info)
                except (ClientError, StatusError) as exc:
                    logger.error("accepting managed cluster %s: %s", cluster, exc)

    threading.Thread(target=accept_all, name="accept-clusters", daemon=True).start()


def member_contexts_in_background(
    hub: Hub, kubeconfig: Path, apis: Mapping[str, Path], stop: threading.Event
) -> None:
    """Keep a context for each member API in the kubeconfig: written again whenever an
    agent (started, or started again) writes where it serves."""
    from fleetwarden.cli.member_api import SERVER_FILE

    def served() -> dict[str, str]:
        urls = {name: _read_text(directory / SERVER_FILE) for name, directory in apis.items()}
        return {name: url for name, url in urls.items() if url}

    def follow() -> None:
        written: dict[str, str] = {}
        while not stop.wait(SUPERVISE_INTERVAL):
            if (urls := served()) != written:
                hub.write_kubeconfig(kubeconfig, urls)
                written = urls

    threading.Thread(target=follow, name="member-contexts", daemon=True).start()


def _read_text(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def configure_process() -> None:
    """What a hub or agent process sets once: timestamped logs on standard error (not a
    line per HTTP request, which httpx logs at INFO), and metrics exposed as Karmada's Go
    client exposes them (no `_created` series)."""
    import prometheus_client

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]  # unannotated


def stop_on_signals() -> threading.Event:
    """An Event set on SIGINT or SIGTERM. The handler only writes a byte to a pipe, and a
    thread sets the Event: a handler runs on the main thread, which may be inside
    `stop.wait()` holding the Event's lock, and `Event.set` there would wait for it forever."""
    stop = threading.Event()
    read, write = os.pipe()
    os.set_blocking(write, False)

    def handle(signum: int, frame: object) -> None:
        with contextlib.suppress(BlockingIOError):  # the pipe is full: a stop is on its way
            os.write(write, b"\0")

    def relay() -> None:
        os.read(read, 1)
        stop.set()

    threading.Thread(target=relay, name="stop-on-signals", daemon=True).start()
    signal.signal(signal.SIGINT, handle)
    signal.signal(signal.SIGTERM, handle)
    return stop


def wait_for(stop: threading.Event) -> None:
    """Wait for `stop` in short steps. A signal the kernel delivers to another thread (one
    of gRPC's, say) runs its Python handler only once the main thread runs bytecode again,
    which a wait without a timeout never lets it do."""
    while not stop.wait(0.5):
        pass
