"""Go's net/url.Parse, as far as the webhooks' URL checks look: what it refuses, in its words."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from fleetwarden.admission.golang import go_quote


@dataclass(frozen=True)
class URL:
    scheme: str = ""
    user: str | None = None
    host: str = ""
    query: str = ""
    fragment: str = ""


def parse_url(raw: str) -> URL:
    """url.Parse; ValueError worded as Go's *url.Error."""
    head, _, fragment = raw.partition("#")
    try:
        url = _parse_head(head)
    except ValueError as exc:
        raise ValueError(f"parse {go_quote(head)}: {exc}") from None
    try:
        _unescape(fragment)
    except ValueError as exc:
        raise ValueError(f"parse {go_quote(raw)}: {exc}") from None
    return dataclasses.replace(url, fragment=fragment)


def _parse_head(raw: str) -> URL:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise ValueError("net/url: invalid control character in URL")
    scheme, rest = _scheme(raw)
    if rest.endswith("?") and rest.count("?") == 1:
        rest, query = rest[:-1], ""
    else:
        rest, _, query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return URL(scheme, query=query)  # opaque, like mailto:someone
        if ":" in rest.partition("/")[0]:
            raise ValueError("first path segment in URL cannot contain colon")
    user, host = None, ""
    if rest.startswith("//") and (scheme or not rest.startswith("///")):
        authority, slash, path = rest[2:].partition("/")
        user, host = _authority(authority)
        rest = slash + path
    _unescape(rest)
    return URL(scheme, user, host, query)


def _scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if c.isascii() and (c.isdigit() or c in "+-."):
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise ValueError("missing protocol scheme")
            return raw[:i].lower(), raw[i + 1 :]
        return "", raw
    return "", raw


_USERINFO_CHARS = set("-._:~!$&'()*+,;=%@")
_HOST_CHARS = set("-_.~!$&'()*+,;=:[]<>\"")


def _authority(authority: str) -> tuple[str | None, str]:
    userinfo, at, hostport = authority.rpartition("@")
    host = _host(hostport)
    if not at:
        return None, host
    if not all((c.isascii() and c.isalnum()) or c in _USERINFO_CHARS for c in userinfo):
        raise ValueError("net/url: invalid userinfo")
    _unescape(userinfo)
    return userinfo, host


def _host(host: str) -> str:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise ValueError("missing ']' in host")
        port = host[end + 1 :]
    else:
        port = host[host.rfind(":") :] if ":" in host else ""
    if port and not (port[0] == ":" and all("0" <= c <= "9" for c in port[1:])):
        raise ValueError(f"invalid port {go_quote(port)} after host")
    _unescape(host, in_host=True)
    return host


def _unescape(text: str, in_host: bool = False) -> None:
    """url.unescape's refusals: bad percent escapes and, in a host, characters to escape."""
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%":
            escape = text[i : i + 3]
            if len(escape) < 3 or not all(h in "0123456789abcdefABCDEF" for h in escape[1:]):
                raise ValueError(f"invalid URL escape {go_quote(escape)}")
            if in_host and int(escape[1], 16) < 8 and escape != "%25":
                raise ValueError(f"invalid URL escape {go_quote(escape)}")
            i += 3
            continue
        if in_host and c.isascii() and not c.isalnum() and c not in _HOST_CHARS:
            raise ValueError(f"invalid character {go_quote(c)} in host name")
        i += 1
