"""`fleetwarden agent`: one member cluster and its agent, joined to a hub over HTTP.

The member and its agent (the client, the kubernetes client for a real member) are imported
when the command runs, not with this module: every `fleetwarden` command imports it, for
its options.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fleetwarden.api.errors import StatusError
from fleetwarden.cli.up import (
    AGENT_SETTINGS,
    configure_process,
    settings_flags,
    stop_on_signals,
    wait_for,
)
from fleetwarden.runtime.settings import Settings
from fleetwarden.semantics.durations import DurationError, parse_duration

if TYPE_CHECKING:
    from fleetwarden.members.agent import OcmJoin
    from fleetwarden.members.kube import KubeCluster
    from fleetwarden.members.simulated import MemberCluster


@settings_flags(AGENT_SETTINGS)
def agent(
    hub_kubeconfig: Annotated[
        str,
        typer.Option(
            help="The kubeconfig the agent runs with; with --bootstrap-kubeconfig, where its "
            "own is written once the hub signed its certificate (kept for later starts)."
        ),
    ],
    cluster_name: Annotated[str, typer.Option(help="The member's name on the hub.")],
    bootstrap_kubeconfig: Annotated[
        str | None,
        typer.Option(
            help="A kubeconfig with a bootstrap token (fleetwarden token create): the agent "
            "asks the hub for a client certificate of its own identity with it, as "
            "karmadactl register and OCM's registration agent do (Pull and OCM modes)."
        ),
    ] = None,
    join_timeout: Annotated[
        str,
        typer.Option(
            metavar="DURATION",
            help="How long to wait for the certificate: approved at once for a Karmada "
            "agent, once an administrator accepts the cluster for an OCM one.",
        ),
    ] = "10m",
    mode: Annotated[
        str,
        typer.Option(
            help="pull (karmada-agent), push (the hub probes this member) or ocm (OCM's "
            "registration agent, for a ManagedCluster)."
        ),
    ] = "pull",
    endpoint_port: Annotated[
        int, typer.Option(help="Push mode: the port of the endpoint the hub probes (0: any).")
    ] = 0,
    member_kubeconfig: Annotated[
        str | None,
        typer.Option(
            help="A real member cluster's kubeconfig: the Works (or, in ocm mode, the "
            "ManifestWorks) are applied there, and its status is reported (default: a "
            "simulated member)."
        ),
    ] = None,
    accept: Annotated[
        bool,
        typer.Option(
            "--accept",
            help="OCM: create the ManagedCluster accepted (hubAcceptsClient), as the hub's "
            "admin or its auto-approval would; else an admin must accept it.",
        ),
    ] = False,
    lease_duration_seconds: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="OCM: the spec.leaseDurationSeconds of the ManagedCluster it creates "
            "(default: the hub's, 60).",
        ),
    ] = None,
    cluster_claim: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME=VALUE",
            help="OCM: a ClusterClaim of the simulated member, reported in the "
            "ManagedCluster's status.clusterClaims (repeatable). A real member's are its "
            "ClusterClaims.",
        ),
    ] = None,
    spoke_external_server_urls: Annotated[
        list[str] | None,
        typer.Option(
            metavar="URL",
            help="OCM: the member's API server URLs for the ManagedCluster's "
            "spec.managedClusterClientConfigs (repeatable).",
        ),
    ] = None,
    nodes: Annotated[
        int,
        typer.Option(
            min=0,
            help="A simulated member's nodes (node1..N; cpu 16, memory 64Gi, pods 110 each): "
            "its workloads' pods run on them as kube-scheduler places them. Without, a "
            "workload is healthy once applied.",
        ),
    ] = 0,
    member_api_dir: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            help="Serve the simulated member's Kubernetes API on 127.0.0.1 over TLS (the "
            "certificate DIR/apiserver.crt and .key; client certificates verified against "
            "DIR/ca.crt), its URL written to DIR/server; needs --nodes.",
        ),
    ] = None,
    exit_on_stdin_close: Annotated[
        bool, typer.Option(hidden=True, help="Stop when standard input closes (the parent died).")
    ] = False,
    *,
    settings: Settings,
) -> None:
    """Run a member's agent against a hub, until SIGINT or SIGTERM.

    Pull mode registers a Pull Cluster, renews its Lease and reports its status, as
    karmada-agent does; Push mode registers a Push Cluster whose apiEndpoint is an
    endpoint served here, which the hub probes. Either way the Works of its execution
    space are applied to the member, and their status and health reported. OCM mode
    creates the ManagedCluster, and once the hub accepted it renews its lease and reports
    its status, as the klusterlet's registration agent does, and applies the ManifestWorks
    of its namespace, as its work agent does. The member is simulated in this process, or
    the real cluster of --member-kubeconfig.
    """
    from fleetwarden.cli.member_api import MemberApiServer
    from fleetwarden.client.client import Client
    from fleetwarden.client.errors import ClientError
    from fleetwarden.client.kubeconfig import KubeConfigError, load_kubeconfig
    from fleetwarden.members.agent import MODE_OCM, MODES, Agent, OcmJoin, simulated_member
    from fleetwarden.members.inside.api_store import MemberApiStore

    modes = {known.lower(): known for known in MODES}
    agent_mode = modes.get(mode.lower())
    if agent_mode is None:
        names = f"{', '.join(list(modes)[:-1])} or {list(modes)[-1]}"
        raise typer.BadParameter(f'"{mode}": use {names}', param_hint="--mode")
    ocm_only = {
        "--accept": accept,
        "--lease-duration-seconds": lease_duration_seconds,
        "--cluster-claim": cluster_claim,
        "--spoke-external-server-urls": spoke_external_server_urls,
    }
    given = [flag for flag, value in ocm_only.items() if value]
    if given and agent_mode != MODE_OCM:
        raise typer.BadParameter("only for --mode ocm", param_hint=given[0])
    if cluster_claim and member_kubeconfig:
        message = "a real member's claims are its ClusterClaims"
        raise typer.BadParameter(message, param_hint="--cluster-claim")
    _check_cluster_name(cluster_name, agent_mode)
    _check_simulated(member_kubeconfig, nodes, member_api_dir)
    claims = _claims(cluster_claim or [])
    ocm = OcmJoin(accept, lease_duration_seconds, tuple(spoke_external_server_urls or ()))
    if bootstrap_kubeconfig:
        _join(bootstrap_kubeconfig, hub_kubeconfig, agent_mode, cluster_name, ocm, join_timeout)
    try:
        client = Client.from_kubeconfig(load_kubeconfig(hub_kubeconfig))
    except KubeConfigError as exc:
        raise typer.BadParameter(str(exc), param_hint="--hub-kubeconfig") from None
    cluster = _real_member(member_kubeconfig) if member_kubeconfig else None
    member: MemberCluster = cluster or simulated_member(claims, hub=client, nodes=nodes)
    api = MemberApiStore() if member_api_dir else None
    member_agent = Agent(
        client, cluster_name, settings, mode=agent_mode, endpoint_port=endpoint_port,
        member=member, ocm=ocm, api=api,
    )  # fmt: skip
    server = MemberApiServer(member_api_dir, api) if member_api_dir and api else None
    try:
        if server is not None:
            server.start()
    except (OSError, RuntimeError) as exc:
        typer.echo(f"error: serving the member's API: {exc}", err=True)
        raise typer.Exit(1) from None
    try:
        member_agent.start()
    except (ClientError, StatusError) as exc:
        if server is not None:
            server.stop()
        typer.echo(f"error: joining {client.server}: {exc}", err=True)
        raise typer.Exit(1) from None
    configure_process()
    stop = stop_on_signals()
    if exit_on_stdin_close:
        threading.Thread(target=_set_on_eof, args=(stop,), daemon=True).start()
    real = f" (the cluster of {member_kubeconfig})" if member_kubeconfig else ""
    typer.echo(f"member {cluster_name}{real} joined {client.server} in {agent_mode} mode")
    if server is not None:
        typer.echo(f"member {cluster_name}'s API serving on {server.url}")
    try:
        wait_for(stop)
    finally:
        member_agent.stop()
        if server is not None:
            server.stop()
        client.close()
        if cluster is not None:
            cluster.close()


def _join(
    bootstrap: str, kubeconfig: str, mode: str, name: str, ocm: OcmJoin, timeout: str
) -> None:
    """Ask the hub for the agent's own certificate, unless the kubeconfig holds a valid
    one already; exit with the reason when the hub refuses or does not answer."""
    from fleetwarden.api.karmada.cluster import SYNC_MODE_PUSH
    from fleetwarden.client.errors import ClientError
    from fleetwarden.client.kubeconfig import KubeConfigError, load_kubeconfig
    from fleetwarden.members.agent import MODE_OCM, OCM_AGENT_NAME
    from fleetwarden.members.bootstrap import joined_kubeconfig, karmada_identity, ocm_identity

    if mode == SYNC_MODE_PUSH:
        message = "a Push member joins with a kubeconfig that may create its Cluster"
        raise typer.BadParameter(message, param_hint="--bootstrap-kubeconfig")
    if ocm.accept:
        message = "only an administrator accepts a cluster; --accept needs their kubeconfig"
        raise typer.BadParameter(message, param_hint="--accept")
    try:
        config = load_kubeconfig(bootstrap)
        wait = parse_duration(timeout).total_seconds()
    except KubeConfigError as exc:
        raise typer.BadParameter(str(exc), param_hint="--bootstrap-kubeconfig") from None
    except DurationError as exc:
        raise typer.BadParameter(str(exc), param_hint="--join-timeout") from None
    configure_process()
    if mode == MODE_OCM:
        identity, made = ocm_identity(name, OCM_AGENT_NAME), ocm.create_managed_cluster(name)
    else:
        identity, made = karmada_identity(name), lambda client: None
    try:
        joined_kubeconfig(config, identity, Path(kubeconfig), timeout=wait, before_waiting=made)
    except (ClientError, StatusError) as exc:
        typer.echo(f"error: joining {config.server}: {exc}", err=True)
        raise typer.Exit(1) from None


def _check_simulated(kubeconfig: str | None, nodes: int, api_dir: Path | None) -> None:
    """--nodes and --member-api-dir are a simulated member's; its API needs nodes to show."""
    given = "--nodes" if nodes else "--member-api-dir" if api_dir else None
    if kubeconfig and given:
        raise typer.BadParameter("only for a simulated member", param_hint=given)
    if api_dir and not nodes:
        raise typer.BadParameter("needs --nodes", param_hint="--member-api-dir")


