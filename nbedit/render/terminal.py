"""A plan drawn for the terminal with rich: the CLI's preview before "Apply?".

Draws the same rows and header facts as the HTML renderer (``rows``,
``summary``), so the terminal and the notebook never disagree about what a
change does. Only ``rich.text``, ``rich.segment`` and ``rich.console`` are
needed; colour and width follow the ``Console`` the caller passes (no colour
when piped).

Lines are built as (text, style) pieces. ``plan_text`` turns them into rich
``Text`` lines (for ``plan_to_text`` and tests); ``print_plan`` hands them to
rich as ready-made segments in a single print. A 1,000-hunk change is about
10,000 lines: printed line by line that took seconds, and even one big ``Text``
spends most of its time re-splitting itself into lines, which the pieces
already are.

Control characters in the text are drawn as visible symbols (``␛``, ``␍``,
``\x9b``) rather than sent: a file under review must not be able to move the
cursor, recolour or erase lines of its own preview (``\x1b[2K`` or a bare
``\r`` can hide a changed line from the reviewer). rich's own stripping leaves
ESC through. Tabs stay tabs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.text import Text

from nbedit.engine.models import Tier
from nbedit.render.rows import Block, Gap, Row, offset_note, tier_label
from nbedit.render.summary import FileSummary, PlanSummary, cached_view, header_lines, summarize

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.style import Style

    from nbedit.engine.models import FilePlan, Plan

__all__ = ["plan_plain_lines", "plan_text", "print_plan", "unified_diff_text"]

_LINE_STYLE = {"context": "", "removed": "red", "added": "green"}
_WORD_STYLE = {"context": "", "removed": "bold white on red", "added": "bold black on green"}
_FLAG = "bold yellow"

Piece = tuple[str, str]  # text, rich style ("" for none)

# C0 controls (but tab), DEL and C1 controls -> a visible stand-in.
_VISIBLE_CONTROLS = {code: chr(0x2400 + code) for code in range(32) if code != 9}
_VISIBLE_CONTROLS[0x7F] = "␡"
_VISIBLE_CONTROLS.update({code: f"\\x{code:02x}" for code in range(0x80, 0xA0)})


def _visible(text: str) -> str:
    return text.translate(_VISIBLE_CONTROLS)


Line = list[Piece]


def _row(row: Row, width: int) -> Line:
    old = "" if row.old_line is None else str(row.old_line)
    new = "" if row.new_line is None else str(row.new_line)
    line_style = _LINE_STYLE[row.kind]
    word_style = _WORD_STYLE[row.kind]
    pieces = [(f"{old:>{width}} {new:>{width}} ", "dim"), (f"{row.marker} ", line_style)]
    pieces.extend((segment.text, word_style if segment.changed else line_style) for segment in row.segments)
    return pieces


def _gap(gap: Gap, width: int) -> Line:
    lines = "line" if gap.count == 1 else "lines"
    return [(f"{'':>{width}} {'':>{width}} ⋯ {gap.count} unchanged {lines}", "dim italic")]


def _block_header(block: Block) -> Line | None:
    pieces: Line = []
    if block.hunk_indices:
        numbers = ", ".join(str(index + 1) for index in block.hunk_indices)
        label = f"@@ hunk {numbers}" if len(block.hunk_indices) == 1 else f"@@ hunks {numbers}"
        pieces.append((label, "cyan"))
    if block.cell:
        pieces.append((f" [{block.cell}]", "cyan"))
    if block.tier is Tier.FUZZY:
        pieces.append((f"  ⚠ {tier_label(block.tier, block.score)}", _FLAG))
    elif block.tier is not Tier.EXACT:
        pieces.append((f"  ⚠ {block.tier.value}: {block.tier.explanation}", _FLAG))
    note = offset_note(block.offset)
    if note:
        pieces.append((f"  ({note})", "yellow"))
    return pieces or None


def _width(file_plan: FilePlan) -> int:
    view = cached_view(file_plan)
    largest = 1
    for section in view.sections:
        if isinstance(section, Block):
            for row in section.rows:
                largest = max(largest, row.old_line or 0, row.new_line or 0)
    return len(str(largest))


def _file_title(summary: FileSummary) -> Line:
    pieces = [
        (summary.title, "bold"),
        (f"  +{summary.added}", "green"),
        (f" -{summary.removed}", "red"),
        (f"  {summary.status}", "dim"),
    ]
    if summary.notebook:
        pieces.append(("  (notebook, shown as cells)", "dim"))
    return pieces


def _file_lines(file_plan: FilePlan, summary: FileSummary) -> list[Line]:
    lines = [_file_title(summary)]
    for note in summary.notes:
        lines.append([(f"  note: {note}", "dim")])
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
            hidden = f"(+{section.hidden_added} -{section.hidden_removed})"
            lines.append([(f"⋯ {section.truncated} more lines not shown {hidden}", "dim italic")])
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


def _header_lines(summary: PlanSummary) -> list[Line]:
    return [[(text, _ROLE_STYLE[role]) for text, role in pieces] for pieces in header_lines(summary)]


def _plan_lines(plan: Plan) -> list[Line]:
    summary = summarize(plan)
    lines = _header_lines(summary)
    for file_plan, file_summary in zip(plan.files, summary.files, strict=True):
        lines.append([])
        lines.extend(_file_lines(file_plan, file_summary))
    return lines


def plan_text(plan: Plan) -> list[Text]:
    """The plan as rich ``Text`` lines: header, then each file's rows."""
    return [Text.assemble(*((_visible(text), style) for text, style in line)) for line in _plan_lines(plan)]


def plan_plain_lines(plan: Plan) -> list[str]:
    """``plan_text`` without styles: each line's text, control characters made visible."""
    return [_visible("".join(text for text, _ in line)) for line in _plan_lines(plan)]


class _Segments:
    """Lines of pieces as a rich renderable that yields its segments directly (never wrapped).

    Each line ends with a newline, the last too: ``console.print`` adds none after a renderable.
    """

    def __init__(self, lines: list[Line]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        styles: dict[str, Style | None] = {"": None}
        newline = Segment.line()
        for line in self.lines:
            for text, style in line:
                if style not in styles:
                    styles[style] = console.get_style(style)
                yield Segment(_visible(text), styles[style])
            yield newline


def print_plan(plan: Plan, console: Console) -> None:
    """Print the plan's header and coloured diff on ``console``, in one print."""
    console.print(
        _Segments(_plan_lines(plan)), overflow="ignore", crop=False, soft_wrap=True, highlight=False
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
        text.append(indent + _visible(line) + "\n", style=style)
    text.rstrip()
    return text
