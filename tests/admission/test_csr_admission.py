"""CertificateSigningRequest admission: the requester's identity stamped on create, the spec
frozen afterwards, approval only through /approval by whoever may `approve` for the signer,
a certificate only through /status by whoever may `sign` for it, and validation.

Cases from kubernetes pkg/apis/certificates/validation/validation_test.go,
pkg/registry/certificates/certificates/strategy.go and plugin/pkg/admission/certificates;
messages as /work/research/k8s-api.md §6 words them.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fleetwarden.admission import default_chain
from fleetwarden.api.authentication import UserInfo
from fleetwarden.api.errors import Forbidden, Invalid
from fleetwarden.api.meta import Resource
from fleetwarden.auth.pki import client_certificate, new_ca, new_certificate_request, new_key
from fleetwarden.auth.rbac import RBAC

NOW = datetime(2024, 5, 1, 12, 0, 0, 250_000, tzinfo=UTC)
NOW_TEXT = "2024-05-01T12:00:00Z"
GROUP = "certificates.k8s.io"
SIGNER = "example.com/signer"
BOB = UserInfo.of("bob", ["dev", "system:authenticated"], "bob-uid", {"scopes": ["view"]})
APPROVER = UserInfo.of("approver", ["system:authenticated"])
ROOT = UserInfo.of("root", ["system:masters"])
ALL_USAGES = (
    '"any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", '
    '"data encipherment", "decipher only", "digital signature", "email protection", '
    '"encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", '
    '"key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", '
    '"server auth", "signing", "timestamping"'
)
RFC1123_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
RFC1123_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


REQUEST = b64(new_certificate_request(new_key(), "bob", ["dev"]))
MASTERS_REQUEST = b64(new_certificate_request(new_key(), "evil", ["system:masters"]))
CA = new_ca("test-ca", NOW)
CERTIFICATE = b64(client_certificate(CA, "bob", ["dev"], NOW).certificate_pem())


def csr(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "csr1"},
        "spec": {"request": REQUEST, "signerName": SIGNER, "usages": ["client auth"], **spec},
    }


def condition(type_: str, status: str = "True", **rest: Any) -> dict[str, Any]:
    return {"type": type_, "status": status, **rest}


def with_status(obj: Resource | dict[str, Any], **status: Any) -> dict[str, Any]:
    wire = obj.to_dict() if isinstance(obj, Resource) else dict(obj)
    return {**wire, "status": status}


def signer_rights(*rules: tuple[str, str]) -> RBAC:
    """An authorizer under which `approver` may use these (verb, signer name) pairs."""
    rbac = RBAC()
    rbac.observe(
        "rbac.authorization.k8s.io/clusterroles",
        {
            "metadata": {"name": "signer", "resourceVersion": "1"},
            "rules": [
                {
                    "apiGroups": [GROUP],
                    "resources": ["signers"],
                    "resourceNames": [name],
                    "verbs": [verb],
                }
                for verb, name in rules
            ],
        },
    )
    rbac.observe(
        "rbac.authorization.k8s.io/clusterrolebindings",
        {
            "metadata": {"name": "signer", "resourceVersion": "2"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "signer",
            },
            "subjects": [
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "approver"}
            ],
        },
    )
    return rbac


def review(
    obj: dict[str, Any],
    old: Resource | None = None,
    *,
    user: UserInfo = ROOT,
    authorizer: RBAC | None = None,
    subresource: str | None = None,
    now: datetime = NOW,
) -> dict[str, Any]:
    request = default_chain().review(
        obj, old, now=now, user=user, authorizer=authorizer or RBAC(), subresource=subresource
    )
    admitted: dict[str, Any] = request.obj.to_dict()
    return admitted


def created(**spec: Any) -> Resource:
    admitted: Resource = (
        default_chain().review(csr(**spec), now=NOW, user=BOB, authorizer=RBAC()).obj
    )
    return admitted


def approved() -> Resource:
    obj = with_status(created(), conditions=[condition("Approved", reason="Ok")])
    stored: Resource = (
        default_chain().review(obj, created(), now=NOW, user=ROOT, subresource="approval").obj
    )
    return stored


def errors(
    obj: dict[str, Any], old: Resource | None = None, subresource: str | None = None
) -> list[str]:
    with pytest.raises(Invalid) as err:
        review(obj, old, subresource=subresource)
    return [str(e) for e in err.value.errors]


def refusal(
    obj: dict[str, Any], old: Resource | None, *, authorizer: RBAC, subresource: str | None
) -> str:
    with pytest.raises(Forbidden) as err:
        review(obj, old, user=APPROVER, authorizer=authorizer, subresource=subresource)
    assert err.value.code == 403
    return err.value.message


# --- create ----------------------------------------------------------------------------------------


def test_the_requester_is_stamped_into_the_spec() -> None:
    claimed = csr(username="mallory", uid="0", groups=["system:masters"], extra={"x": ["y"]})
    admitted = review(claimed, user=BOB)
    assert admitted["spec"] == {
        "request": REQUEST,
        "signerName": SIGNER,
        "usages": ["client auth"],
        "username": "bob",
        "uid": "bob-uid",
        "groups": ["dev", "system:authenticated"],
        "extra": {"scopes": ["view"]},
    }


def test_nothing_is_pre_approved_or_pre_issued() -> None:
    obj = with_status(csr(), conditions=[condition("Approved")], certificate=CERTIFICATE)
    assert review(obj, user=BOB)["status"] == {"conditions": []}


def test_the_client_signer_refuses_system_masters() -> None:
    obj = csr(request=MASTERS_REQUEST, signerName="kubernetes.io/kube-apiserver-client")
    with pytest.raises(Forbidden) as err:
        review(obj, user=BOB)
    assert err.value.message == (
        'certificatesigningrequests.certificates.k8s.io "csr1" is forbidden: use of '
        "kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    )


def test_other_signers_may_be_asked_for_system_masters() -> None:
    review(csr(request=MASTERS_REQUEST), user=BOB)


# --- the spec is frozen ------------------------------------------------------------------------


def test_an_update_keeps_the_spec_and_status() -> None:
    old = created()
    changed = with_status(
        csr(signerName="example.com/other", usages=["server auth"], username="mallory"),
        conditions=[condition("Approved")],
        certificate=CERTIFICATE,
    )
    changed["metadata"]["labels"] = {"team": "a"}
    admitted = review(changed, old)
    assert admitted["spec"] == old.to_dict()["spec"]
    assert admitted["status"] == {"conditions": []}
    assert admitted["metadata"]["labels"] == {"team": "a"}


@pytest.mark.parametrize("subresource", ["approval", "status"])
def test_subresource_updates_keep_the_spec(subresource: str) -> None:
    old = approved()
    obj = with_status(old, conditions=old.to_dict()["status"]["conditions"])
    obj["spec"].update(signerName="example.com/other", usages=["server auth"], username="mallory")
    assert review(obj, old, subresource=subresource)["spec"] == old.to_dict()["spec"]


# --- approval ----------------------------------------------------------------------------------


def test_approval_needs_approve_on_the_signer() -> None:
    obj = with_status(created(), conditions=[condition("Approved")])
    message = refusal(
        obj, created(), authorizer=signer_rights(("sign", SIGNER)), subresource="approval"
    )
    assert message == (
        'certificatesigningrequests.certificates.k8s.io "csr1" is forbidden: user not permitted '
        'to approve requests with signerName "example.com/signer"'
    )


@pytest.mark.parametrize("name", [SIGNER, "example.com/*"])
def test_approve_on_the_signer_or_its_domain(name: str) -> None:
    obj = with_status(created(), conditions=[condition("Approved", reason="Ok", message="fine")])
    admitted = review(
        obj,
        created(),
        user=APPROVER,
        authorizer=signer_rights(("approve", name)),
        subresource="approval",
    )
    assert admitted["status"]["conditions"] == [
        {
            "type": "Approved",
            "status": "True",
            "reason": "Ok",
            "message": "fine",
            "lastUpdateTime": NOW_TEXT,
            "lastTransitionTime": NOW_TEXT,
        }
    ]


def test_approve_on_another_signer_does_not_count() -> None:
    obj = with_status(created(), conditions=[condition("Approved")])
    refusal(
        obj,
        created(),
        authorizer=signer_rights(("approve", "example.org/*")),
        subresource="approval",
    )


def test_approval_is_checked_against_the_stored_signer() -> None:
    obj = with_status(created(), conditions=[condition("Approved")])
    obj["spec"]["signerName"] = "example.org/free"
    authorizer = signer_rights(("approve", "example.org/free"))
    message = refusal(obj, created(), authorizer=authorizer, subresource="approval")
    assert message.endswith('signerName "example.com/signer"')


def test_denial_goes_through_approval_too() -> None:
    obj = with_status(created(), conditions=[condition("Denied", reason="No")])
    admitted = review(obj, created(), subresource="approval")
    assert [c["type"] for c in admitted["status"]["conditions"]] == ["Denied"]


def test_approval_keeps_the_certificate_as_it_was() -> None:
    obj = with_status(created(), conditions=[condition("Approved")], certificate=CERTIFICATE)
    admitted = review(obj, created(), subresource="approval")
    assert "certificate" not in admitted["status"]
    assert [c["type"] for c in admitted["status"]["conditions"]] == ["Approved"]


def test_a_condition_keeps_its_transition_time() -> None:
    old = approved()
    later = NOW + timedelta(hours=1)
    obj = with_status(old, conditions=[condition("Approved", reason="Ok")])
    admitted = review(obj, old, subresource="approval", now=later)
    assert admitted["status"]["conditions"][0]["lastTransitionTime"] == NOW_TEXT
    assert admitted["status"]["conditions"][0]["lastUpdateTime"] == "2024-05-01T13:00:00Z"


@pytest.mark.parametrize("type_", ["Approved", "Denied"])
def test_approval_conditions_cannot_be_added_through_status(type_: str) -> None:
    obj = with_status(created(), conditions=[condition(type_)])
    assert errors(obj, created(), "status") == [
        f'status.conditions: Forbidden: updates may not add a condition of type "{type_}"'
    ]


def test_approval_conditions_cannot_be_modified_through_status() -> None:
    old = approved()
    obj = with_status(old, conditions=[condition("Approved", reason="Changed")])
    assert errors(obj, old, "status") == [
        'status.conditions: Forbidden: updates may not modify a condition of type "Approved"'
    ]


@pytest.mark.parametrize("subresource", ["approval", "status"])
def test_conditions_cannot_be_removed(subresource: str) -> None:
    old = approved()
    assert errors(with_status(old, conditions=[]), old, subresource) == [
        'status.conditions: Forbidden: updates may not remove a condition of type "Approved"'
    ]


def test_a_failed_condition_may_be_added_through_status() -> None:
    obj = with_status(created(), conditions=[condition("Failed", reason="SignerValidationFailure")])
    admitted = review(obj, created(), subresource="status")
    assert [c["type"] for c in admitted["status"]["conditions"]] == ["Failed"]


# --- the certificate ------------------------------------------------------------------------------


def test_the_certificate_needs_sign_on_the_signer() -> None:
    old = approved()
    obj = with_status(
        old, conditions=old.to_dict()["status"]["conditions"], certificate=CERTIFICATE
    )
    message = refusal(obj, old, authorizer=signer_rights(("approve", SIGNER)), subresource="status")
    assert message == (
        'certificatesigningrequests.certificates.k8s.io "csr1" is forbidden: user not permitted '
        'to sign requests with signerName "example.com/signer"'
    )


@pytest.mark.parametrize("name", [SIGNER, "example.com/*"])
def test_sign_on_the_signer_or_its_domain(name: str) -> None:
    old = approved()
    obj = with_status(
        old, conditions=old.to_dict()["status"]["conditions"], certificate=CERTIFICATE
    )
    admitted = review(
        obj, old, user=APPROVER, authorizer=signer_rights(("sign", name)), subresource="status"
    )
    assert admitted["status"]["certificate"] == CERTIFICATE


def test_a_status_update_changing_neither_certificate_nor_conditions_needs_no_sign() -> None:
    old = approved()
    obj = old.to_dict()
    obj["metadata"]["labels"] = {"seen": "yes"}
    review(obj, old, user=APPROVER, authorizer=signer_rights(), subresource="status")


def test_the_certificate_cannot_be_set_on_the_main_resource() -> None:
    old = approved()
    obj = with_status(
        old, conditions=old.to_dict()["status"]["conditions"], certificate=CERTIFICATE
    )
    assert "certificate" not in review(obj, old)["status"]


def test_an_issued_certificate_cannot_be_replaced() -> None:
    old = approved()
    issued = with_status(
        old, conditions=old.to_dict()["status"]["conditions"], certificate=CERTIFICATE
    )
    stored = default_chain().review(issued, old, now=NOW, user=ROOT, subresource="status").obj
    other = b64(client_certificate(CA, "bob", [], NOW).certificate_pem())
    obj = with_status(stored, conditions=old.to_dict()["status"]["conditions"], certificate=other)
    assert errors(obj, stored, "status") == [
        "status.certificate: Forbidden: updates may not modify existing certificate content"
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"new - no PEM blocks", "must contain at least one CERTIFICATE PEM block"),
        (
            b"-----BEGIN CERTIFICATE1-----\nAAAA\n-----END CERTIFICATE1-----\n",
            'only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE1"',
        ),
    ],
    ids=["no PEM block", "not a CERTIFICATE block"],
)
def test_an_invalid_certificate_is_refused(data: bytes, message: str) -> None:
    old = approved()
    obj = with_status(old, conditions=old.to_dict()["status"]["conditions"], certificate=b64(data))
    assert errors(obj, old, "status") == [
        f'status.certificate: Invalid value: "<certificate data>": {message}'
    ]


# --- validation ---------------------------------------------------------------------------------


def test_a_valid_request() -> None:
    review(
        csr(expirationSeconds=600, usages=["digital signature", "key encipherment", "client auth"])
    )


EXPIRY = "may not specify a duration less than 600 seconds (10 minutes)"
SPEC_ERRORS = {
    "no usages": ({"usages": []}, ["spec.usages: Required value"]),
    "unknown usage": (
        {"usages": ["client auth", "bogus"]},
        [f'spec.usages[1]: Unsupported value: "bogus": supported values: {ALL_USAGES}'],
    ),
    "duplicate usage": (
        {"usages": ["client auth", "client auth"]},
        ['spec.usages[1]: Duplicate value: "client auth"'],
    ),
    "unknown and duplicate usages": (
        {"usages": ["unknown", "unknown"]},
        [
            f'spec.usages[0]: Unsupported value: "unknown": supported values: {ALL_USAGES}',
            f'spec.usages[1]: Unsupported value: "unknown": supported values: {ALL_USAGES}',
            'spec.usages[1]: Duplicate value: "unknown"',
        ],
    ),
    "too short": (
        {"expirationSeconds": 599},
        [f"spec.expirationSeconds: Invalid value: 599: {EXPIRY}"],
    ),
    "zero": ({"expirationSeconds": 0}, [f"spec.expirationSeconds: Invalid value: 0: {EXPIRY}"]),
    "negative": (
        {"expirationSeconds": -1},
        [f"spec.expirationSeconds: Invalid value: -1: {EXPIRY}"],
    ),
}


@pytest.mark.parametrize(("spec", "expected"), SPEC_ERRORS.values(), ids=SPEC_ERRORS.keys())
def test_spec_validation(spec: dict[str, Any], expected: list[str]) -> None:
    assert errors(csr(**spec)) == expected


def test_usages_are_required() -> None:
    obj = csr()
    del obj["spec"]["usages"]
    assert errors(obj) == ["spec.usages: Required value"]


FQDN_FORM = "must be a fully qualified domain and path of the form 'example.com/signer-name'"
LONG_LABEL = "a" * 66
SIGNER_ERRORS = {
    "empty": ("", "Required value"),
    "legacy": (
        "kubernetes.io/legacy-unknown",
        'Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via '
        "this API version",
    ),
    "no slash": ("an-invalid-signer-name", f'Invalid value: "an-invalid-signer-name": {FQDN_FORM}'),
    "two slashes": ("a.com/something/else", f'Invalid value: "a.com/something/else": {FQDN_FORM}'),
    "domain not qualified": (
        "example/some-signer-name",
        'Invalid value: "example": should be a domain with at least two segments separated by dots',
    ),
    "empty path": ("example.com/", f'Invalid value: "": validating label "": {RFC1123_SUBDOMAIN}'),
    "path ends with a symbol": (
        "example.com/something-",
        f'Invalid value: "something-": validating label "something-": {RFC1123_SUBDOMAIN}',
    ),
    "path is a symbol": (
        "example.com/-",
        f'Invalid value: "-": validating label "-": {RFC1123_SUBDOMAIN}',
    ),
    "domain label too long": (
        f"{LONG_LABEL}.example.io/valid-path",
        f'Invalid value: "{LONG_LABEL}.example.io": validating label "{LONG_LABEL}": must be no '
        "more than 63 characters",
    ),
    # only the first bad label of the domain is reported
    "two bad domain labels": (
        "Foo.Bar/x",
        f'Invalid value: "Foo.Bar": validating label "Foo": {RFC1123_LABEL}',
    ),
}


@pytest.mark.parametrize(("signer", "message"), SIGNER_ERRORS.values(), ids=SIGNER_ERRORS.keys())
def test_signer_name_validation(signer: str, message: str) -> None:
    assert errors(csr(signerName=signer)) == [f"spec.signerName: {message}"]


MAX_FQDN = ".".join(["a" * 63, "a" * 63, "a" * 63, "a" * 61])
MAX_SIGNER = f"{MAX_FQDN}/{'a' * 63}.{'a' * 253}"


def test_signer_name_lengths() -> None:
    review(csr(signerName=MAX_SIGNER))
    review(csr(signerName=f"abc.io/{'a' * 253}.{'a' * 253}"))
    assert errors(csr(signerName=MAX_SIGNER + ".toolong")) == [
        "spec.signerName: Too long: may not be more than 571 bytes"
    ]
    assert errors(csr(signerName=f"{MAX_FQDN}.extra/valid-path")) == [
        "spec.signerName: Too long: may not be more than 253 bytes"
    ]


@pytest.mark.parametrize("request_data", [b"", b"invalid data"])
def test_the_request_must_be_a_pem_certificate_request(request_data: bytes) -> None:
    with pytest.raises(Invalid) as err:
        review(csr(request=b64(request_data)))
    assert [(e.field, e.detail) for e in err.value.errors] == [
        ("spec.request", "PEM block type must be CERTIFICATE REQUEST")
    ]


def test_a_refusal_names_the_request() -> None:
    with pytest.raises(Invalid) as err:
        review(csr(usages=[]))
    assert err.value.message == (
        'CertificateSigningRequest.certificates.k8s.io "csr1" is invalid: spec.usages: Required value'
    )


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        ([{"status": "True"}], ["status.conditions[0].type: Required value"]),
        ([{"type": "Approved"}], ["status.conditions[0].status: Required value"]),
        (
            [condition("Approved", "False")],
            ['status.conditions[0].status: Unsupported value: "False": supported values: "True"'],
        ),
        (
            [condition("Custom", "Maybe")],
            [
                'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'
            ],
        ),
        (
            [condition("Approved"), condition("Denied")],
            [
                'status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive'
            ],
        ),
        (
            [condition("Approved"), condition("Approved")],
            ['status.conditions[1].type: Duplicate value: "Approved"'],
        ),
    ],
)
def test_condition_validation(conditions: list[dict[str, Any]], expected: list[str]) -> None:
    assert errors(with_status(created(), conditions=conditions), created(), "approval") == expected
