"""A plan as self-contained HTML: one ``<div>`` with its own ``<style>``, no scripts, no assets.

The same markup and class names serve the static ``text/html`` output that
survives nbconvert and GitHub, and the live widgets (which draw the same classes
in the page from the plan's rows and use ``STYLE`` plus ``WIDGET_STYLE``), so the
two look alike; any page that strips styles still reads: every rule is scoped under
``.nbedit-view`` so nothing leaks into the notebook, colours come from
JupyterLab's CSS variables with fallbacks, and diff colours are translucent so
they read on light and dark themes alike. Without any CSS at all the table still
reads as a diff, because the ``-``/``+`` markers and line numbers are text.

Size matters (a big plan must not freeze the browser), so rows are terse table
markup and long unchanged stretches are collapsed to a single row. A host that
shows many pieces side by side emits the style sheet once (``STYLE_TAG``) and
asks for the pieces with ``style=False``: a ``<style>`` element applies to the
whole page. Every saved output carries its own sheet, so the widget-only rules
(controls, side by side, the history table's controls) stay out of ``STYLE``.
"""

from __future__ import annotations

import re
from typing import Any

from nbedit.engine.models import FilePlan, Plan, Tier
from nbedit.errors import NotebookError
from nbedit.render.hunk_blocks import block_for_hunk, blocks_for_hunks
from nbedit.render.markup import badge as _badge
from nbedit.render.markup import hunk_why_html
from nbedit.render.markup import kept_indent as _kept_indent
from nbedit.render.markup import table as _table
from nbedit.render.markup import text as _text
from nbedit.render.rows import Block, Gap, Row, offset_note, tier_label
from nbedit.render.summary import FileSummary, PlanSummary, cached_view, summarize, summarize_file

__all__ = [
    "STYLE",
    "STYLE_TAG",
    "WIDGET_STYLE",
    "diff_files_html",
    "file_head_html",
    "file_to_html",
    "hunk_to_html",
    "hunks_to_html",
    "line_range",
    "plan_header_html",
    "plan_to_html",
    "wrap",
]

ROOT_CLASS = "nbedit-view"

