"""A notebook plan as static HTML, cell by cell: what nbconvert and GitHub show where the widget
does not run.

The live widget draws a notebook plan from ``cells.notebook_cells`` (one entry per cell,
the way nbdime shows notebooks); this module draws the same entries as plain markup so a
saved notebook reads the same without a kernel: a box (``<tbody>``) per changed cell with
its header (index, type, id, a badge for what happened to it, outputs kept or cleared, how
its hunks were found and why) and its lines numbered *within the cell*; an unchanged cell
as one header line; three or more unchanged cells in a row as one line. Nothing here needs
a script: an unchanged cell's lines are not in the page (they are in the notebook itself).

Every header says its pieces in words separated by spaces and "·", so a page that strips
styles and classes (GitHub) still reads "cell 2 · code · edited · outputs kept · hunk 1".
"""

from __future__ import annotations

from typing import Any

from nbedit.engine.models import FilePlan, Tier
from nbedit.render.labels import offset_note, tier_label
from nbedit.render.markup import attribute, badge, hunk_why_html, kept_indent, table, text

__all__ = ["notebook_body_html"]

_KIND = {"c": ("c", " "), "r": ("r", "-"), "a": ("a", "+")}
_STATES = {"edited": "edited", "inserted": "inserted", "deleted": "deleted"}
_MARK = {"deleted": "−", "inserted": "+", "same": "▣"}
# unchanged cells in a row shown as one line from this many on
_SAME_RUN = 3


def _name(cell: dict[str, Any]) -> str:
    return "new cell" if cell["index"] == "new" else f"cell {cell['index']}"


def _line_text(value: str | list[list[Any]]) -> str:
    if isinstance(value, str):
        return kept_indent(text(value))
    pieces = [f'<span class="w">{text(piece)}</span>' if changed else text(piece) for piece, changed in value]
    if pieces and not value[0][1]:
        pieces[0] = kept_indent(pieces[0])
    return "".join(pieces)


def _number(value: int | None) -> str:
    return "" if value is None else str(value)


def _rows(entry: dict[str, Any]) -> str:
    out = []
    for row in entry.get("rows", ()):
        if row[0] == "g":
            count = row[1]
            word = "line" if count == 1 else "lines"
            out.append(f'<tr class="g"><td colspan="4">⋯ {count} unchanged {word}</td></tr>')
            continue
        css, marker = _KIND[row[0]]
        out.append(
            f'<tr class="{css}"><td class="n">{_number(row[1])}</td><td class="n">{_number(row[2])}</td>'
            f'<td class="m">{marker}</td><td>{_line_text(row[3])}</td></tr>'
        )
    if entry.get("more"):
        out.append(f'<tr class="g"><td colspan="4">⋯ {entry["more"]} more lines not shown</td></tr>')
    return "".join(out)


def _hunk_badges(file_plan: FilePlan, index: int, mixed: bool) -> list[str]:
    located = file_plan.hunks[index]
    match = located.match
    pieces = []
    if match.tier is not Tier.EXACT:
        score = f" (score {match.score:.2f})" if match.tier is Tier.FUZZY else ""
        explanation = match.tier.explanation + score
        pieces.append(badge("⚠ " + tier_label(match.tier, match.score), explanation))
    elif mixed:
        pieces.append(badge("exact", "found verbatim (score 1.00)", "nb-ok"))
    note = offset_note(match.offset)
    if note:
        pieces.append(badge(note, "the hunk's context was found at a different line"))
    return pieces


def _header(file_plan: FilePlan, entry: dict[str, Any], file_index: int, toggles: bool, mixed: bool) -> str:
    cell = entry["cell"]
    state = entry["state"]
    words = [f"<b>{text(_name(cell))}</b>", text(cell.get("type", "code"))]
    if cell.get("id"):
        words.append(f"id {text(cell['id'])}")
    badges = []
    if state == "retyped":
        retyped = f"retyped {entry.get('from', '')} → {cell.get('type', 'code')}"
        badges.append(badge(retyped, "cell type changed", "nb-cellchange"))
    elif state in _STATES:
        badges.append(badge(_STATES[state], f"this cell is {state}", "nb-cellchange"))
    elif state == "same":
        lines = entry.get("lines", 0)
        word = "line" if lines == 1 else "lines"
        badges.append(f'<span class="nb-muted">unchanged · {lines} {word}</span>')
    if entry.get("outputs") == "kept":
        badges.append(badge("outputs kept", "outputs and execution count stay as they are", "nb-ok"))
    if "cleared" in entry:
        cleared = entry["cleared"]
        what = f": {', '.join(cleared)}" if cleared else " (it has none)"
        outputs = f"output{'' if len(cleared) == 1 else 's'}"
        badges.append(badge(f"clears {len(cleared)} {outputs}{what}", "--clear-outputs", "nb-warn"))
    hunks = entry.get("hunks", [])
    for index in hunks:
        badges.extend(_hunk_badges(file_plan, index, mixed))
    if hunks:
        names = ", ".join(str(index + 1) for index in hunks)
        badges.append(f'<span class="nb-range">{"hunk" if len(hunks) == 1 else "hunks"} {names}</span>')
    boxes = "".join(
        f'<input type="checkbox" class="nb-toggle" checked data-file="{file_index}" data-hunk="{index}" '
        f'title="{attribute(f"include hunk {index + 1}")}"> '
        for index in hunks
    ) if toggles else ""
    why = "".join(hunk_why_html(file_plan, index) for index in hunks)
    mark = _MARK.get(state, "±")
    css = {"deleted": "m mr", "inserted": "m ma"}.get(state, "m")
    return (
        f'<tr class="{css} nb-cellhead"><td colspan="4">{boxes}<span class="nb-cellmark">{mark}</span> '
        f'{" · ".join(words)} {" ".join(badges)}{why}</td></tr>'
    )


def notebook_body_html(
    file_plan: FilePlan, cells: list[dict[str, Any]], file_index: int, toggles: bool
) -> str:
    """The cell entries of one notebook plan (``cells.notebook_cells``) as one diff table."""
    mixed = any(located.match.exact for located in file_plan.hunks) and not file_plan.exact
    out = []
    position = 0
    while position < len(cells):
        entry = cells[position]
        if entry["state"] == "same" and not entry.get("hunks"):
            end = position
            while end < len(cells) and cells[end]["state"] == "same" and not cells[end].get("hunks"):
                end += 1
            if end - position >= _SAME_RUN:
                first, last = _name(cells[position]["cell"]), _name(cells[end - 1]["cell"])
                out.append(
                    f'<tbody class="nb-cell-same"><tr class="g"><td colspan="4">⋯ {end - position} '
                    f"unchanged cells ({text(first)} to {text(last)})</td></tr></tbody>"
                )
                position = end
                continue
        css = f"nb-cell nb-cell-{entry['state']}"
        header = _header(file_plan, entry, file_index, toggles, mixed)
        out.append(f'<tbody class="{css}">{header}{_rows(entry)}</tbody>')
        position += 1
    return table("".join(out), "nb-diff nb-cells")
