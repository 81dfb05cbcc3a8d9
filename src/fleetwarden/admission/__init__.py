"""Layer 3: defaulting and validation per kind, one chain for the API server and the simulator."""

from fleetwarden.admission import (
    apiextensions,
    builtin,
    certificates,
    custom_resource,
    karmada,
    ocm,
    rbac,
)
from fleetwarden.admission.chain import AdmissionChain, AdmissionConfig, Operation, Plugin, Request
from fleetwarden.api.registry import REGISTRY, Registry

__all__ = ["AdmissionChain", "AdmissionConfig", "Operation", "Plugin", "Request", "default_chain"]


def default_chain(registry: Registry = REGISTRY) -> AdmissionChain:
    """Every kind's admission, the kinds resolved by `registry` (a hub's, to know its custom
    kinds' scope)."""
    chain = AdmissionChain(registry)
    chain.register(builtin.PLUGINS)
    chain.register([apiextensions.PLUGIN])
    chain.register(rbac.PLUGINS)
    chain.register(certificates.PLUGINS)
    chain.register(karmada.PLUGINS)
    chain.register(ocm.PLUGINS)
    chain.custom.append(custom_resource.PLUGIN)
    return chain