STYLE = """
.nbedit-view{color:var(--jp-ui-font-color1,currentColor);background:var(--jp-layout-color1,transparent);
font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:var(--jp-ui-font-size1,13px);line-height:1.45;
padding:6px 10px;box-sizing:border-box}
.nbedit-view .nbedit-view{padding:0}
.nbedit-view .nb-head{margin:0 0 6px 0}
.nbedit-view .nb-headline{font-weight:600;width:100%}
.nbedit-view .nb-files{margin:2px 0 0 0;padding-left:18px}
.nbedit-view .nb-flags{margin:2px 0 0 0;padding-left:18px;color:var(--jp-ui-font-color1,currentColor)}
.nbedit-view .nb-file{border:1px solid var(--jp-border-color2,rgba(128,128,128,.35));border-radius:6px;
margin:8px 0;overflow:hidden;background:var(--jp-layout-color0,transparent)}
.nbedit-view .nb-file-head{display:flex;flex-wrap:wrap;align-items:center;gap:2px 8px;padding:5px 10px;
background:var(--jp-layout-color2,rgba(128,128,128,.10));border-bottom:1px solid var(--jp-border-color2,rgba(128,128,128,.35))}
.nbedit-view .nb-path{font-family:var(--jp-code-font-family,ui-monospace,Menlo,Consolas,monospace);font-weight:600}
.nbedit-view .nb-plus{color:var(--jp-success-color1,rgb(46,160,67));margin-left:8px;font-weight:600}
.nbedit-view .nb-minus{color:var(--jp-error-color1,rgb(218,54,51));margin-left:4px;font-weight:600}
.nbedit-view .nb-file-head .nb-plus,.nbedit-view .nb-file-head .nb-minus{margin-left:0}
.nbedit-view .nb-status{margin-left:8px;opacity:.8}
.nbedit-view .nb-file-head .nb-status{margin-left:0}
.nbedit-view .nb-badge{display:inline-block;padding:0 7px;margin-left:6px;border-radius:10px;font-size:90%;
background:rgba(210,153,34,.22);border:1px solid rgba(210,153,34,.8);white-space:nowrap}
.nbedit-view .nb-file-head .nb-badge,.nbedit-view tr.h .nb-badge{margin-left:0}
.nbedit-view .nb-badge.nb-ok{background:rgba(46,160,67,.15);border-color:rgba(46,160,67,.6)}
.nbedit-view .nb-badge.nb-cell{background:rgba(56,139,253,.15);border-color:rgba(56,139,253,.6)}
.nbedit-view .nb-scroll{overflow-x:auto}
.nbedit-view table.nb-diff{border-collapse:collapse;width:100%;margin:0;border:0;color:inherit;table-layout:auto;
font-family:var(--jp-code-font-family,ui-monospace,Menlo,Consolas,monospace);font-size:var(--jp-code-font-size,12px)}
.nbedit-view table.nb-diff td{padding:0 8px;border:0;white-space:pre;tab-size:4;text-align:left;vertical-align:top;
background:transparent;color:inherit;line-height:1.5}
.nbedit-view table.nb-diff td.n{width:1%;min-width:2.5em;text-align:right;opacity:.55;user-select:none}
.nbedit-view table.nb-diff td.m{width:1%;padding:0 2px;user-select:none;opacity:.8}
.nbedit-view table.nb-diff tr.r td,.nbedit-view table.nb-diff td.r{background:rgba(248,81,73,.15)}
.nbedit-view table.nb-diff tr.a td,.nbedit-view table.nb-diff td.a{background:rgba(46,160,67,.15)}
.nbedit-view table.nb-diff tr.r .w,.nbedit-view table.nb-diff td.r .w{background:rgba(248,81,73,.45);border-radius:2px}
.nbedit-view table.nb-diff tr.a .w,.nbedit-view table.nb-diff td.a .w{background:rgba(46,160,67,.45);border-radius:2px}
.nbedit-view table.nb-diff tr.g td{background:rgba(56,139,253,.07);font-style:italic;
text-align:left;font-family:var(--jp-ui-font-family,system-ui,sans-serif);padding:1px 8px}
.nbedit-view table.nb-diff tr.h td{background:rgba(56,139,253,.10);white-space:normal;padding:3px 8px;
font-family:var(--jp-ui-font-family,system-ui,sans-serif);border-top:1px solid var(--jp-border-color2,rgba(128,128,128,.35))}
.nbedit-view table.nb-diff tbody:first-child tr.h td,.nbedit-view table.nb-diff tr.h:first-child td{border-top:0}
.nbedit-view tr.h td>*{margin-right:6px}
.nbedit-view .nb-range{font-family:var(--jp-code-font-family,ui-monospace,Menlo,Consolas,monospace);opacity:.75}
.nbedit-view .nb-note{padding:3px 10px;opacity:.85}
.nbedit-view .nb-outputs{font-style:italic}
.nbedit-view .nb-toggle{margin:0 6px 0 0;vertical-align:middle}
.nbedit-view .nbedit-status{margin-top:4px}
.nbedit-view .nbedit-state-applied{color:var(--jp-success-color1,rgb(46,160,67))}
.nbedit-view .nbedit-state-stale{color:var(--jp-warn-color1,rgb(210,153,34))}
.nbedit-view .nbedit-state-conflict{color:var(--jp-warn-color1,rgb(210,153,34))}
.nbedit-view .nbedit-state-error{color:var(--jp-error-color1,rgb(218,54,51))}
.nbedit-view .nb-error{border-left:4px solid rgb(218,54,51);background:rgba(248,81,73,.08);padding:6px 10px;
border-radius:2px}
.nbedit-view .nb-error-title{font-weight:600;margin-bottom:4px}
.nbedit-view .nb-error-message{white-space:pre-wrap}
.nbedit-view .nb-error-caption{margin-top:6px;font-weight:600}
.nbedit-view .nb-error-advice{margin-top:6px}
.nbedit-view .nb-error ul{margin:2px 0;padding-left:18px}
.nbedit-view table.nb-history{border-collapse:collapse;color:inherit}
.nbedit-view table.nb-history th,.nbedit-view table.nb-history td{padding:3px 10px;text-align:left;
border-bottom:1px solid var(--jp-border-color2,rgba(128,128,128,.35));background:transparent;color:inherit}
.nbedit-view table.nb-history th{font-weight:600;background:var(--jp-layout-color2,rgba(128,128,128,.10))}
.nbedit-view table.nb-history td.num{text-align:right;font-variant-numeric:tabular-nums}
.nbedit-view table.nb-history{width:100%}
.nbedit-view table.nb-history td{white-space:nowrap;vertical-align:middle}
.nbedit-view table.nb-diff tr.m td{white-space:normal;font-family:var(--jp-ui-font-family,system-ui,sans-serif);
font-weight:600;padding:4px 8px;background:var(--jp-layout-color2,rgba(128,128,128,.12));
border-top:2px solid var(--jp-border-color1,rgba(128,128,128,.6))}
.nbedit-view table.nb-diff tr.mr td{background:rgba(248,81,73,.12)}
.nbedit-view table.nb-diff tr.ma td{background:rgba(46,160,67,.12)}
.nbedit-view .nb-cellmark{display:inline-block;width:1.2em;text-align:center}
.nbedit-view .nb-badge.nb-cellchange{background:rgba(163,113,247,.18);border-color:rgba(163,113,247,.7)}
.nbedit-view .nb-badge.nb-warn{background:rgba(210,153,34,.22);border-color:rgba(210,153,34,.8)}
.nbedit-view .nb-muted{opacity:.8;font-weight:normal;margin-left:6px}
.nbedit-view .nb-why-summary{margin:2px 0 2px 14px;font-weight:normal}
.nbedit-view .nb-ws{background:rgba(210,153,34,.25)}
.nbedit-view details.nb-why{margin-top:4px}
.nbedit-view details.nb-why summary{cursor:pointer;font-weight:600}
.nbedit-view table.nb-why-table{border-collapse:collapse;margin:2px 0 2px 14px}
.nbedit-view details.nb-why table.nb-why-table tr th,.nbedit-view details.nb-why table.nb-why-table tr td{
padding:1px 8px;text-align:left;vertical-align:top;border:0;background:transparent;color:inherit;
white-space:pre-wrap;font-weight:normal;font-family:var(--jp-ui-font-family,system-ui,sans-serif)}
.nbedit-view details.nb-why table.nb-why-table tr th{font-weight:600}
.nbedit-view table.nb-why-table code{font-family:var(--jp-code-font-family,monospace);background:transparent;
white-space:pre-wrap;padding:0;font-weight:normal;color:inherit}
.nbedit-view table.nb-diff tbody tr,.nbedit-view table.nb-why-table tbody tr{background:transparent}
.nbedit-view pre.nb-why-pre{margin:0;padding:0;background:transparent;color:inherit;white-space:pre;
font-family:var(--jp-code-font-family,monospace);font-size:var(--jp-code-font-size,12px);overflow-x:auto}
"""

