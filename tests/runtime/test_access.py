"""The RBAC authorizer and bootstrap tokens over a store: what they are fed, and a change
that races the list they start from."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.authorization import Attributes
from fleetwarden.api.kinds import KindInfo
from fleetwarden.api.rbac import CLUSTER_ROLE_BINDING_KIND, CLUSTER_ROLE_KIND
from fleetwarden.auth.authn import bootstrap_token_secret, new_bootstrap_token
from fleetwarden.auth.bootstrap import cluster_role, cluster_role_binding, rule, user
from fleetwarden.runtime.access import SECRET, bootstrap_tokens, rbac_authorizer
from fleetwarden.runtime.clock import RealClock
from fleetwarden.store import MemoryStore
from fleetwarden.store.interface import ListResult

GET_PODS = Attributes(UserInfo("bob", ()), "get", "pods", namespace="dev")


class RacingStore(MemoryStore):
    """A store whose first list of `info` answers as things were before `change`, which
    another writer commits (its event held back by the lister) before the answer arrives."""

    def __init__(self, info: KindInfo, change: Callable[[MemoryStore], Any]) -> None:
        super().__init__()
        self.info, self.change = info, change
        self.writer: threading.Thread | None = None

    def list(self, info: KindInfo, namespace: str | None = None, **options: Any) -> ListResult:
        listed = super().list(info, namespace, **options)
        if info is self.info and self.writer is None:
            before = self.resource_version
            self.writer = threading.Thread(target=self.change, args=(self,))
            self.writer.start()
            while self.resource_version == before:
                time.sleep(0.001)
        return listed


def reader_bound_to_bob(store: MemoryStore) -> None:
    store.create(cluster_role("reader", [rule([""], ["pods"], ["get"])]))
    store.create(cluster_role_binding("reader", [user("bob")]))


def test_a_role_deleted_while_the_authorizer_lists_is_gone() -> None:
    store = RacingStore(CLUSTER_ROLE_KIND, lambda s: s.delete(CLUSTER_ROLE_KIND, "reader"))
    reader_bound_to_bob(store)
    authorizer = rbac_authorizer(store)
    assert store.writer is not None
    store.writer.join()
    assert not authorizer.authorize(GET_PODS).allowed


def test_a_binding_made_while_the_authorizer_lists_is_in_force() -> None:
    def bind(s: MemoryStore) -> None:
        s.create(cluster_role_binding("late", [user("carol")], "reader"))

    store = RacingStore(CLUSTER_ROLE_BINDING_KIND, bind)
    reader_bound_to_bob(store)
    authorizer = rbac_authorizer(store)
    assert store.writer is not None
    store.writer.join()
    carol = Attributes(UserInfo("carol", ()), "get", "pods", namespace="dev")
    assert authorizer.authorize(carol).allowed and authorizer.authorize(GET_PODS).allowed


def test_bootstrap_tokens_follow_their_secrets_without_reading_the_store() -> None:
    store = MemoryStore()
    kept, removed = new_bootstrap_token(), new_bootstrap_token()
    expiry = datetime.now(UTC) + timedelta(hours=1)
    for token in (kept, removed):
        store.create(bootstrap_token_secret(token, ["system:bootstrappers:x"], expiry))
    tokens = bootstrap_tokens(store, RealClock())
    store.delete(SECRET, "bootstrap-token-" + removed.split(".")[0], "kube-system")

    def no_reads(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a token check read the store")

    store.get = no_reads  # type: ignore[method-assign]
    assert tokens.authenticate(kept) is not None
    assert tokens.authenticate(removed) is None
    assert tokens.authenticate("abcdef.0123456789abcdef") is None
