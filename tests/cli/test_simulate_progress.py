"""`fleetwarden simulate` shows how far it got on a terminal, and only there: a bar on
standard error when that is a terminal (a pseudo-terminal here), nothing when it is a pipe
or the output is JSON."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

from fleetwarden.cli.up import fleetwarden_command

SCENARIO = str(Path(__file__).parents[2] / "examples" / "scenarios" / "graceful-failover.yaml")


def simulate_on_a_terminal(*args: str) -> tuple[str, str]:
    return on_a_terminal("simulate", SCENARIO, *args)


def on_a_terminal(*args: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    """`fleetwarden ARGS...`: standard output (a pipe), and what a terminal on standard
    error shows."""
    terminal, other_end = pty.openpty()
    process = subprocess.Popen(
        fleetwarden_command(*args),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=other_end, env=env,
    )  # fmt: skip
    os.close(other_end)
    shown = b""
    try:
        while chunk := os.read(terminal, 4096):
            shown += chunk
    except OSError:  # EIO: every end of the terminal closed, as the process ended
        pass
    finally:
        os.close(terminal)
    output, _ = process.communicate(timeout=60)
    return output.decode(), shown.decode()


def test_a_terminal_sees_the_virtual_time_reached_of_the_scenarios_end() -> None:
    output, shown = simulate_on_a_terminal()
    assert output.startswith("scenario graceful-failover: ")
    assert "graceful-failover 0s / 4m0s" in shown
    last = shown.rstrip().rpartition("\r")[2]
    assert "graceful-failover 4m0s / 4m0s" in last
    assert "100%" in last


def test_no_bar_for_json_even_on_a_terminal() -> None:
    output, shown = simulate_on_a_terminal("-o", "json")
    assert output.startswith("{")
    assert shown == ""


def test_no_bar_on_a_pipe() -> None:
    result = subprocess.run(
        fleetwarden_command("simulate", SCENARIO), capture_output=True, text=True, timeout=60
    )
    assert result.stdout.startswith("scenario graceful-failover: ")
    assert result.stderr == ""