# Rules only the live widgets use (their controls, side by side, notebook cells, the history table's
# controls); the static output leaves them out, because every saved output carries its own copy.
WIDGET_STYLE = """
.nbedit-view .nb-head,.nbedit-view .nb-top{margin:0 0 6px 0}
.nbedit-view .nb-top{display:flex;flex-wrap:wrap;align-items:center;gap:4px 10px}
.nbedit-view .nb-summary{font-weight:600}
.nbedit-view .nb-views{margin-left:auto;display:inline-flex}
.nbedit-view .nb-collapsed .nb-file-head{border-bottom:0}
.nbedit-view table.nb-diff td.e{background:rgba(128,128,128,.06)}
.nbedit-view table.nb-split{table-layout:fixed}
.nbedit-view table.nb-split col.cn{width:3.5em}
.nbedit-view table.nb-split col.cm{width:1.4em}
.nbedit-view table.nb-split td.n,.nbedit-view table.nb-split td.m{width:auto;min-width:0}
.nbedit-view table.nb-split td.t{white-space:pre-wrap;overflow-wrap:anywhere}
.nbedit-view .nb-excluded tr:not(.h) td{opacity:.4}
.nbedit-view .nb-excluded tr.h td{text-decoration:line-through}
.nbedit-view .nb-excluded tr.h label{text-decoration:none}
.nbedit-view .nbedit-hunk-toggle{white-space:nowrap;cursor:pointer;font-weight:600}
.nbedit-view .nbedit-hunk-toggle input{margin:0 4px 0 0;vertical-align:middle}
.nbedit-view button.nb-expand,.nbedit-view button.nb-collapse{background:none;border:0;color:inherit;font:inherit;
cursor:pointer;padding:0 2px;text-align:left}
.nbedit-view button.nb-expand{width:100%;font-style:italic;opacity:.85}
.nbedit-view button.nb-expand:hover{text-decoration:underline}
.nbedit-view button:focus-visible,.nbedit-view input:focus-visible,.nbedit-view summary:focus-visible{
outline:2px solid var(--jp-brand-color1,rgb(56,139,253));outline-offset:1px}
.nbedit-view .nb-view-button,.nbedit-view .nb-button{font:inherit;color:var(--jp-ui-font-color1,inherit);
background:var(--jp-layout-color2,rgba(128,128,128,.12));border:1px solid var(--jp-border-color1,rgba(128,128,128,.5));
padding:2px 10px;cursor:pointer}
.nbedit-view .nb-view-button:first-child{border-radius:4px 0 0 4px}
.nbedit-view .nb-view-button:last-child{border-radius:0 4px 4px 0;border-left:0}
.nbedit-view .nb-view-button[aria-pressed=true]{background:var(--jp-brand-color1,rgb(56,139,253));
color:var(--jp-ui-inverse-font-color1,#fff);border-color:var(--jp-brand-color1,rgb(56,139,253))}
.nbedit-view .nb-foot{display:flex;flex-wrap:wrap;align-items:center;gap:6px;margin-top:6px}
.nbedit-view .nb-button{border-radius:4px;padding:3px 14px}
.nbedit-view .nb-button.nb-primary{background:rgb(26,127,55);color:#fff;border-color:rgb(26,127,55)}
.nbedit-view .nb-foot{background:var(--jp-layout-color1,Canvas);padding:4px 0;box-sizing:border-box}
.nbedit-view .nb-foot.nb-floating{position:fixed;z-index:5;margin:0;padding:4px 10px;
border-top:1px solid var(--jp-border-color1,rgba(128,128,128,.5));box-shadow:0 -2px 6px rgba(0,0,0,.15)}
.nbedit-view .nb-tools{display:inline-flex;flex-wrap:wrap;gap:4px;margin-left:auto}
.nbedit-view .nb-small{font:inherit;font-size:90%;color:var(--jp-ui-font-color1,inherit);background:transparent;
border:1px solid var(--jp-border-color1,rgba(128,128,128,.5));border-radius:4px;padding:0 8px;cursor:pointer}
.nbedit-view .nb-small[aria-pressed=true]{background:var(--jp-layout-color3,rgba(128,128,128,.3))}
.nbedit-view .nb-small:disabled{opacity:.5;cursor:default}
.nbedit-view.nb-wrap table.nb-diff td.t{white-space:pre-wrap;overflow-wrap:anywhere}
.nbedit-view .nb-current>tr:first-child td{box-shadow:inset 3px 0 0 var(--jp-brand-color1,rgb(56,139,253))}
.nbedit-view button.nb-cells-run,.nbedit-view button.nb-cell-gap,.nbedit-view button.nb-cell-open{background:none;
border:0;color:inherit;font:inherit;cursor:pointer;padding:0 2px;text-align:left}
.nbedit-view button.nb-cells-run,.nbedit-view button.nb-cell-gap{width:100%;font-style:italic}
.nbedit-view button.nb-cells-run:hover,.nbedit-view button.nb-cell-gap:hover{text-decoration:underline}
.nbedit-view button.nb-cell-open{width:1.2em;text-align:center}
.nbedit-view tbody.nb-cell-same tr.m td{font-weight:normal;border-top-width:1px}
.nbedit-view .nb-button:disabled{opacity:.5;cursor:default}
.nbedit-view .nb-button[hidden]{display:none}
.nbedit-view .nb-selection{opacity:.8;margin-left:6px}
.nbedit-view table.nb-history td.nb-files{white-space:normal}
.nbedit-view table.nb-history td.nb-actions{white-space:normal;min-width:11em}
.nbedit-view table.nb-history td.nb-actions .nb-button{padding:1px 8px;margin:1px 4px 1px 0}
.nbedit-view table.nb-history tr.nb-entry{cursor:pointer}
.nbedit-view table.nb-history tr.nb-entry:hover td{background:rgba(56,139,253,.06)}
.nbedit-view table.nb-history tr.nb-selected td{background:rgba(56,139,253,.12)}
.nbedit-view button.nb-sort{background:none;border:0;padding:0;font:inherit;font-weight:600;color:inherit;cursor:pointer}
.nbedit-view .nb-top label{white-space:nowrap}
.nbedit-view .nb-top select{font:inherit;color:var(--jp-ui-font-color1,inherit);background:var(--jp-layout-color1,transparent);
border:1px solid var(--jp-border-color1,rgba(128,128,128,.5));border-radius:4px;max-width:18em}
"""

