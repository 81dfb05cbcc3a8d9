"""`fleetwarden explain`: why a workload is where it is.

For a resource template (a Deployment, say), a ResourceBinding or ClusterResourceBinding,
or an OCM Placement: every cluster of the fleet, selected or not and why, in the words of
the scheduler plugins that decided; the eviction history; what the workload waits for now.
Read from a hub through its API (`ApiSource`, so RBAC applies) or from what
`simulate --dump` wrote (`DumpSource`).
"""

from __future__ import annotations

from fleetwarden.explain.model import Explanation
from fleetwarden.explain.source import ApiSource, DumpSource, Source

__all__ = ["ApiSource", "DumpSource", "Explanation", "NotFoundError", "Source", "explain"]


class NotFoundError(LookupError):
    """What was asked about is not there; str() says so as kubectl would."""


def explain(
    source: Source,
    resource: str,
    name: str,
    namespace: str,
    *,
    graceful_eviction_timeout: str = "10m",
) -> Explanation:
    """The explanation of `resource`/`name` (namespace is the default one for a namespaced
    kind). LookupError when there is no such object."""
    from fleetwarden.explain.karmada import (
        Options,
        explain_binding,
        explain_unbound,
        find_binding,
        is_binding,
    )
    from fleetwarden.explain.ocm import explain_placement, is_placement
    from fleetwarden.semantics.durations import parse_duration

    info = source.resolve(resource)
    ns = namespace if info.namespaced else ""
    obj = source.get(info, name, ns)
    if obj is None:
        group = f".{info.group}" if info.group else ""
        raise NotFoundError(f'{info.plural}{group} "{name}" not found')
    options = Options(parse_duration(graceful_eviction_timeout))
    if is_placement(info):
        return explain_placement(source, obj)
    if is_binding(info):
        return explain_binding(source, obj, options)
    subject = f"{info.kind} {ns}/{name}" if ns else f"{info.kind} {name}"
    binding = find_binding(source, info, obj)
    if binding is None:
        return explain_unbound(source, subject, obj)
    return explain_binding(source, binding, options, subject=subject)
