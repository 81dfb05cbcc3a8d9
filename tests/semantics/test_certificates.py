"""certificate_problem: what validation says of a CSR's status.certificate, and that it
says it in time whatever the bytes."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from fleetwarden.auth.pki import client_certificate, new_ca
from fleetwarden.semantics.certificates import certificate_problem

NOW = datetime(2024, 1, 1, tzinfo=UTC)
CERTIFICATE = client_certificate(new_ca("test-ca", NOW), "bob", ["dev"], NOW).certificate_pem()


def test_a_certificate_bundle_has_no_problem() -> None:
    assert certificate_problem(CERTIFICATE) == ""
    assert certificate_problem(CERTIFICATE + CERTIFICATE) == ""


@pytest.mark.parametrize(
    ("pem", "problem"),
    [
        (b"", "must contain at least one CERTIFICATE PEM block"),
        (b"-----BEGIN CERTIFICATE-----\nAAAA\n", "must contain at least one CERTIFICATE PEM block"),
        (
            b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END OTHER-----\n",
            "must contain at least one CERTIFICATE PEM block",
        ),
        (
            b"-----BEGIN KEY-----\nAAAA\n-----END KEY-----\n",
            'only CERTIFICATE PEM blocks are allowed, found "KEY"',
        ),
        # A BEGIN without its END is skipped; the block after it still counts.
        (
            b"-----BEGIN KEY-----\n-----BEGIN X-----\nAAAA\n-----END X-----\n",
            'only CERTIFICATE PEM blocks are allowed, found "X"',
        ),
        # An END line may start inside the one before it.
        (
            b"-----BEGIN A-----\nAAAA\n-----END B-----END A-----\n",
            'only CERTIFICATE PEM blocks are allowed, found "A"',
        ),
        (
            b"-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\nAAAA\n"
            b"-----END CERTIFICATE-----\n",
            "no PEM block headers are permitted",
        ),
    ],
    ids=["empty", "no END", "END of another type", "not CERTIFICATE", "BEGIN skipped",
         "overlapping END", "headers"],
)  # fmt: skip
def test_problems(pem: bytes, problem: str) -> None:
    assert certificate_problem(pem) == problem


def test_many_begin_lines_without_an_end_are_refused_in_linear_time() -> None:
    # 360 KB: a regex that searched for each BEGIN's END from there took about 50 s.
    started = time.monotonic()
    problem = certificate_problem(b"-----BEGIN A-----\n" * 20_000)
    assert problem == "must contain at least one CERTIFICATE PEM block"
    assert time.monotonic() - started < 5  # tens of seconds when quadratic
