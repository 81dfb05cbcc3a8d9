"""`fleetwarden agent`: one member cluster and its agent, joined to a hub over HTTP."""

from __future__ import annotations

import os
import sys
import threading
from typing import Annotated

import typer
import yaml
from kubernetes.config import ConfigException

from fleetwarden.api.errors import StatusError
from fleetwarden.cli.up import AGENT_SETTINGS, configure_process, settings_flags, stop_on_signals
from fleetwarden.client.client import Client
from fleetwarden.client.errors import ClientError
from fleetwarden.client.kubeconfig import KubeConfigError, load_kubeconfig
from fleetwarden.members.agent import MODES, Agent
from fleetwarden.members.kube import KubeCluster
from fleetwarden.runtime.settings import Settings


@settings_flags(AGENT_SETTINGS)
def agent(
    hub_kubeconfig: Annotated[str, typer.Option(help="The kubeconfig of the hub to join.")],
    cluster_name: Annotated[str, typer.Option(help="The member's name on the hub.")],
    mode: Annotated[
        str, typer.Option(help="Pull (karmada-agent) or Push (the hub probes this member).")
    ] = "pull",
    endpoint_port: Annotated[
        int, typer.Option(help="Push mode: the port of the endpoint the hub probes (0: any).")
    ] = 0,
    member_kubeconfig: Annotated[
        str | None,
        typer.Option(
            help="A real member cluster's kubeconfig: the Works are applied there, and its "
            "status is reported (default: a simulated member)."
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
    space are applied to the member, and their status and health reported. The member is
    simulated in this process, or the real cluster of --member-kubeconfig.
    """
    sync_mode = mode.capitalize()
    if sync_mode not in MODES:
        raise typer.BadParameter(f'"{mode}": use pull or push', param_hint="--mode")
    try:
        client = Client.from_kubeconfig(load_kubeconfig(hub_kubeconfig))
    except KubeConfigError as exc:
        raise typer.BadParameter(str(exc), param_hint="--hub-kubeconfig") from None
    cluster = _real_member(member_kubeconfig) if member_kubeconfig else None
    member_agent = Agent(
        client, cluster_name, settings, mode=sync_mode, endpoint_port=endpoint_port,
        member=cluster,
    )  # fmt: skip
    try:
        member_agent.start()
    except (ClientError, StatusError) as exc:
        typer.echo(f"error: joining {client.server}: {exc}", err=True)
        raise typer.Exit(1) from None
    configure_process()
    stop = stop_on_signals()
    if exit_on_stdin_close:
        threading.Thread(target=_set_on_eof, args=(stop,), daemon=True).start()
    real = f" (the cluster of {member_kubeconfig})" if member_kubeconfig else ""
    typer.echo(f"member {cluster_name}{real} joined {client.server} in {sync_mode} mode")
    try:
        stop.wait()
    finally:
        member_agent.stop()
        client.close()
        if cluster is not None:
            cluster.close()


def _real_member(kubeconfig: str) -> KubeCluster:
    try:
        return KubeCluster.from_kubeconfig(kubeconfig)
    except (ConfigException, OSError, yaml.YAMLError) as exc:
        message = str(exc) if kubeconfig in str(exc) else f"{kubeconfig}: {exc}"
        raise typer.BadParameter(message, param_hint="--member-kubeconfig") from None


def _set_on_eof(stop: threading.Event) -> None:
    # Unbuffered: a buffered reader's lock would still be held at interpreter shutdown.
    while os.read(sys.stdin.fileno(), 4096):
        pass
    stop.set()
