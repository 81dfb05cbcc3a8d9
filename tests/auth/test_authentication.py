"""Authentication: client certificates, --token-auth-file tokens, bootstrap tokens,
anonymous requests and the 401.

Cases from kubernetes staging/src/k8s.io/apiserver/pkg/authentication/token/tokenfile/
tokenfile_test.go and plugin/pkg/auth/authenticator/token/bootstrap/bootstrap_test.go; the
rules as /work/research/k8s-auth.md §7 words them.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.errors import Unauthorized
from fleetwarden.auth.authn import (
    BOOTSTRAP_TOKEN_RE,
    Authenticator,
    BootstrapTokens,
    TokenFileError,
    bootstrap_token_secret,
    load_token_file,
    new_bootstrap_token,
)

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
AUTHENTICATED = "system:authenticated"


def token_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tokens.csv"
    path.write_text(text)
    return path


def peer(common_name: str | None, *organizations: str) -> dict[str, Any]:
    """A certificate as ssl's getpeercert() describes it."""
    rdns: list[tuple[tuple[str, str], ...]] = [(("organizationName", o),) for o in organizations]
    if common_name is not None:
        rdns.append((("commonName", common_name),))
    return {"subject": tuple(rdns), "issuer": ((("commonName", "fleetwarden-ca"),),)}


# --- --token-auth-file ------------------------------------------------------------------------

TOKENS = """
token1,user1,uid1
token2,user2,uid2
token3,user3,uid3,"group1,group2"
token4,user4,uid4,"group2"
token5,user5,uid5,group5
token6,user6,uid6,group5,otherdata
token7,user7,uid7,"group1,group2",otherdata
"""


def test_token_file(tmp_path: Path) -> None:
    tokens = load_token_file(token_file(tmp_path, TOKENS))
    assert tokens == {
        "token1": UserInfo.of("user1", [], "uid1"),
        "token2": UserInfo.of("user2", [], "uid2"),
        "token3": UserInfo.of("user3", ["group1", "group2"], "uid3"),
        "token4": UserInfo.of("user4", ["group2"], "uid4"),
        "token5": UserInfo.of("user5", ["group5"], "uid5"),
        "token6": UserInfo.of("user6", ["group5"], "uid6"),
        "token7": UserInfo.of("user7", ["group1", "group2"], "uid7"),
    }


def test_token_file_with_too_few_columns_is_refused(tmp_path: Path) -> None:
    path = token_file(tmp_path, "\ntoken1,user1,uid1\ntoken2,user2,uid2\ntoken3,user3\ntoken4\n")
    with pytest.raises(TokenFileError) as err:
        load_token_file(path)
    assert str(err.value) == (
        f"token file '{path}' must have at least 3 columns (token, user name, user uid), found 2"
    )


def test_token_file_with_a_single_column_is_refused(tmp_path: Path) -> None:
    path = token_file(tmp_path, "token4\n")
    with pytest.raises(TokenFileError, match=r"found 1$"):
        load_token_file(path)


def test_empty_tokens_are_skipped(tmp_path: Path) -> None:
    assert load_token_file(token_file(tmp_path, ",user5,uid5\n")) == {}


def test_a_short_row_is_refused_even_without_a_token(tmp_path: Path) -> None:
    # tokenfile.NewCSV counts the columns before it looks at the token
    with pytest.raises(TokenFileError, match=r"found 2$"):
        load_token_file(token_file(tmp_path, "token1,user1,uid1\n,user2\n"))


def test_a_duplicate_token_is_the_later_user(tmp_path: Path) -> None:
    tokens = load_token_file(token_file(tmp_path, "t,first,1\nt,second,2\n"))
    assert tokens == {"t": UserInfo.of("second", [], "2")}


def test_fields_are_read_as_encoding_csv_reads_them(tmp_path: Path) -> None:
    # encoding/csv keeps a field's leading spaces (TrimLeadingSpace is off)
    tokens = load_token_file(token_file(tmp_path, "token1, user1,uid1\n"))
    assert tokens["token1"].name == " user1"


def test_a_missing_token_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError):
        load_token_file(tmp_path / "absent.csv")


# --- the union of authenticators ----------------------------------------------------------------


def test_certificate_subject_is_the_user_and_its_groups() -> None:
    user = Authenticator().authenticate(peer("admin", "system:masters"), None)
    assert user == UserInfo("admin", ("system:masters", AUTHENTICATED))


def test_certificate_organizations_are_groups_in_order() -> None:
    user = Authenticator().authenticate(peer("bob", "dev", "ops"), None)
    assert user.name == "bob"
    assert user.groups == ("dev", "ops", AUTHENTICATED)
    assert user.uid == ""


def test_a_certificate_is_read_before_a_token() -> None:
    authn = Authenticator(tokens={"tok": UserInfo.of("token-user")})
    assert authn.authenticate(peer("cert-user"), "Bearer tok").name == "cert-user"


