"""apiextensions-apiserver's controllers: a CustomResourceDefinition's names accepted, the
CRD established, and its custom resources deleted with it."""

from __future__ import annotations

from fleetwarden.controllers.apiextensions.establishing import establishing_controller
from fleetwarden.controllers.apiextensions.finalizer import crd_finalizer_controller
from fleetwarden.controllers.apiextensions.naming import NamingConditionController
from fleetwarden.runtime.manager import Controller


def apiextensions_controllers() -> list[Controller]:
    """In the order apiextensions-apiserver starts them."""
    return [
        NamingConditionController().controller(),
        establishing_controller(),
        crd_finalizer_controller(),
    ]
