"""kubectl's printing: tables, ages, `kind.group/name`, and Go's tabwriter alignment."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fleetwarden.semantics.durations import since

if TYPE_CHECKING:
    from fleetwarden.api.kinds import KindInfo

Obj = dict[str, Any]


def kind_string(info: KindInfo) -> str:
    """`cluster.cluster.karmada.io`, `deployment.apps`, `namespace`: how kubectl names a
    kind before `/name` and in `"name" deleted`."""
    return f"{info.singular}.{info.group}" if info.group else info.singular


def go_value(value: Any) -> str:
    """Go's %v of a JSON value, as kubectl prints unstructured content."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    return str(value)


# Tables -----------------------------------------------------------------------------------


def object_table(objects: Iterable[Mapping[str, Any]], now: datetime) -> Obj:
    """The Table kubectl makes itself from objects a server sent without one: NAME and AGE."""
    return {
        "kind": "Table",
        "columnDefinitions": [
            {"name": "Name", "type": "string", "format": "name", "priority": 0},
            {"name": "Age", "type": "string", "priority": 0},
        ],
        "rows": [
            {
                "cells": [
                    obj["metadata"]["name"],
                    since(obj["metadata"].get("creationTimestamp"), now),
                ],
                "object": {"metadata": obj["metadata"]},
            }
            for obj in objects
        ],
    }


class TablePrinter:
    """Prints server Tables as kubectl does: upper-case headers once, columns padded to
    their widest cell plus three, wide columns only with `wide`, NAMESPACE first with
    `with_namespace`. Widths only grow across calls, so watched rows stay aligned."""

    def __init__(self, *, wide: bool = False, with_namespace: bool = False) -> None:
        self.wide, self.with_namespace = wide, with_namespace
        self._widths: list[int] = []
        self._printed_header = False

    def lines(self, table: Mapping[str, Any]) -> list[str]:
        """The table's lines to print now (its header only the first time)."""
        rows = table.get("rows") or []
        if not rows:
            return []
        columns = [
            i
            for i, c in enumerate(table.get("columnDefinitions") or [])
            if self.wide or not c.get("priority")
        ]
        header = [str(table["columnDefinitions"][i]["name"]).upper() for i in columns]
        body = [self._cells(row, columns) for row in rows]
        if self.with_namespace:
            header.insert(0, "NAMESPACE")
        shown = body if self._printed_header else [header, *body]
        self._printed_header = True
        return self._aligned(shown)

    def _cells(self, row: Mapping[str, Any], columns: Sequence[int]) -> list[str]:
        cells = row.get("cells") or []
        shown = [_cell(cells[i]) if i < len(cells) else "" for i in columns]
        if self.with_namespace:
            metadata = (row.get("object") or {}).get("metadata") or {}
            shown.insert(0, str(metadata.get("namespace", "")))
        return shown

    def _aligned(self, rows: list[list[str]]) -> list[str]:
        for row in rows:
            for i, cell in enumerate(row[:-1]):
                width = max(_MIN_WIDTH, len(cell) + _PADDING)
                if i == len(self._widths):
                    self._widths.append(width)
                self._widths[i] = max(self._widths[i], width)
        return [
            "".join(cell.ljust(self._widths[i]) for i, cell in enumerate(row[:-1])) + row[-1]
            for row in rows
        ]


# printers.GetNewTabWriter's settings.
_MIN_WIDTH, _PADDING = 6, 3


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else go_value(value)


# Go's text/tabwriter ------------------------------------------------------------------------


# kubectl describe's tabbedString: w.Init(out, 0, 8, 2, ' ', 0), no minimum cell width and
# two spaces of padding.
MIN_WIDTH = 0
PADDING = 2


def tabbed(text: str) -> str:
    """text/tabwriter's layout: tab-terminated cells aligned in column blocks (runs of
    consecutive lines that have a cell in that column), each as wide as its widest cell
    plus PADDING, and at least MIN_WIDTH."""
    lines = [line.split("\t") for line in text.split("\n")]
    out: list[str] = []
    _format(lines, 0, len(lines), [], out)
    return "\n".join(out)


def _format(
    lines: list[list[str]], line0: int, line1: int, widths: list[int], out: list[str]
) -> None:
    column = len(widths)
    this = line0
    while this < line1:
        if column >= len(lines[this]) - 1:
            this += 1
            continue
        _write(lines[line0:this], widths, out)
        line0, width = this, MIN_WIDTH
        while this < line1 and column < len(lines[this]) - 1:
            width = max(width, len(lines[this][column]) + PADDING)
            this += 1
        _format(lines, line0, this, [*widths, width], out)
        line0 = this
    _write(lines[line0:line1], widths, out)


def _write(lines: list[list[str]], widths: list[int], out: list[str]) -> None:
    for cells in lines:
        out.append(
            "".join(
                cell.ljust(widths[j]) if j < len(widths) else cell for j, cell in enumerate(cells)
            )
        )
