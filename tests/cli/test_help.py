"""`--help` as a user reads it: every flag name whole at any terminal width, and the
description's paragraphs rewrapped to the width rather than broken where the docstring's
lines end."""

from __future__ import annotations

import os
import re
import subprocess
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from fleetwarden.cli import app
from fleetwarden.cli.up import fleetwarden_command

runner = CliRunner()
COMMANDS: dict[str, Any] = typer.main.get_command(app).commands  # type: ignore[attr-defined]
WIDTHS = ("60", "80", "200")


def flag_names(command: str) -> list[str]:
    return [
        name
        for param in COMMANDS[command].params
        if param.param_type_name == "option" and not param.hidden
        for name in (*param.opts, *param.secondary_opts)
    ]


def whole(flag: str, text: str) -> bool:
    """The flag, neither cut nor run into a longer name."""
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is not None


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("name", ["up", "agent", "simulate", "get", "explain"])
def test_help_shows_every_flag_name_whole(name: str, columns: str) -> None:
    result = runner.invoke(app, [name, "--help"], env={"COLUMNS": columns})
    assert result.exit_code == 0
    missing = [f for f in flag_names(name) if not whole(f, result.stdout)]
    assert missing == []
    assert "…" not in result.stdout


def test_help_on_a_pipe_without_columns_shows_every_flag_name_whole() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    help_text = subprocess.run(
        fleetwarden_command("up", "--help"), capture_output=True, text=True, env=env, check=True
    ).stdout
    assert [f for f in flag_names("up") if not whole(f, help_text)] == []


@pytest.mark.parametrize("columns", WIDTHS)
def test_the_description_is_rewrapped_not_broken_mid_sentence(columns: str) -> None:
    result = runner.invoke(app, ["agent", "--help"], env={"COLUMNS": columns})
    text = "\n".join(line.strip() for line in result.stdout.splitlines())
    paragraph = text[text.index("Pull mode registers") :].split("\n\n")[0].splitlines()
    # Filled lines: only a paragraph's last may be short.
    assert all(len(line) > min(int(columns), 80) // 2 for line in paragraph[:-1]), paragraph


def test_settings_serving_election_and_storage_flags_have_sections_of_their_own() -> None:
    result = runner.invoke(app, ["up", "--help"])
    titles = [line for line in result.stdout.splitlines() if line.endswith(":") and line[0] != " "]
    assert titles == ["Options:", "Serving:", "Leader election:", "Storage:", "Settings:"]
    settings = result.stdout.split("\nSettings:\n")[1]
    assert whole("--cluster-monitor-grace-period", settings)
