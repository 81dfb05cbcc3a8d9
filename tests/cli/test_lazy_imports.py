"""The `fleetwarden` command imports a subcommand's machinery only when that subcommand runs:
`--help` loads none of the hub, and `get` only the client (bench/cli.py times them).

Each case runs in a fresh interpreter, whose sys.modules then says what was imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fleetwarden.client.kubeconfig import write_kubeconfig

# Run the CLI as `fleetwarden ARGS...`, then print the names of the modules it imported.
SCRIPT = """
import json, sys
from fleetwarden.cli import app
try:
    app(sys.argv[1:], prog_name="fleetwarden")
except SystemExit:
    pass
print("MODULES " + json.dumps(sorted(sys.modules)))
"""

# What only the hub, the agents, simulate and the offline commands need.
HUB = (
    "uvicorn",
    "kubernetes",
    "cryptography",
    "prometheus_client",
    "fleetwarden.server",
    "fleetwarden.hub",
    "fleetwarden.controllers",
    "fleetwarden.scheduling",
    "fleetwarden.admission",
    "fleetwarden.auth",
    "fleetwarden.store",
    "fleetwarden.members",
    "fleetwarden.sim",
    "fleetwarden.runtime.manager",
    # The API's models, and the registry of every kind.
    "fleetwarden.api.meta",
    "fleetwarden.api.registry",
)
# What talks to a hub: none of it for --help. (pydantic is typer's too: it parses a
# command's arguments with it, so what the models cost is guarded by api.meta above.)
CLIENT = ("httpx", "fleetwarden.client.client")


def imported(*args: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, check=True
    )
    line = next(x for x in result.stdout.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def loaded(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    """Which of the packages (or of their modules) were imported."""
    return sorted(p for p in packages if any(m == p or m.startswith(f"{p}.") for m in modules))


def test_help_imports_neither_the_hub_nor_the_client() -> None:
    modules = imported("--help")
    assert "fleetwarden.cli.up" in modules  # every command's options were built
    assert loaded(modules, HUB + CLIENT) == []


def test_a_subcommands_help_imports_neither_the_hub_nor_the_client() -> None:
    for command in (["up"], ["agent"], ["token", "create"], ["get"], ["explain"]):
        assert loaded(imported(*command, "--help"), HUB + CLIENT) == [], command


def test_get_imports_the_client_but_not_the_registry_nor_the_hub(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, "http://127.0.0.1:1")  # nothing listens: the get fails
    modules = imported("get", "clusters", f"--kubeconfig={kubeconfig}")
    assert "fleetwarden.client.client" in modules
    assert loaded(modules, HUB) == []
