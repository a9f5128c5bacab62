"""Explanations: why each hunk of a plan landed where it did, in words.

The matcher records its decision on every non-exact ``Match`` as ``(label,
text)`` rows (``match.explanation``): each tier it tried and what that tier
found, the winning score and the runner-up, the offset from a diff's line
number, and the lines the change expected next to the lines in the file. This
module lays those rows out for a person (``Plan.explain()``, ``nbedit apply
--explain``); the review widget shows the same rows in its "Why here?"
disclosure. Exact matches get one line: there was nothing to decide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbedit.engine.models import LocatedHunk, Plan

__all__ = ["explain_hunk", "explain_plan"]


def explain_hunk(located: LocatedHunk) -> list[str]:
    """Lines explaining one located hunk."""
    match = located.match
    span = (
        f"line {match.line}"
        if match.line_count <= 1
        else f"lines {match.line}-{match.line + match.line_count - 1}"
    )
    where = f"{span} ({located.cell})" if located.cell else span
    head = f"{where}: {match.tier.explanation}" + (f", score {match.score:.2f}" if match.score < 1 else "")
    rows = [head]
    if not match.explanation:
        if match.offset:
            rows.append(f"  {match.offset:+d} lines from the line the change named")
        return rows
    for label, text in match.explanation:
        if "\n" in text:
            rows.append(f"  {label}:")
            rows.extend(f"    {line}" for line in text.split("\n"))
        else:
            rows.append(f"  {label}: {text}")
    return rows


def explain_plan(plan: Plan) -> str:
    """Every file and hunk of a plan, explained (a hunk-less file says why it has none)."""
    lines: list[str] = []
    for file_plan in plan.files:
        lines.append(f"{file_plan.target_path}:")
        if not file_plan.hunks:
            lines.append(f"  {file_plan.operation}: no located hunks (the whole file is shown as one change)")
            lines.extend(f"  note: {note}" for note in file_plan.notes)
            continue
        for number, located in enumerate(file_plan.hunks, start=1):
            explained = explain_hunk(located)
            lines.append(f"  hunk {number}, {explained[0]}")
            lines.extend(f"  {line}" for line in explained[1:])
    return "\n".join(lines)
