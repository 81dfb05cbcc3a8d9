"""Reading a kubeconfig as kubectl does: which files, which context, which server and user.

Files: `--kubeconfig` alone when given; else every file named in KUBECONFIG (missing ones
skipped), merged so that the first file to define a name or the current-context wins;
else ~/.kube/config. Relative paths in a file are relative to that file.
"""

from __future__ import annotations

import base64
import contextlib
import os
import ssl
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fleetwarden.api.codec import load_yaml
from fleetwarden.client.errors import ClientError

DEFAULT_NAMESPACE = "default"


class KubeConfigError(ClientError):
    """A kubeconfig that cannot be read or does not say how to reach a server."""


@dataclass(frozen=True)
class KubeConfig:
    """One context, resolved: where the server is and who we are to it."""

    server: str
    namespace: str = DEFAULT_NAMESPACE
    context: str = ""
    token: str | None = None
    username: str | None = None
    password: str | None = None
    client_certificate: bytes | None = None  # PEM
    client_key: bytes | None = None  # PEM
    certificate_authority: bytes | None = None  # PEM
    insecure_skip_tls_verify: bool = False

    def ssl_context(self) -> ssl.SSLContext | bool:
        """What httpx's `verify` wants: True, False, or a context with our CA and cert."""
        if self.insecure_skip_tls_verify and self.client_certificate is None:
            return False
        if self.certificate_authority is None and self.client_certificate is None:
            return True
        context = ssl.create_default_context(
            cadata=self.certificate_authority.decode() if self.certificate_authority else None
        )
        if self.insecure_skip_tls_verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.client_certificate is not None:
            _load_cert_chain(context, self.client_certificate, self.client_key)
        return context


def _load_cert_chain(context: ssl.SSLContext, cert: bytes, key: bytes | None) -> None:
    # ssl reads a certificate chain only from files: hand it a private one, briefly.
    with tempfile.TemporaryDirectory() as tmp:
        cert_file = Path(tmp, "client.crt")
        cert_file.write_bytes(cert + b"\n" + (key or b""))
        cert_file.chmod(0o600)
        context.load_cert_chain(cert_file)


def config_files(explicit: str | None, env: Mapping[str, str]) -> list[Path]:
    """The kubeconfig files to read, in precedence order."""
    if explicit:
        return [Path(explicit)]
    listed = env.get("KUBECONFIG", "")
    if listed:
        return [Path(p) for p in listed.split(os.pathsep) if p and Path(p).exists()]
    default = Path(env.get("HOME", str(Path.home())), ".kube", "config")
    return [default] if default.exists() else []


def load_kubeconfig(
    path: str | None = None,
    *,
    context: str | None = None,
    namespace: str | None = None,
    env: Mapping[str, str] | None = None,
) -> KubeConfig:
    """The server and credentials of `context` (default: current-context)."""
    files = config_files(path, os.environ if env is None else env)
    merged = _Merged()
    for file in files:
        merged.add(file)
    name = context or merged.current_context
    if not name:
        raise KubeConfigError(
            "no configuration has been provided, try setting KUBECONFIG environment variable"
        )
    ctx = merged.entry("contexts", name, "context was not found for specified context")
    cluster = merged.entry("clusters", ctx.get("cluster", ""), "cluster not found")
    user = merged.entry("users", ctx["user"], "user not found") if ctx.get("user") else {}
    server = cluster.get("server")
    if not server:
        raise KubeConfigError(f"cluster {ctx.get('cluster')!r} has no server defined")
    return KubeConfig(
        server=str(server),
        namespace=namespace or ctx.get("namespace") or DEFAULT_NAMESPACE,
        context=name,
        token=user.get("token") or _read_text(user.get("tokenFile")),
        username=user.get("username"),
        password=user.get("password"),
        client_certificate=_pem(user, "client-certificate"),
        client_key=_pem(user, "client-key"),
        certificate_authority=_pem(cluster, "certificate-authority"),
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify")),
    )


