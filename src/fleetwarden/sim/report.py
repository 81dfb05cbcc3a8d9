"""Printing a run: each expectation passed or failed with the actual value, then the timeline."""

from __future__ import annotations

import json
from typing import Any

from fleetwarden.sim.runner import Report


def to_json(report: Report, *, dump: bool) -> str:
    doc: dict[str, Any] = {
        "scenario": report.scenario,
        "passed": report.passed,
        "failed": report.failed,
        "results": [o.to_dict() for o in report.outcomes],
        "timeline": report.timeline,
    }
    if dump:
        doc["objects"] = report.objects
    return json.dumps(doc, indent=2, sort_keys=False)


def to_text(report: Report, *, dump: bool) -> str:
    lines = [f"scenario {report.scenario}: {report.passed} passed, {report.failed} failed", ""]
    for o in report.outcomes:
        mark = "PASS" if o.passed else "FAIL"
        what = f"{o.check} {_compact(o.expected)}"
        if o.query:
            what = f"{o.query} {what}"
        lines.append(f"{mark}  {o.at:>8}  {o.path}: {what}")
        if not o.passed:
            lines.append(f"{'':16}actual: {_compact(o.actual)}")
    lines += ["", "timeline:"]
    lines += [
        f"  {e['at']:>8}  {e['object']}: {e['action']} {e['detail']}".rstrip()
        for e in report.timeline
    ]
    if dump:
        lines += ["", "objects:", json.dumps(report.objects, indent=2)]
    return "\n".join(lines)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
