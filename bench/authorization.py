"""RBAC authorization benchmark: decisions per second of the authorizer every request meets.

    .venv/bin/python bench/authorization.py [--users 1000] [--namespaces 100] [--checks 200000]

The policy: the hub's bootstrap roles and bindings, and per namespace a Role and a
RoleBinding for each of its `--users / --namespaces` users (each user also in a group
bound to view in one namespace). The requests: every user getting, listing and updating
ConfigMaps, Deployments and Secrets in their own namespace and in another (allowed and
refused alike), as a busy hub sees them.

- cached checks: the same requests asked again, as a hub asks its steady traffic (the
  cache answers until an RBAC object changes);
- uncached decisions: each request decided afresh (the cache emptied before each).

Aim: >= 100,000 cached checks/s.
"""

from __future__ import annotations

import argparse
import itertools
import time

from calibration import Calibration, calibrate  # bench/calibration.py, next to this file

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.authorization import Attributes
from fleetwarden.api.registry import REGISTRY
from fleetwarden.auth.bootstrap import rule, user
from fleetwarden.auth.rbac import RBAC
from fleetwarden.hub import bootstrap_policy
from fleetwarden.store.interface import collection_of


def policy(users: int, namespaces: int) -> RBAC:
    rbac = RBAC()
    for obj in bootstrap_policy():
        info = REGISTRY.info(obj["apiVersion"], obj["kind"])
        rbac.observe(collection_of(info), obj)
    role = REGISTRY.info("rbac.authorization.k8s.io/v1", "Role")
    binding = REGISTRY.info("rbac.authorization.k8s.io/v1", "RoleBinding")
    for i in range(users):
        name, namespace = f"user-{i}", f"ns-{i % namespaces}"
        meta = {"name": name, "namespace": namespace}
        rules = [
            rule([""], ["configmaps"], ["get", "list", "update"]),
            rule(["apps"], ["deployments"], ["get", "list"]),
        ]
        rbac.observe(collection_of(role), {"metadata": meta, "rules": rules})
        ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}
        bound = {"metadata": meta, "roleRef": ref, "subjects": [user(name)]}
        rbac.observe(collection_of(binding), bound)
    return rbac


def requests(users: int, namespaces: int) -> list[Attributes]:
    asked = []
    resources = [("", "configmaps"), ("apps", "deployments"), ("", "secrets")]
    for i in range(users):
        user = UserInfo(f"user-{i}", (f"team-{i % 10}", "system:authenticated"))
        for namespace in (f"ns-{i % namespaces}", f"ns-{(i + 1) % namespaces}"):
            for (group, resource), verb in itertools.product(resources, ("get", "list", "update")):
                name = "x" if verb != "list" else ""
                asked.append(Attributes(user, verb, resource, group, namespace, name))
    return asked


def measure(rbac: RBAC, asked: list[Attributes], checks: int, cached: bool) -> tuple[float, int]:
    """(checks per second, how many were allowed)."""
    for attributes in asked:  # warm the cache, or not
        rbac.authorize(attributes)
    allowed = 0
    start = time.perf_counter()
    for n in range(checks):
        if not cached:
            rbac._cache = {}
        allowed += rbac.authorize(asked[n % len(asked)]).allowed
    return checks / (time.perf_counter() - start), allowed


def report(
    label: str, per_second: float, allowed: int, checks: int, calibration: Calibration
) -> None:
    share = allowed / checks
    print(f"{label}: {calibration.rate(per_second, 'checks')} ({share:.0%} allowed)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--namespaces", type=int, default=100)
    parser.add_argument("--checks", type=int, default=200_000)
    args = parser.parse_args()
    calibration = calibrate()
    print(calibration)
    rbac = policy(args.users, args.namespaces)
    asked = requests(args.users, args.namespaces)
    cached, allowed = measure(rbac, asked, args.checks, cached=True)
    report("cached checks", cached, allowed, args.checks, calibration)
    uncached_checks = max(1, args.checks // 20)
    uncached, allowed = measure(rbac, asked, uncached_checks, cached=False)
    report("uncached decisions", uncached, allowed, uncached_checks, calibration)
    if not 0 < allowed < uncached_checks:
        raise SystemExit("the policy allowed all or nothing: the requests measure no decision")


if __name__ == "__main__":
    main()
