"""A plan drawn for the terminal with rich: the CLI's preview before "Apply?".

Draws the same rows and header facts as the HTML renderer (``rows``,
``summary``), so the terminal and the notebook never disagree about what a
change does. Only ``rich.text`` and ``rich.console`` are needed; colour and
width follow the ``Console`` the caller passes (no colour when piped).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from nbedit.engine.models import Tier
from nbedit.render.rows import Block, Gap, Row, offset_note, tier_label
from nbedit.render.summary import FileSummary, PlanSummary, cached_view, header_lines, summarize

if TYPE_CHECKING:
    from rich.console import Console

    from nbedit.engine.models import FilePlan, Plan

__all__ = ["plan_text", "print_plan", "unified_diff_text"]

_LINE_STYLE = {"context": "", "removed": "red", "added": "green"}
_WORD_STYLE = {"context": "", "removed": "bold white on red", "added": "bold black on green"}
_FLAG = "bold yellow"


def _row(row: Row, width: int) -> Text:
    old = "" if row.old_line is None else str(row.old_line)
    new = "" if row.new_line is None else str(row.new_line)
    text = Text()
    text.append(f"{old:>{width}} {new:>{width}} ", style="dim")
    line_style = _LINE_STYLE[row.kind]
    text.append(f"{row.marker} ", style=line_style)
    for segment in row.segments:
        text.append(segment.text, style=_WORD_STYLE[row.kind] if segment.changed else line_style)
    return text


def _gap(gap: Gap, width: int) -> Text:
    lines = "line" if gap.count == 1 else "lines"
    return Text(f"{'':>{width}} {'':>{width}} ⋯ {gap.count} unchanged {lines}", style="dim italic")


def _block_header(block: Block) -> Text | None:
    text = Text()
    if block.hunk_indices:
        numbers = ", ".join(str(index + 1) for index in block.hunk_indices)
        text.append(
            f"@@ hunk {numbers}" if len(block.hunk_indices) == 1 else f"@@ hunks {numbers}", style="cyan"
        )
    if block.cell:
        text.append(f" [{block.cell}]", style="cyan")
    if block.tier is Tier.FUZZY:
        text.append(f"  ⚠ {tier_label(block.tier, block.score)}", style=_FLAG)
    elif block.tier is not Tier.EXACT:
        text.append(f"  ⚠ {block.tier.value}: {block.tier.explanation}", style=_FLAG)
    note = offset_note(block.offset)
    if note:
        text.append(f"  ({note})", style="yellow")
    return text if text.plain else None


def _width(file_plan: FilePlan) -> int:
    view = cached_view(file_plan)
    largest = 1
    for section in view.sections:
        if isinstance(section, Block):
            for row in section.rows:
                largest = max(largest, row.old_line or 0, row.new_line or 0)
    return len(str(largest))


def _file_title(summary: FileSummary) -> Text:
    text = Text()
    text.append(summary.title, style="bold")
    text.append(f"  +{summary.added}", style="green")
    text.append(f" -{summary.removed}", style="red")
    text.append(f"  {summary.status}", style="dim")
    if summary.notebook:
        text.append("  (notebook, shown as cells)", style="dim")
    return text


def _file_lines(file_plan: FilePlan, summary: FileSummary) -> list[Text]:
    lines = [_file_title(summary)]
    for note in summary.notes:
        lines.append(Text(f"  note: {note}", style="dim"))
    view = cached_view(file_plan)
    width = _width(file_plan)
    for section in view.sections:
        if isinstance(section, Gap):
            lines.append(_gap(section, width))
            continue
        header = _block_header(section)
        if header is not None:
            lines.append(header)
        lines.extend(_row(row, width) for row in section.rows)
        if section.truncated:
            lines.append(
                Text(
                    f"⋯ {section.truncated} more lines not shown (+{section.hidden_added} -{section.hidden_removed})",
                    style="dim italic",
                )
            )
    return lines


_ROLE_STYLE = {
    "headline": "bold",
    "path": "bold",
    "added": "green",
    "removed": "red",
    "detail": "dim",
    "note": "yellow",
    "warning": _FLAG,
}


def _header_lines(summary: PlanSummary) -> list[Text]:
    return [
        Text.assemble(*((text, _ROLE_STYLE[role]) for text, role in pieces))
        for pieces in header_lines(summary)
    ]


def plan_text(plan: Plan) -> list[Text]:
    """The plan as rich ``Text`` lines: header, then each file's rows."""
    summary = summarize(plan)
    lines = _header_lines(summary)
    for file_plan, file_summary in zip(plan.files, summary.files, strict=True):
        lines.append(Text(""))
        lines.extend(_file_lines(file_plan, file_summary))
    return lines


def print_plan(plan: Plan, console: Console) -> None:
    """Print the plan's header and coloured diff on ``console``."""
    # One print: rich's per-call cost (terminal checks, a buffer flush) times 10,000 lines was seconds.
    console.print(
        Text("\n").join(plan_text(plan)), overflow="ignore", crop=False, soft_wrap=True, highlight=False
    )


def unified_diff_text(diff: str, indent: str = "") -> Text:
    """A unified diff's text coloured by line kind."""
    text = Text()
    for line in diff.rstrip("\n").split("\n"):
        if line.startswith(("---", "+++")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("+"):
            style = "green"
        else:
            style = ""
        text.append(indent + line + "\n", style=style)
    text.rstrip()
    return text
