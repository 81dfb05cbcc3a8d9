"""A client for Kubernetes-style API servers: the hub's, and member clusters'.

Layer 2, beside `fleetwarden.semantics`: it imports only `fleetwarden.api`, so that
members (real clusters through a kubeconfig), the simulator's tests and the CLI can all
use it.
"""

from fleetwarden.client.apply import Applied, apply
from fleetwarden.client.client import Client, PatchType, Watch, WatchEvent, retry_on_conflict
from fleetwarden.client.errors import (
    ClientError,
    KindNotFound,
    ResourceTypeNotFound,
    ServerError,
    ServerUnreachable,
)
from fleetwarden.client.kubeconfig import KubeConfig, KubeConfigError, load_kubeconfig

__all__ = [
    "Applied",
    "Client",
    "ClientError",
    "KindNotFound",
    "KubeConfig",
    "KubeConfigError",
    "PatchType",
    "ResourceTypeNotFound",
    "ServerError",
    "ServerUnreachable",
    "Watch",
    "WatchEvent",
    "apply",
    "load_kubeconfig",
    "retry_on_conflict",
]