STYLE_TAG = f"<style>{STYLE.strip()}</style>"


def wrap(body: str, *, style: bool = True) -> str:
    """Put rendered pieces inside the scoped root, with the style sheet unless ``style=False``."""
    return f'<div class="{ROOT_CLASS}">{STYLE_TAG if style else ""}{body}</div>'


def _tier_badge(tier: Tier, score: float) -> str:
    if tier is Tier.EXACT:
        return ""
    explanation = tier.explanation + (f" (similarity {score:.2f})" if tier is Tier.FUZZY else "")
    return _badge("⚠ " + tier_label(tier, score), explanation)


_CELL_MARKER = re.compile(r"^# %% nbedit cell (\S+)(?: \[([^\]]*)\])?(.*)$")


def _cell_row(row: Row) -> str | None:
    """A cell-view marker line drawn as the cell's header (index, type, id), as the live widget does."""
    found = _CELL_MARKER.match(row.text)
    if found is None:
        return None
    index, kind, rest = found.group(1), found.group(2) or "code", found.group(3)
    identifier = re.search(r"\bid=(\S+)", rest)
    parts = [f"cell {index}", kind] + ([f"id {identifier.group(1)}"] if identifier else [])
    change = {"context": "", "removed": "deleted", "added": "inserted"}[row.kind]
    css = {"context": "m", "removed": "m mr", "added": "m ma"}[row.kind]
    badge = f' <span class="nb-badge nb-cellchange">{change}</span>' if change else ""
    old = "" if row.old_line is None else str(row.old_line)
    new = "" if row.new_line is None else str(row.new_line)
    return (
        f'<tr class="{css}"><td class="n">{old}</td><td class="n">{new}</td><td class="m">{row.marker}</td>'
        f"<td>{_text(' · '.join(parts))}{badge}</td></tr>"
    )


