"""`fleetwarden token create`: a bootstrap token with which agents join the hub, as
`karmadactl token create` and `kubeadm token create` make them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer

from fleetwarden.api.bootstrap_groups import KARMADA as KARMADA_GROUP
from fleetwarden.api.bootstrap_groups import OCM as OCM_GROUP
from fleetwarden.cli.hub import ContextOption, KubeconfigOption, fail, hub
from fleetwarden.semantics.durations import DurationError, parse_duration

app = typer.Typer(help="Bootstrap tokens, with which agents join the hub.", no_args_is_help=True)


@app.command()
def create(
    ttl: Annotated[
        str, typer.Option(help="How long the token is valid (a Go duration; 0: forever).")
    ] = "24h",
    groups: Annotated[
        list[str] | None,
        typer.Option(
            "--groups",
            help="An extra group of the token's user (repeatable), each system:bootstrappers:...; "
            f"default: {KARMADA_GROUP} and {OCM_GROUP}, so either dialect's agent may join.",
        ),
    ] = None,
    description: Annotated[str, typer.Option(help="What the token is for.")] = "",
    bootstrap_kubeconfig: Annotated[
        Path | None,
        typer.Option(
            help="Also write a bootstrap kubeconfig there (0600): the hub, its CA, the token; "
            "for `fleetwarden agent --bootstrap-kubeconfig`."
        ),
    ] = None,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Create a bootstrap token and print it."""
    from fleetwarden.auth.authn import bootstrap_token_secret, new_bootstrap_token
    from fleetwarden.client.kubeconfig import load_kubeconfig, write_kubeconfig

    try:
        lifetime = parse_duration(ttl)
    except DurationError as exc:
        raise typer.BadParameter(str(exc), param_hint="--ttl") from None
    if lifetime < timedelta(0):
        raise typer.BadParameter(f"{ttl}: a token cannot have expired already", param_hint="--ttl")
    token = new_bootstrap_token()
    expiration = datetime.now(UTC) + lifetime if lifetime else None
    try:
        secret = bootstrap_token_secret(
            token, groups or [KARMADA_GROUP, OCM_GROUP], expiration, description
        )
    except ValueError as exc:
        fail(str(exc))
    with hub(kubeconfig, context) as client:
        client.create(secret)
        if bootstrap_kubeconfig is not None:
            config = load_kubeconfig(kubeconfig, context=context)
            write_kubeconfig(
                bootstrap_kubeconfig, config.server, ca=config.certificate_authority, token=token
            )
    typer.echo(token)
