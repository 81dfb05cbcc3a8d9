"""A failed test of a running hub shows the end of the hub's log beside its assertion:
what the hub did is what explains a timeout, and CI keeps nothing else."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TAIL_LINES = 40


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    tmp_path = getattr(item, "funcargs", {}).get("tmp_path")
    if report.when != "call" or not report.failed or tmp_path is None:
        return
    for log in sorted(Path(tmp_path).rglob("*.log")):
        lines = log.read_text(errors="replace").splitlines()[-TAIL_LINES:]
        report.sections.append((f"the end of {log.name}", "\n".join(line[:400] for line in lines)))
