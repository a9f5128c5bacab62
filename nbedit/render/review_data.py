"""A plan as plain data for the review widget's browser side: the rows, nothing else.

Why data and not HTML: the review widget is one widget model whose saved state
is this document, so a saved notebook carries each review once, in a few
kilobytes, instead of dozens of widget models with their own markup. The
browser draws it (unified or side by side, files collapsible, unchanged runs
expandable) from the same ``FileView`` rows every other renderer uses, so the
live view, the static ``text/html`` fallback and the terminal never disagree
about what changes.

The document is terse on purpose (a thousand hunks must stay well under the
2 MB budget): a row is ``[kind, old line, new line, text]`` where ``kind`` is
``"c"``, ``"r"`` or ``"a"`` and ``text`` is a string, or a list of
``[piece, changed]`` pairs when word highlights exist. Unchanged runs between
blocks are ``{"gap": [count, old line, new line]}``; their lines are not in the
document and are sent on request (``gap_lines``).

Notebook plans are diffed in their cell view, where every cell starts with a
marker line. Marker rows become ``"m"`` rows carrying the cell's index, type,
id and what happened to it (kept, inserted, deleted, retyped), so the browser
draws a box per cell instead of the marker text.

Every document carries ``digest``, a fingerprint of the plan it shows (each
file's path, the fingerprint of the bytes it was planned against, each located
hunk's place, old and new text). The page sends it back with Apply, Reject and
Re-plan together with the exact selection it drew, so the kernel can refuse a
decision taken on a page that showed another plan (a second view, a re-plan
the page had not drawn yet) instead of writing something nobody saw.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

from nbedit.engine.models import FilePlan, Plan, Tier
from nbedit.engine.text import split_lines, strip_newline
from nbedit.errors import NotebookError
from nbedit.render.html import line_range
from nbedit.render.rows import Block, Gap, Row
from nbedit.render.summary import FileSummary, cached_view, summarize

__all__ = ["CLEARED_OUTPUTS_NOTE", "gap_lines", "plan_digest", "review_document", "why_data"]

# The planner's note when ``clear_outputs`` is set (nbedit.engine.notebook.planning).
CLEARED_OUTPUTS_NOTE = "clear_outputs: edited code cells lose their outputs and execution count"

_MARKER = re.compile(r"^# %% nbedit cell (?P<index>\S+)(?: \[(?P<type>[^\]]*)\])?(?P<rest>.*)$")
_KIND = {"context": "c", "removed": "r", "added": "a"}


def _text(row: Row) -> str | list[list[Any]]:
    if len(row.segments) == 1 and not row.segments[0].changed:
        return row.segments[0].text
    return [[segment.text, 1 if segment.changed else 0] for segment in row.segments]


def _cell(text: str) -> dict[str, str] | None:
    found = _MARKER.match(text)
    if found is None:
        return None
    rest = found.group("rest")
    identifier = re.search(r"\bid=(\S+)", rest)
    return {
        "index": found.group("index"),
        "type": found.group("type") or "code",
        "id": identifier.group(1) if identifier else "",
        "readonly": "read-only" if "read-only" in rest else "",
    }


def _rows(block: Block, notebook: bool) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for row in block.rows:
        text = _text(row)
        cell = _cell(row.text) if notebook and isinstance(text, str) else None
        if cell is None and notebook and not isinstance(text, str):
            cell = _cell(row.text)
        if cell is not None:
            change = {"context": "", "removed": "deleted", "added": "inserted"}[row.kind]
            rows.append(["m", row.old_line, row.new_line, cell, change])
        else:
            rows.append([_KIND[row.kind], row.old_line, row.new_line, text])
    if notebook:
        _mark_retyped(rows)
        while rows and rows[-1][0] == "m" and not rows[-1][4]:
            rows.pop()  # the next unchanged cell's header, with none of its lines under it
    return rows


def _mark_retyped(rows: list[list[Any]]) -> None:
    """A deleted marker followed by an inserted one for the same cell index is a retyped (or re-id'd) cell."""
    deleted: dict[str, list[Any]] = {}
    for row in rows:
        if row[0] != "m":
            continue
        cell, change = row[3], row[4]
        if change == "deleted":
            deleted[cell["index"]] = row
        elif change == "inserted" and cell["index"] in deleted:
            old = deleted.pop(cell["index"])
            old[4] = "replaced"
            row[4] = "retyped" if old[3]["type"] != cell["type"] else "marker changed"
            row.append(old[3]["type"])


def _hunks(file_plan: FilePlan, indices: Iterable[int]) -> list[dict[str, Any]]:
    hunks = []
    for index in indices:
        located = file_plan.hunks[index]
        match = located.match
        tier: Tier = match.tier
        hunks.append(
            {
                "index": index,
                "exact": tier is Tier.EXACT,
                "tier": "exact" if tier is Tier.EXACT else _tier_label(tier, match.score),
                "why_tier": "" if tier is Tier.EXACT else tier.explanation,
                "offset": _offset(match.offset),
                "cell": located.cell or "",
                "why": why_data(file_plan, index),
            }
        )
    return hunks


def why_data(file_plan: FilePlan, index: int) -> dict[str, Any] | None:
    """A hunk's "Why here?" (``engine.explain.reason``) as page data; None for a plain exact match
    (found verbatim, nothing was decided: its badge says so, with its score of 1.00)."""
    located = file_plan.hunks[index]
    match = located.match
    if match.tier is Tier.EXACT and not match.explanation:
        return None
    from nbedit.engine.explain import cell_place, found_text, reason

    shown = reason(located, found_text(file_plan, located), cell_place(file_plan, located))
    data: dict[str, Any] = {
        "summary": shown.summary,
        "score": f"{shown.score:.2f} ({shown.score_label})",
        "rows": [[str(label), str(text)] for label, text in shown.rows],
    }
    if shown.whitespace:
        data["ws"] = list(shown.whitespace)
    return data


def _tier_label(tier: Tier, score: float) -> str:
    from nbedit.render.labels import tier_label

    return tier_label(tier, score)


def _offset(offset: int | None) -> str:
    from nbedit.render.labels import offset_note

    return offset_note(offset) or ""


def _block(file_plan: FilePlan, block: Block, notebook: bool) -> dict[str, Any]:
    section: dict[str, Any] = {
        "range": line_range(block),
        "hunks": _hunks(file_plan, block.hunk_indices),
        "rows": _rows(block, notebook),
    }
    if block.truncated:
        section["more"] = (
            f"{block.truncated} more lines not shown (+{block.hidden_added} -{block.hidden_removed})"
        )
    return section


def _gap(gap: Gap, notebook_lines: list[str]) -> dict[str, Any]:
    """An unchanged run; in a notebook's line view, how many cells it holds (``notebook_lines``:
    the view's lines, split once per file, not once per gap)."""
    section: dict[str, Any] = {"gap": [gap.count, gap.old_line, gap.new_line]}
    if notebook_lines:
        cells = sum(
            1
            for line in notebook_lines[gap.old_line - 1 : gap.old_line - 1 + gap.count]
            if line.startswith("# %% nbedit cell")
        )
        if cells:
            section["cells"] = cells
    return section


def _source_lines(file_plan: FilePlan) -> list[str]:
    text = (
        file_plan.display_before
        if file_plan.notebook and file_plan.display_before is not None
        else file_plan.before
    )
    return split_lines(text or "")


def _file(file_plan: FilePlan, summary: FileSummary, index: int) -> dict[str, Any]:
    notebook = file_plan.notebook
    outputs = ""
    if notebook:
        outputs = "cleared" if CLEARED_OUTPUTS_NOTE in file_plan.notes else "kept"
    cells = None
    if notebook and file_plan.display_before is not None and file_plan.display_after is not None:
        from nbedit.render.cells import cached_cells

        try:
            cells = cached_cells(file_plan, outputs == "cleared")
        except NotebookError:
            cells = None  # a view that does not read back as cells: drawn as lines
    view = cached_view(file_plan) if cells is None else None
    sections: list[dict[str, Any]] = []
    by_cell: dict[str, Any] = {}
    if view is not None:
        lines = _source_lines(file_plan) if notebook else []
        for section in view.sections:
            sections.append(
                _gap(section, lines) if isinstance(section, Gap) else _block(file_plan, section, notebook)
            )
        notes = [note for note in view.notes if note != CLEARED_OUTPUTS_NOTE]
    else:
        from nbedit.render.cells import structure_badges

        badges, notes = structure_badges(
            tuple(note for note in file_plan.notes if note != CLEARED_OUTPUTS_NOTE)
        )
        by_cell = {"cells": cells, "badges": badges, "hunks": _hunks(file_plan, range(len(file_plan.hunks)))}
    return {
        "index": index,
        "path": summary.title,
        "status": summary.status,
        "added": summary.added,
        "removed": summary.removed,
        "hunk_count": summary.hunk_count,
        "tiers": summary.tiers_note,
        "inexact": len(summary.non_exact),
        "notebook": notebook,
        "outputs": outputs,
        "already_applied": summary.already_applied,
        "whole": not file_plan.hunks,  # no located hunks: the file is included or left out as a whole
        "notes": notes,
        "sections": sections,
        **by_cell,
    }


def review_document(plan: Plan, *, title: str | None = None) -> dict[str, Any]:
    """The plan as the review widget's state: headline, then per file its header facts and rows."""
    summary = summarize(plan)
    files = [
        _file(file_plan, file_summary, index)
        for index, (file_plan, file_summary) in enumerate(zip(plan.files, summary.files, strict=True))
    ]
    return {"title": title or "", "headline": summary.headline, "digest": plan_digest(plan), "files": files}


def plan_digest(plan: Plan) -> str:
    """A short fingerprint of what a plan changes: equal for equal plans, different after any re-plan
    that moves, adds or rewrites a hunk or finds a file changed on disk."""
    digest = hashlib.sha256()
    for file_plan in plan.files:
        parts = [
            file_plan.path,
            file_plan.new_path or "",
            str(file_plan.operation),
            file_plan.fingerprint or "",
        ]
        digest.update("\0".join(parts).encode("utf-8", "surrogatepass") + b"\1")
        for located in file_plan.hunks:
            match = located.match
            head = f"{match.start}:{match.end}:{match.line}\0"
            digest.update(head.encode() + located.hunk.old.encode("utf-8", "surrogatepass") + b"\0")
            digest.update(match.replacement.encode("utf-8", "surrogatepass") + b"\2")
        if not file_plan.hunks and file_plan.after_bytes is not None:
            digest.update(hashlib.sha256(file_plan.after_bytes).digest())
    return digest.hexdigest()[:16]


def gap_lines(file_plan: FilePlan, old_line: int, count: int) -> list[str]:
    """The unchanged lines a gap hides (1-based ``old_line``), without their line endings."""
    lines = _source_lines(file_plan)[old_line - 1 : old_line - 1 + count]
    return [strip_newline(line) for line in lines]