def _row(row: Row, notebook: bool = False) -> str:
    if notebook:
        cell = _cell_row(row)
        if cell is not None:
            return cell
    css = {"context": "c", "removed": "r", "added": "a"}[row.kind]
    old = "" if row.old_line is None else str(row.old_line)
    new = "" if row.new_line is None else str(row.new_line)
    text = "".join(
        f'<span class="w">{_text(segment.text)}</span>' if segment.changed else _text(segment.text)
        for segment in row.segments
    )
    numbers = f'<td class="n">{old}</td><td class="n">{new}</td><td class="m">{row.marker}</td>'
    return f'<tr class="{css}">{numbers}<td>{_kept_indent(text)}</td></tr>'


def _gap(gap: Gap) -> str:
    lines = "line" if gap.count == 1 else "lines"
    return f'<tr class="g"><td colspan="4">⋯ {gap.count} unchanged {lines}</td></tr>'


def _block_header(
    block: Block, file_index: int | None, toggles: bool, file_plan: FilePlan | None = None
) -> str:
    pieces = []
    if toggles and file_index is not None:
        for hunk_index in block.hunk_indices:
            pieces.append(
                f'<input type="checkbox" class="nb-toggle" checked data-file="{file_index}" '
                f'data-hunk="{hunk_index}" title="include hunk {hunk_index + 1}">'
            )
    if block.hunk_indices:
        numbers = ", ".join(str(index + 1) for index in block.hunk_indices)
        pieces.append(f"<b>hunk {numbers}</b>" if len(block.hunk_indices) == 1 else f"<b>hunks {numbers}</b>")
        pieces.append(f'<span class="nb-range">{_text(line_range(block))}</span>')
    if block.cell:
        pieces.append(_badge(block.cell, "notebook cell", "nb-cell"))
    pieces.append(_tier_badge(block.tier, block.score))
    note = offset_note(block.offset)
    if note:
        pieces.append(_badge(note, "the hunk's context was found at a different line", ""))
    header = " ".join(piece for piece in pieces if piece)
    if file_plan is not None:
        header += "".join(hunk_why_html(file_plan, index) for index in block.hunk_indices)
    return f'<tr class="h"><td colspan="4">{header}</td></tr>' if header else ""


