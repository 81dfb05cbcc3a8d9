"""An explanation as text: the subject's facts, every cluster, the eviction tasks, what it
waits for. Columns are laid out as kubectl lays out its tables (Go's tabwriter)."""

from __future__ import annotations

from fleetwarden.api.meta import format_time
from fleetwarden.explain.model import ClusterVerdict, EvictionTask, Explanation


def to_text(ex: Explanation) -> str:
    from fleetwarden.cli.printers import tabbed

    where = f" from {ex.source}" if ex.source else ""
    parts = [f"{ex.subject}\n(read{where} at {format_time(ex.now)})"]
    parts.append(tabbed("\n".join(f"{label}:\t{value}" for label, value in ex.facts)))
    if ex.clusters:
        rows = ["CLUSTER\tSELECTED\tWHY"]
        for cluster in ex.clusters:
            rows.extend(_cluster_rows(cluster))
        parts.append("Clusters:\n" + _indented(tabbed("\n".join(rows))))
    if ex.evictions:
        rows = ["CLUSTER\tSTATE\tPRODUCER\tREASON\tPURGE MODE\tCREATED\tRETIRED"]
        rows.extend(_task_row(task) for task in ex.evictions)
        whys = [f"  {task.cluster} ({task.state}): {task.why}" for task in ex.evictions if task.why]
        parts.append("\n".join(["Eviction tasks:", _indented(tabbed("\n".join(rows))), *whys]))
    parts.append("Waiting for:\n" + "\n".join(f"  - {line}" for line in ex.waiting))
    if ex.history:
        parts.append("History (Events):\n" + "\n".join(f"  {line}" for line in ex.history))
    if ex.notes:
        parts.append("Notes:\n" + "\n".join(f"  - {line}" for line in ex.notes))
    return "\n\n".join(parts)


def _indented(text: str) -> str:
    return "\n".join(f"  {line}".rstrip() for line in text.split("\n"))


def _cluster_rows(cluster: ClusterVerdict) -> list[str]:
    selected = "yes" if cluster.selected else "no"
    if cluster.selected and cluster.replicas:
        selected = f"yes ({cluster.replicas})"
    lines = [cluster.why, *(v.text() for v in cluster.failed)]
    if cluster.scores:
        lines.append(
            "scores: " + ", ".join(f"{name}={score}" for name, score in cluster.scores.items())
        )
    lines.extend(cluster.notes)
    rows = [f"{cluster.name}\t{selected}\t{lines[0]}"]
    rows.extend(f"\t\t{line}" for line in lines[1:])
    return rows


def _task_row(task: EvictionTask) -> str:
    created = format_time(task.created) if task.created else "<unknown>"
    retired = format_time(task.retired) if task.retired else "<none>"
    return (
        f"{task.cluster}\t{task.state}\t{task.producer or '<unknown>'}\t"
        f"{task.reason or '<unknown>'}\t{task.purge_mode or '<unset>'}\t{created}\t{retired}"
    )