def _real_member(kubeconfig: str) -> KubeCluster:
    import yaml
    from kubernetes.config import ConfigException

    from fleetwarden.members.kube import KubeCluster

    try:
        return KubeCluster.from_kubeconfig(kubeconfig)
    except (ConfigException, OSError, yaml.YAMLError) as exc:
        message = str(exc) if kubeconfig in str(exc) else f"{kubeconfig}: {exc}"
        raise typer.BadParameter(message, param_hint="--member-kubeconfig") from None


def _check_cluster_name(name: str, mode: str) -> None:
    """The name the hub will take: a Cluster's (a DNS label that fits `karmada-es-`), or a
    ManagedCluster's (a DNS label); refused here rather than after joining."""
    from fleetwarden.admission.karmada.cluster import validate_cluster_name
    from fleetwarden.members.agent import MODE_OCM
    from fleetwarden.semantics.validation import is_dns1123_label

    problems = is_dns1123_label(name) if mode == MODE_OCM else validate_cluster_name(name)
    if problems:
        raise typer.BadParameter(f'"{name}": {"; ".join(problems)}', param_hint="--cluster-name")


def _claims(flags: list[str]) -> dict[str, str]:
    """NAME=VALUE flags; a name must be a ClusterClaim's (a DNS subdomain)."""
    from fleetwarden.semantics.validation import is_dns1123_subdomain

    claims = {}
    for flag in flags:
        name, equals, value = flag.partition("=")
        if not equals:
            raise typer.BadParameter(f'"{flag}": expected NAME=VALUE', param_hint="--cluster-claim")
        if errors := is_dns1123_subdomain(name):
            message = f'Invalid value: "{name}": {"; ".join(errors)}'
            raise typer.BadParameter(message, param_hint="--cluster-claim")
        claims[name] = value
    return claims


def _set_on_eof(stop: threading.Event) -> None:
    # Unbuffered: a buffered reader's lock would still be held at interpreter shutdown.
    while os.read(sys.stdin.fileno(), 4096):
        pass
    stop.set()
