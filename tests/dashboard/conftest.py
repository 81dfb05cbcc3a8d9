"""A real browser for the pages: Debian's chromium, headless, driven by Playwright, with a
fresh profile and nothing of the network (the machine's is closed, and a page must need
none). `.ci/run` installs chromium; without it these tests fail rather than skip."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, ConsoleMessage, Page, Playwright, sync_playwright

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Screenshots of the run, kept beyond pytest's tmp dirs so a person can look at them.
KEPT = Path(tempfile.gettempdir()) / "fleetwarden-screenshots"
_kept: list[Path] = []


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    assert Path(CHROMIUM).exists(), f"no {CHROMIUM}: apt-get install chromium (.ci/run does)"
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(
    playwright: Playwright, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BrowserContext]:
    # A fresh profile (Playwright passes it as --user-data-dir, and headless as --headless).
    profile = tmp_path_factory.mktemp("chromium-profile")
    context = playwright.chromium.launch_persistent_context(
        profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
        viewport={"width": 1400, "height": 600},
        ignore_https_errors=True,  # a hub's own CA, made by `fleetwarden up` for the test
    )  # fmt: skip
    yield context
    context.close()


@dataclass
class Visit:
    """A page opened in the browser, and what it said and asked for while loading."""

    page: Page
    problems: list[str] = field(default_factory=list)  # console errors and page errors
    requests: list[str] = field(default_factory=list)


@pytest.fixture
def visit(browser: BrowserContext) -> Iterator[Any]:
    pages: list[Page] = []

    def open_page(where: Path | str) -> Visit:
        page = browser.new_page()
        pages.append(page)
        visit = Visit(page)
        page.on("console", lambda m: _console(visit, m))
        page.on("pageerror", lambda e: visit.problems.append(f"page error: {e}"))
        page.on("request", lambda r: visit.requests.append(r.url))
        page.goto(where.as_uri() if isinstance(where, Path) else where)
        return visit

    yield open_page
    for page in pages:
        page.close()


def _console(visit: Visit, message: ConsoleMessage) -> None:
    if message.type in ("error", "warning"):
        visit.problems.append(f"console {message.type}: {message.text}")


def keep_screenshot(page: Page, tmp_path: Path, name: str) -> Path:
    """A full-page screenshot under the test's tmp dir, copied where it outlives it."""
    shot = tmp_path / name
    page.screenshot(path=shot, full_page=True)
    KEPT.mkdir(exist_ok=True)
    kept = KEPT / name
    shutil.copyfile(shot, kept)
    _kept.append(kept)
    print(f"screenshot: {kept}")
    return kept


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for path in _kept:
        terminalreporter.write_line(f"screenshot kept: {path}")
