"""The establishing controller (apiextensions-apiserver pkg/controller/establish): a CRD
whose names are accepted becomes Established, and stays so.

The kind is served from the moment its names are accepted (runtime/custom_kinds.py);
Established is what discovery waits for, and what `kubectl wait --for condition=established`
waits for. Conversion webhooks are not served, so no CA bundle is checked.
"""

from __future__ import annotations

from fleetwarden.api import apiextensions as crdv1
from fleetwarden.api.apiextensions import CustomResourceDefinition, condition_true
from fleetwarden.api.meta import Condition
from fleetwarden.runtime.manager import DONE, Context, Controller, Result, Watches
from fleetwarden.runtime.status import update_status_if_changed
from fleetwarden.semantics.conditions import set_status_condition

NAME = "establishing-controller"

ESTABLISHED = Condition(
    type=crdv1.ESTABLISHED,
    status="True",
    reason="InitialNamesAccepted",
    message="the initial names have been accepted",
)


def reconcile(name: str, ctx: Context) -> Result:
    crd = ctx.cache.informer(crdv1.KIND).get(name)
    if not isinstance(crd, CustomResourceDefinition):
        return DONE
    if not condition_true(crd, crdv1.NAMES_ACCEPTED) or condition_true(crd, crdv1.ESTABLISHED):
        return DONE
    status = crd.status.model_copy()
    status.conditions = set_status_condition(status.conditions, ESTABLISHED, ctx.clock.now())
    update_status_if_changed(ctx.store, crd, status)
    return DONE


def establishing_controller() -> Controller:
    return Controller(NAME, [Watches(crdv1.KIND)], reconcile)