def test_a_certificate_without_common_name_leaves_the_token_to_decide() -> None:
    authn = Authenticator(tokens={"tok": UserInfo.of("token-user")})
    assert authn.authenticate(peer(None, "dev"), "Bearer tok").name == "token-user"


def test_a_certificate_without_common_name_is_anonymous_when_allowed() -> None:
    user = Authenticator(anonymous=True).authenticate(peer("", "dev"), None)
    assert user == UserInfo("system:anonymous", ("system:unauthenticated",))


def test_a_certificate_without_common_name_alone_is_401() -> None:
    with pytest.raises(Unauthorized):
        Authenticator().authenticate(peer(None, "dev"), None)


def test_bearer_token_user_gets_system_authenticated_last() -> None:
    authn = Authenticator(tokens={"tok": UserInfo.of("bob", ["dev"], "42")})
    assert authn.authenticate(None, "Bearer tok") == UserInfo("bob", ("dev", AUTHENTICATED), "42")


def test_system_authenticated_is_not_added_twice() -> None:
    authn = Authenticator(tokens={"tok": UserInfo.of("bob", [AUTHENTICATED, "dev"])})
    assert authn.authenticate(None, "Bearer tok").groups == (AUTHENTICATED, "dev")


def test_bearer_scheme_is_case_insensitive() -> None:
    authn = Authenticator(tokens={"tok": UserInfo.of("bob")})
    assert authn.authenticate(None, "bearer tok").name == "bob"
    assert authn.authenticate(None, "BEARER tok").name == "bob"


def test_no_credentials_is_anonymous_when_allowed() -> None:
    user = Authenticator(anonymous=True).authenticate(None, None)
    assert user == UserInfo("system:anonymous", ("system:unauthenticated",))


def test_no_credentials_without_anonymous_is_401() -> None:
    with pytest.raises(Unauthorized) as err:
        Authenticator().authenticate(None, None)
    assert err.value.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }


@pytest.mark.parametrize("anonymous", [False, True])
def test_an_unknown_bearer_token_is_401_even_with_anonymous(anonymous: bool) -> None:
    authn = Authenticator(tokens={"tok": UserInfo.of("bob")}, anonymous=anonymous)
    with pytest.raises(Unauthorized):
        authn.authenticate(None, "Bearer other")


def test_a_bootstrap_shaped_but_unknown_token_is_401_even_with_anonymous() -> None:
    authn = Authenticator(bootstrap=BootstrapTokens(lambda name: None, lambda: NOW), anonymous=True)
    with pytest.raises(Unauthorized):
        authn.authenticate(None, "Bearer abcdef.0123456789abcdef")


def test_a_non_bearer_authorization_is_no_credential() -> None:
    # the bearer authenticator ignores other schemes: the request is anonymous
    user = Authenticator(anonymous=True).authenticate(None, "Basic Ym9iOnNlY3JldA==")
    assert user.name == "system:anonymous"


def test_a_non_bearer_authorization_without_anonymous_is_401() -> None:
    with pytest.raises(Unauthorized):
        Authenticator().authenticate(None, "Basic Ym9iOnNlY3JldA==")


def test_the_default_user_is_every_request() -> None:
    root = UserInfo("system:unsecured", ("system:masters", AUTHENTICATED))
    authn = Authenticator(default=root)
    assert authn.authenticate(None, None) == root
    assert authn.authenticate(None, "Bearer nonsense") == root
    assert authn.authenticate(peer("bob"), None) == root


# --- bootstrap tokens ---------------------------------------------------------------------------

TOKEN_ID, TOKEN_SECRET = "foobar", "circumnavigation"
TOKEN = f"{TOKEN_ID}.{TOKEN_SECRET}"


def bootstrap_secret(
    name: str = f"bootstrap-token-{TOKEN_ID}",
    type_: str = "bootstrap.kubernetes.io/token",
    deleting: bool = False,
    **data: str | None,
) -> dict[str, Any]:
    """A bootstrap token Secret; data keys as keywords (`token_id=`), None leaves one out."""
    values = {
        "token-id": TOKEN_ID,
        "token-secret": TOKEN_SECRET,
        "usage-bootstrap-authentication": "true",
        **{k.replace("_", "-"): v for k, v in data.items()},
    }
    metadata: dict[str, Any] = {"name": name, "namespace": "kube-system"}
    if deleting:
        metadata["deletionTimestamp"] = "2024-05-01T11:00:00Z"
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata,
        "type": type_,
        "data": {
            k: base64.b64encode(v.encode()).decode() for k, v in values.items() if v is not None
        },
    }


def bootstrap_user(secret: Mapping[str, Any], token: str = TOKEN) -> UserInfo | None:
    secrets = {secret["metadata"]["name"]: secret}
    return BootstrapTokens(secrets.get, lambda: NOW).authenticate(token)