def line_range(block: Block) -> str:
    """``@@ -4,6 +4,8 @@``: the old and new lines a block's rows cover."""
    old = [row.old_line for row in block.rows if row.old_line is not None]
    new = [row.new_line for row in block.rows if row.new_line is not None]
    old_part = f"-{min(old)},{len(old)}" if old else "-0,0"
    new_part = f"+{min(new)},{len(new)}" if new else "+0,0"
    return f"@@ {old_part} {new_part} @@"


def _block(
    block: Block, file_index: int | None = None, toggles: bool = False, file_plan: FilePlan | None = None
) -> str:
    notebook = file_plan is not None and file_plan.notebook
    parts = [_block_header(block, file_index, toggles, file_plan)]
    parts.extend(_row(row, notebook) for row in block.rows)
    if block.truncated:
        parts.append(
            f'<tr class="g"><td colspan="4">⋯ {block.truncated} more lines not shown '
            f"(+{block.hidden_added} -{block.hidden_removed})</td></tr>"
        )
    return "".join(parts)


def unified_diff_html(diff: str) -> str:
    """A unified diff's text as coloured rows (not wrapped; for panels that have the style)."""
    rows = []
    for line in diff.split("\n"):
        css = "c" if line.startswith(("---", "+++")) else {"-": "r", "+": "a"}.get(line[:1], "c")
        rows.append(f'<tr class="{css}"><td>{_text(line)}</td></tr>')
    return _table("".join(rows))


_HUNK_RANGE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


