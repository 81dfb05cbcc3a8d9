"""The bundle shipped in the package is the build of the sources in web/: each change to one
comes with the other (`cd web && npm ci && npm run build`), checked here without Node by the
digests web/scripts/stamp.mjs records at build time."""

import hashlib
import json
from importlib.resources import files
from pathlib import Path

ROOT = Path(__file__).parents[2]
WEB = ROOT / "web"
ASSETS = ROOT / "src" / "fleetwarden" / "dashboard" / "assets"
SOURCES = ("package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "scripts", "src")
REBUILD = "rebuild the bundle: cd web && npm ci && npm run build"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sources_digest() -> str:
    """stamp.mjs's digest: sha256 of "<path>\\n<sha256 of its bytes>\\n" per file, by path."""
    paths = sorted(
        p.relative_to(WEB).as_posix()
        for name in SOURCES
        for p in ([WEB / name] if (WEB / name).is_file() else (WEB / name).rglob("*"))
        if p.is_file()
    )
    return sha256("".join(f"{p}\n{sha256((WEB / p).read_bytes())}\n" for p in paths).encode())


def test_the_bundle_was_built_from_the_sources_in_web() -> None:
    stamp = json.loads((ASSETS / "build.json").read_text())
    assert stamp["sources"] == sources_digest(), f"web/ changed since the build: {REBUILD}"


def test_the_built_files_are_those_the_build_wrote() -> None:
    stamp = json.loads((ASSETS / "build.json").read_text())
    built = {p.name: sha256(p.read_bytes()) for p in ASSETS.iterdir() if p.name != "build.json"}
    assert built == stamp["files"], f"assets edited by hand, or a stale build: {REBUILD}"


def test_the_package_carries_the_bundle_and_the_licences_of_what_it_bundles() -> None:
    assets = files("fleetwarden.dashboard").joinpath("assets")
    names = {p.name for p in assets.iterdir()}
    assert {"report.js", "report.css", "echarts.LICENSE.txt", "zrender.LICENSE.txt"} <= names
    assert "Apache License" in assets.joinpath("echarts.LICENSE.txt").read_text()
