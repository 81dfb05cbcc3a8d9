"""Layer 3: defaulting and validation per kind, one chain for the API server and the simulator."""

from fleetwarden.admission import karmada, ocm
from fleetwarden.admission.chain import AdmissionChain, AdmissionConfig, Operation, Plugin, Request

__all__ = ["AdmissionChain", "AdmissionConfig", "Operation", "Plugin", "Request", "default_chain"]


def default_chain() -> AdmissionChain:
    chain = AdmissionChain()
    chain.register(karmada.PLUGINS)
    chain.register(ocm.PLUGINS)
    return chain