def diff_files_html(diff: str) -> str:
    """A unified diff (several files) drawn as the review draws a plan: a box per file with its
    path and +/- counts, a header row per hunk, numbered old/new lines. Not wrapped."""
    files: list[tuple[str, list[str]]] = []
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ "):
            old_path, path = line[4:], lines[index + 1][4:]
            path = path[2:] if path.startswith("b/") else path
            if path == "/dev/null":
                path = (old_path[2:] if old_path.startswith("a/") else old_path) + " (deleted)"
            files.append((path, []))
            index += 2
            continue
        if files:
            files[-1][1].append(line)
        index += 1
    boxes = []
    for path, lines in files:
        rows: list[str] = []
        added = removed = 0
        old_number = new_number = 0
        for line in lines:
            found = _HUNK_RANGE.match(line)
            if found:
                old_number, new_number = int(found.group(1)), int(found.group(3))
                rows.append(
                    f'<tr class="h"><td colspan="4"><span class="nb-range">{_text(line)}</span></td></tr>'
                )
                continue
            if line.startswith("\\"):
                rows.append(f'<tr class="g"><td colspan="4">{_text(line[1:].strip())}</td></tr>')
                continue
            kind = {"-": "r", "+": "a"}.get(line[:1], "c")
            old = new = ""
            if kind in ("r", "c"):
                old, old_number = str(old_number), old_number + 1
            if kind in ("a", "c"):
                new, new_number = str(new_number), new_number + 1
            added += kind == "a"
            removed += kind == "r"
            marker = {"r": "-", "a": "+", "c": " "}[kind]
            rows.append(
                f'<tr class="{kind}"><td class="n">{old}</td><td class="n">{new}</td><td class="m">{marker}</td>'
                f"<td>{_kept_indent(_text(line[1:]))}</td></tr>"
            )
        head = (
            f'<div class="nb-file-head"><span class="nb-path">{_text(path)}</span> '
            f'<span class="nb-plus">+{added}</span> <span class="nb-minus">−{removed}</span></div>'
        )
        body = _table("".join(rows)) if rows else '<div class="nb-note">no text changes</div>'
        boxes.append(f'<div class="nb-file">{head}{body}</div>')
    return "".join(boxes)


def _file_head(summary: FileSummary, extra: list[str] | None = None) -> str:
    flags = []
    if summary.notebook:
        flags.append(_badge("notebook", "edited through its cell view", "nb-cell"))
    if summary.already_applied:
        flags.append(_badge("already applied", "every hunk's new text is already in the file", "nb-ok"))
    if summary.tiers_note:
        inexact = bool(summary.non_exact)
        flags.append(
            _badge(
                ("⚠ " if inexact else "") + summary.tiers_note,
                "; ".join(flag.describe() for flag in summary.non_exact)
                or "every hunk was found verbatim (score 1.00)",
                "" if inexact else "nb-ok",
            )
        )
    flags.extend(extra or ())
    # spaces between the pieces: a page that strips the style sheet would run them together
    return (
        f'<div class="nb-file-head"><span class="nb-path">{_text(summary.title)}</span> '
        f'<span class="nb-plus">+{summary.added}</span> <span class="nb-minus">−{summary.removed}</span> '
        f'<span class="nb-status">{_text(summary.status)}</span> {" ".join(flags)}</div>'
    )


def _file_body(file_plan: FilePlan, file_index: int, toggles: bool) -> str:
    view = cached_view(file_plan)
    parts = []
    for note in view.notes:
        parts.append(f'<div class="nb-note">{_text(note)}</div>')
    if file_plan.notebook and not any(note.startswith("clear_outputs") for note in view.notes):
        parts.append('<div class="nb-note nb-outputs">outputs are kept</div>')
    rows = []
    for section in view.sections:
        if isinstance(section, Gap):
            rows.append(_gap(section))
        else:
            rows.append(_block(section, file_index, toggles, file_plan))
    if rows:
        parts.append(_table("".join(rows)))
    elif not view.already_applied:
        parts.append('<div class="nb-note">no line changes</div>')
    return "".join(parts)