class _Merged:
    """The named entries of several kubeconfig files: the first definition of a name wins."""

    def __init__(self) -> None:
        self.current_context = ""
        self._entries: dict[str, dict[str, dict[str, Any]]] = {
            "clusters": {},
            "contexts": {},
            "users": {},
        }

    def add(self, file: Path) -> None:
        try:
            data = load_yaml(file.read_text()) or {}
        except (OSError, yaml.YAMLError, ValueError) as exc:
            raise KubeConfigError(f"error loading config file {str(file)!r}: {exc}") from None
        if not isinstance(data, dict):
            raise KubeConfigError(f"error loading config file {str(file)!r}: not a mapping")
        self.current_context = self.current_context or str(data.get("current-context") or "")
        for section, entries in self._entries.items():
            singular = section[:-1]
            for item in data.get(section) or []:
                body = dict(item.get(singular) or {})
                _resolve_paths(body, file.parent)
                entries.setdefault(str(item.get("name", "")), body)

    def entry(self, section: str, name: str, missing: str) -> dict[str, Any]:
        found = self._entries[section].get(name)
        if found is None:
            raise KubeConfigError(f"{missing}: {name}")
        return found


_PATH_FIELDS = ("certificate-authority", "client-certificate", "client-key", "tokenFile")


def _resolve_paths(body: dict[str, Any], base: Path) -> None:
    for field in _PATH_FIELDS:
        value = body.get(field)
        if isinstance(value, str) and value and not Path(value).is_absolute():
            body[field] = str(base / value)


def _pem(section: Mapping[str, Any], field: str) -> bytes | None:
    """`<field>-data` (base64) or the file `<field>` names."""
    data = section.get(f"{field}-data")
    if data:
        return base64.b64decode(data)
    file = section.get(field)
    return _read(file) if file else None


def _read_text(file: str | None) -> str | None:
    return _read(file).decode().strip() if file else None


def _read(file: str) -> bytes:
    try:
        return Path(file).read_bytes()
    except OSError as exc:
        raise KubeConfigError(f"unable to read {file!r}: {exc.strerror}") from None


def write_private_file(path: Path, data: bytes) -> None:
    """Write a file only its owner may read, created so from the start, and whole: a reader
    sees the old file or the new one (written aside under a name nobody could plant a file
    or link at, synced, then renamed over it)."""
    fd, aside = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(aside, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(aside)
        raise


@dataclass(frozen=True)
class Context:
    """A further context of a kubeconfig: its name (its cluster's too), the server and its CA."""

    name: str
    server: str
    ca: bytes | None = None


def write_kubeconfig(
    path: Path,
    server: str,
    *,
    ca: bytes | None = None,
    certificate: bytes | None = None,
    key: bytes | None = None,
    token: str | None = None,
    name: str = "fleetwarden",
    more: Sequence[Context] = (),
) -> None:
    """A kubeconfig whose current context is `name`: the server, its CA, and a client
    certificate and key or a token (PEM data embedded); 0600, as it holds credentials.
    The contexts `more` reach other servers with the same credentials."""
    contexts = [Context(name, server, ca), *more]
    user: dict[str, Any] = {}
    if certificate is not None and key is not None:
        user["client-certificate-data"] = base64.b64encode(certificate).decode()
        user["client-key-data"] = base64.b64encode(key).decode()
    if token is not None:
        user["token"] = token
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": c.name, "cluster": _cluster(c)} for c in contexts],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": c.name, "context": {"cluster": c.name, "user": name}}
                     for c in contexts],
        "current-context": name,
    }  # fmt: skip
    write_private_file(path, yaml.safe_dump(config, sort_keys=False).encode())


def _cluster(context: Context) -> dict[str, Any]:
    cluster: dict[str, Any] = {"server": context.server}
    if context.ca is not None:
        cluster["certificate-authority-data"] = base64.b64encode(context.ca).decode()
    return cluster