def test_valid_bootstrap_token() -> None:
    assert bootstrap_user(bootstrap_secret()) == UserInfo.of(
        "system:bootstrap:foobar", ["system:bootstrappers"]
    )


def test_valid_bootstrap_token_with_extra_group() -> None:
    secret = bootstrap_secret(auth_extra_groups="system:bootstrappers:foo")
    assert bootstrap_user(secret) == UserInfo.of(
        "system:bootstrap:foobar", ["system:bootstrappers", "system:bootstrappers:foo"]
    )


def test_bootstrap_groups_are_sorted_and_deduplicated() -> None:
    groups = "system:bootstrappers:b,system:bootstrappers:a,system:bootstrappers:b"
    user = bootstrap_user(bootstrap_secret(auth_extra_groups=groups))
    assert user is not None
    assert user.groups == (
        "system:bootstrappers",
        "system:bootstrappers:a",
        "system:bootstrappers:b",
    )


def test_not_expired_bootstrap_token() -> None:
    secret = bootstrap_secret(expiration="2109-11-10T23:00:00Z")
    assert bootstrap_user(secret) == UserInfo.of(
        "system:bootstrap:foobar", ["system:bootstrappers"]
    )


REFUSED = {
    "invalid group": bootstrap_secret(auth_extra_groups="foo"),
    "an empty extra group": bootstrap_secret(auth_extra_groups="system:bootstrappers:a,"),
    "invalid secret name": bootstrap_secret(name="bad-name"),
    "no usage": bootstrap_secret(usage_bootstrap_authentication=None),
    "usage not exactly true": bootstrap_secret(usage_bootstrap_authentication="True"),
    "deleted token": bootstrap_secret(deleting=True),
    "expired token": bootstrap_secret(expiration="2009-11-10T23:00:00Z"),
    "expiring right now": bootstrap_secret(expiration="2024-05-01T12:00:00Z"),
    "unreadable expiration": bootstrap_secret(expiration="tomorrow"),
    "wrong type": bootstrap_secret(type_="Opaque"),
    "wrong secret": bootstrap_secret(token_secret="circumnavigatiom"),
    "token id not the secret's": bootstrap_secret(token_id="barfoo"),
}


@pytest.mark.parametrize("secret", REFUSED.values(), ids=REFUSED.keys())
def test_refused_bootstrap_tokens(secret: dict[str, Any]) -> None:
    assert bootstrap_user(secret) is None


@pytest.mark.parametrize(
    "token",
    [
        "barfoo." + TOKEN_SECRET,  # another token's id: no such Secret
        "foo." + TOKEN_SECRET,  # the id must be 6 characters
        "FOOBAR.circumnavigation",  # [a-z0-9] only
        TOKEN + "x",
    ],
)
def test_tokens_that_name_no_bootstrap_secret(token: str) -> None:
    assert bootstrap_user(bootstrap_secret(), token) is None


def test_bootstrap_token_through_the_authenticator() -> None:
    secrets = {"bootstrap-token-foobar": bootstrap_secret()}
    authn = Authenticator(bootstrap=BootstrapTokens(secrets.get, lambda: NOW))
    assert authn.authenticate(None, f"Bearer {TOKEN}") == UserInfo(
        "system:bootstrap:foobar", ("system:bootstrappers", AUTHENTICATED)
    )


def test_a_token_file_token_wins_over_a_bootstrap_token() -> None:
    secrets = {"bootstrap-token-foobar": bootstrap_secret()}
    authn = Authenticator(
        tokens={TOKEN: UserInfo.of("file-user")},
        bootstrap=BootstrapTokens(secrets.get, lambda: NOW),
    )
    assert authn.authenticate(None, f"Bearer {TOKEN}").name == "file-user"


def test_new_bootstrap_token_secret_authenticates() -> None:
    token = new_bootstrap_token()
    assert BOOTSTRAP_TOKEN_RE.match(token)
    secret = bootstrap_token_secret(
        token, ["system:bootstrappers:managedcluster"], NOW + timedelta(hours=1), "for joining"
    )
    assert secret["metadata"] == {
        "name": f"bootstrap-token-{token[:6]}",
        "namespace": "kube-system",
    }
    assert secret["type"] == "bootstrap.kubernetes.io/token"
    user = bootstrap_user(secret, token)
    assert user == UserInfo.of(
        f"system:bootstrap:{token[:6]}",
        ["system:bootstrappers", "system:bootstrappers:managedcluster"],
    )
    later = {secret["metadata"]["name"]: secret}
    expired = BootstrapTokens(later.get, lambda: NOW + timedelta(hours=1))
    assert expired.authenticate(token) is None


def test_bootstrap_token_secret_refuses_bad_tokens_and_groups() -> None:
    with pytest.raises(ValueError, match="is not a bootstrap token"):
        bootstrap_token_secret("not-a-token", [], None)
    with pytest.raises(ValueError, match='bootstrap group "admins" is invalid'):
        bootstrap_token_secret(TOKEN, ["admins"], None)
