"""The report page as a file: what it carries, and how `simulate --html` writes it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fleetwarden.cli import app
from fleetwarden.dashboard.report import render_report, script_json

from .test_report_page import HOSTILE, SCENARIOS, hostile_recording


def test_json_for_a_script_element_has_no_markup_and_reads_back_the_same() -> None:
    data = {"title": HOSTILE, "line": "a\u2028b\u2029c", "amp": "&lt;"}
    text = script_json(data)
    assert not {"<", ">", "&", "\u2028", "\u2029"} & set(text)
    assert json.loads(text) == data


def test_the_page_carries_its_data_and_code_and_may_load_nothing() -> None:
    page = render_report(hostile_recording())
    assert page.count("</script>") == 2  # the end of the data's element and of the code's
    assert "default-src 'none'" in page
    start = page.index('id="fleetwarden-recording">') + len('id="fleetwarden-recording">')
    assert json.loads(page[start : page.index("</script>", start)]) == hostile_recording()


def test_simulate_html_that_cannot_be_written_is_an_error(tmp_path: Path) -> None:
    out = tmp_path / "missing" / "page.html"
    result = CliRunner().invoke(
        app, ["simulate", str(SCENARIOS / "graceful-failover.yaml"), "--html", str(out)]
    )
    assert result.exit_code == 2
    assert result.stderr == f"error: cannot write the page {out}: No such file or directory\n"