def _file(file_plan: FilePlan, file_index: int, toggles: bool) -> str:
    summary = summarize_file(file_plan)
    cells = _notebook_cells(file_plan)
    if cells is None:
        return f'<div class="nb-file">{_file_head(summary)}{_file_body(file_plan, file_index, toggles)}</div>'
    from nbedit.render.cells import structure_badges
    from nbedit.render.cells_html import notebook_body_html

    badges, notes = structure_badges(tuple(note for note in file_plan.notes if not note.startswith(_CLEARED)))
    head = _file_head(
        summary, [_badge(word, "the notebook's cells change", "nb-cellchange") for word in badges]
    )
    body = "".join(f'<div class="nb-note">{_text(note)}</div>' for note in notes)
    return (
        f'<div class="nb-file">{head}{body}{notebook_body_html(file_plan, cells, file_index, toggles)}</div>'
    )


_CLEARED = "clear_outputs"  # the planner's note when outputs are cleared


def _notebook_cells(file_plan: FilePlan) -> list[dict[str, Any]] | None:
    """A notebook plan's entries cell by cell (``cells.notebook_cells``), or None: not a notebook,
    or a view that does not read back as cells (drawn as lines then)."""
    if not file_plan.notebook or file_plan.display_before is None or file_plan.display_after is None:
        return None
    from nbedit.render.cells import cached_cells

    cleared = any(note.startswith(_CLEARED) for note in file_plan.notes)
    try:
        return cached_cells(file_plan, cleared)
    except NotebookError:
        return None


def _header(summary: PlanSummary) -> str:
    """The headline and every flagged hunk; each file's facts are in its own header below, once."""
    flags = [
        f"<li>{'ℹ' if flag.exact else '⚠'} {_text(file.path)}: {_text(flag.describe())}</li>"
        for file in summary.files
        for flag in file.flags
    ]
    flag_list = f'<ul class="nb-flags">{"".join(flags)}</ul>' if flags else ""
    return f'<div class="nb-head"><div class="nb-headline">{_text(summary.headline)}</div>{flag_list}</div>'


def plan_header_html(plan: Plan, *, style: bool = True) -> str:
    """The plan's header alone (files, +/-, flagged hunks), wrapped and (unless ``style=False``) styled."""
    return wrap(_header(summarize(plan)), style=style)


def file_to_html(
    file_plan: FilePlan, *, file_index: int = 0, include_toggles: bool = False, style: bool = True
) -> str:
    """One file's section, wrapped and (unless ``style=False``) styled."""
    return wrap(_file(file_plan, file_index, include_toggles), style=style)


def file_head_html(file_plan: FilePlan, *, style: bool = True) -> str:
    """One file's title bar (path, +/-, status, badges), wrapped and (unless ``style=False``) styled."""
    return wrap(f'<div class="nb-file">{_file_head(summarize_file(file_plan))}</div>', style=style)


def _hunk(block: Block, style: bool) -> str:
    return wrap(f'<div class="nb-file">{_table(_block(block))}</div>', style=style)


def hunk_to_html(file_plan: FilePlan, index: int, *, context: int = 3, style: bool = True) -> str:
    """One hunk with its context lines, for a widget that puts a toggle beside each hunk."""
    return _hunk(block_for_hunk(file_plan, index, context=context), style)


def hunks_to_html(file_plan: FilePlan, *, context: int = 3, style: bool = False) -> tuple[str, ...]:
    """``hunk_to_html`` for every hunk of the file in one pass; unstyled unless asked (see the module doc)."""
    return tuple(_hunk(block, style) for block in blocks_for_hunks(file_plan, context=context))


def plan_to_html(plan: Plan, *, include_toggles: bool = False) -> str:
    """The whole plan: header, then one section per file.

    ``include_toggles`` puts a checked checkbox in each hunk's header, carrying
    ``data-file``/``data-hunk`` indices, for hosts that wire them up; static
    output leaves it off.
    """
    summary = summarize(plan)
    files = "".join(_file(file_plan, index, include_toggles) for index, file_plan in enumerate(plan.files))
    return wrap(_header(summary) + files)
