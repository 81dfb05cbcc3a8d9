"""Container image references split into registry, repository and tag or digest, as Karmada's
imageOverrider sees them (pkg/util/imageparser, on github.com/distribution/reference).

`registry.example:5000/team/app:v1` is hostname `registry.example:5000`, repository
`team/app`, tag `v1`; the first path part is a hostname only if it has a dot or a colon or
is `localhost`. A reference with both a tag and a digest keeps the tag alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ALPHANUMERIC = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}"
_PATH_COMPONENT = rf"{_ALPHANUMERIC}(?:{_SEPARATOR}{_ALPHANUMERIC})*"
_REMOTE_NAME = rf"{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_NAME = rf"(?:{_DOMAIN}/)?{_REMOTE_NAME}"

# Go's \w is ASCII only.
_REFERENCE = re.compile(rf"^({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?$", re.ASCII)
_ANCHORED_NAME = re.compile(rf"^(?:({_DOMAIN})/)?({_REMOTE_NAME})$", re.ASCII)
ANCHORED_TAG = re.compile(rf"^{_TAG}$", re.ASCII)
ANCHORED_DIGEST = re.compile(rf"^{_DIGEST}$", re.ASCII)

_NAME_TOTAL_LENGTH_MAX = 255
# go-digest's algorithms registered by crypto/sha256 and crypto/sha512, and their hex lengths.
_DIGEST_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}
_ENCODED = re.compile(r"^[a-f0-9]+$")


class ImageReferenceError(ValueError):
    """Not an image reference; the message is distribution/reference's or go-digest's."""


@dataclass
class ImageComponents:
    hostname: str = ""
    repository: str = ""
    tag: str = ""
    digest: str = ""

    def tag_or_digest(self) -> str:
        return self.tag or self.digest

    def set_tag_or_digest(self, value: str) -> None:
        """A tag replaces the digest and a digest the tag; anything else changes nothing."""
        if ANCHORED_TAG.match(value):
            self.tag, self.digest = value, ""
        elif ANCHORED_DIGEST.match(value):
            self.tag, self.digest = "", value

    def remove_tag_or_digest(self) -> None:
        if self.tag:
            self.tag = ""
        else:
            self.digest = ""

    def full_repository(self) -> str:
        return f"{self.hostname}/{self.repository}" if self.hostname else self.repository

    def __str__(self) -> str:
        if self.tag:
            return f"{self.full_repository()}:{self.tag}"
        if self.digest:
            return f"{self.full_repository()}@{self.digest}"
        return self.full_repository()


def parse_image(image: str) -> ImageComponents:
    """imageparser.Parse."""
    match = _REFERENCE.match(image)
    if match is None:
        if image == "":
            raise ImageReferenceError("repository name must have at least one component")
        if _REFERENCE.match(image.lower()):
            raise ImageReferenceError("repository name must be lowercase")
        raise ImageReferenceError("invalid reference format")
    name, tag, digest = match.group(1), match.group(2) or "", match.group(3) or ""
    named = _ANCHORED_NAME.match(name)
    path = named.group(2) if named else name
    if len(path) > _NAME_TOTAL_LENGTH_MAX:
        raise ImageReferenceError(
            f"repository name must not be more than {_NAME_TOTAL_LENGTH_MAX} characters"
        )
    if digest:
        _validate_digest(digest)
    hostname, repository = split_hostname(name)
    return ImageComponents(hostname, repository, tag, "" if tag else digest)


def _validate_digest(digest: str) -> None:
    """go-digest's Digest.Validate for the algorithms Karmada links in."""
    algorithm, _, encoded = digest.partition(":")
    length = _DIGEST_LENGTHS.get(algorithm)
    if length is None:
        raise ImageReferenceError("unsupported digest algorithm")
    if len(encoded) != length:
        raise ImageReferenceError("invalid checksum digest length")
    if not _ENCODED.match(encoded):
        raise ImageReferenceError("invalid checksum digest format")


def split_hostname(name: str) -> tuple[str, str]:
    """imageparser.SplitHostname."""
    first, slash, rest = name.partition("/")
    if not slash or (not any(c in first for c in ".:") and first != "localhost"):
        return "", name
    return first, rest
