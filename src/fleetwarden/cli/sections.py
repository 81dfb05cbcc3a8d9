"""Help in sections, as click prints it: whole flag names at any width.

Typer's Rich help draws options in a table that cuts long flag names to fit the terminal
(`--cluster-monitor-grace-peri…`); click's own layout never cuts a flag name (a long one
takes a line of its own, its help below) and rewraps each paragraph of a docstring. The
app turns Rich help off; this command class keeps the one thing it gave that click
lacks: options grouped by the panel they name (`rich_help_panel`), e.g. Settings.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand

ARGUMENTS, OPTIONS = "Arguments", "Options"


class SectionedCommand(TyperCommand):
    """A command whose help lists its options in one section per panel, Options first."""

    # Untyped: recent typer has a click of its own (typer._click), private, whose
    # Context and HelpFormatter older ones took from click itself.
    def format_options(self, ctx: Any, formatter: Any) -> None:
        sections: dict[str, list[tuple[str, str]]] = {ARGUMENTS: [], OPTIONS: []}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                sections.setdefault(_section(param), []).append(record)
        for title, records in sections.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


def _section(param: Any) -> str:
    if param.param_type_name == "argument":
        return ARGUMENTS
    return getattr(param, "rich_help_panel", None) or OPTIONS
