"""A plan as self-contained HTML: one ``<div>`` with its own ``<style>``, no scripts, no assets.

The same string serves the review widget, a plain ``text/html`` output that
survives nbconvert, and any page that strips styles: every rule is scoped under
``.nbedit-view`` so nothing leaks into the notebook, colours come from
JupyterLab's CSS variables with fallbacks, and diff colours are translucent so
they read on light and dark themes alike. Without any CSS at all the table still
reads as a diff, because the ``-``/``+`` markers and line numbers are text.

Size matters (a big plan must not freeze the browser), so rows are terse table
markup and long unchanged stretches are collapsed to a single row. A host that
shows many pieces side by side (the review widget: one piece per hunk) emits
the style sheet once (``STYLE_TAG``) and asks for the pieces with
``style=False``: a ``<style>`` element applies to the whole page, and 1,000
copies of it were 3.5 MB of a 4.8 MB widget.
"""

from __future__ import annotations

from html import escape

from nbedit.engine.models import FilePlan, Plan, Tier
from nbedit.render.rows import Block, Gap, Row, block_for_hunk, blocks_for_hunks, offset_note, tier_label
from nbedit.render.summary import FileSummary, PlanSummary, cached_view, summarize, summarize_file

__all__ = [
    "STYLE",
    "STYLE_TAG",
    "file_head_html",
    "file_to_html",
    "hunk_to_html",
    "hunks_to_html",
    "plan_header_html",
    "plan_to_html",
    "wrap",
]

ROOT_CLASS = "nbedit-view"

STYLE = """
.nbedit-view{color:var(--jp-ui-font-color1,currentColor);background:var(--jp-layout-color1,transparent);
font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:var(--jp-ui-font-size1,13px);line-height:1.4}
.nbedit-view .nb-head{margin:0 0 6px 0}
.nbedit-view .nb-headline{font-weight:600}
.nbedit-view .nb-files{margin:2px 0 0 0;padding-left:18px}
.nbedit-view .nb-flags{margin:2px 0 0 0;padding-left:18px;color:var(--jp-ui-font-color1,currentColor)}
.nbedit-view .nb-file{border:1px solid var(--jp-border-color2,rgba(128,128,128,.35));border-radius:4px;
margin:6px 0;overflow:hidden}
.nbedit-view .nb-file-head{padding:4px 8px;background:rgba(128,128,128,.10);
border-bottom:1px solid var(--jp-border-color2,rgba(128,128,128,.35))}
.nbedit-view .nb-path{font-family:var(--jp-code-font-family,ui-monospace,Menlo,Consolas,monospace);font-weight:600}
.nbedit-view .nb-plus{color:rgb(46,160,67);margin-left:8px}
.nbedit-view .nb-minus{color:rgb(218,54,51);margin-left:4px}
.nbedit-view .nb-status{margin-left:8px;opacity:.75}
.nbedit-view .nb-badge{display:inline-block;padding:0 6px;margin-left:6px;border-radius:8px;font-size:90%;
background:rgba(210,153,34,.22);border:1px solid rgba(210,153,34,.8)}
.nbedit-view .nb-badge.nb-ok{background:rgba(46,160,67,.15);border-color:rgba(46,160,67,.6)}
.nbedit-view .nb-badge.nb-cell{background:rgba(56,139,253,.15);border-color:rgba(56,139,253,.6)}
.nbedit-view .nb-scroll{overflow-x:auto}
.nbedit-view table.nb-diff{border-collapse:collapse;width:100%;margin:0;border:0;color:inherit;
font-family:var(--jp-code-font-family,ui-monospace,Menlo,Consolas,monospace);font-size:var(--jp-code-font-size,12px)}
.nbedit-view table.nb-diff td{padding:0 6px;border:0;white-space:pre;tab-size:4;text-align:left;vertical-align:top;
background:transparent;color:inherit}
.nbedit-view table.nb-diff td.n{width:1%;text-align:right;opacity:.55;user-select:none}
.nbedit-view table.nb-diff td.m{width:1%;padding:0 2px;user-select:none;opacity:.8}
.nbedit-view table.nb-diff tr.r td{background:rgba(248,81,73,.15)}
.nbedit-view table.nb-diff tr.a td{background:rgba(46,160,67,.15)}
.nbedit-view table.nb-diff tr.r .w{background:rgba(248,81,73,.45);border-radius:2px}
.nbedit-view table.nb-diff tr.a .w{background:rgba(46,160,67,.45);border-radius:2px}
.nbedit-view table.nb-diff tr.g td{background:rgba(128,128,128,.08);font-style:italic;opacity:.75;
text-align:center;font-family:var(--jp-ui-font-family,system-ui,sans-serif)}
.nbedit-view table.nb-diff tr.h td{background:rgba(56,139,253,.10);white-space:normal;
font-family:var(--jp-ui-font-family,system-ui,sans-serif)}
.nbedit-view .nb-note{padding:4px 8px;opacity:.8}
.nbedit-view .nb-toggle{margin:0 6px 0 0;vertical-align:middle}
.nbedit-view .nb-error{border-left:4px solid rgb(218,54,51);background:rgba(248,81,73,.08);padding:6px 10px;
border-radius:2px}
.nbedit-view .nb-error-title{font-weight:600;margin-bottom:4px}
.nbedit-view .nb-error-message{white-space:pre-wrap}
.nbedit-view .nb-error-caption{margin-top:6px;font-weight:600}
.nbedit-view .nb-error-advice{margin-top:6px}
.nbedit-view .nb-error ul{margin:2px 0;padding-left:18px}
.nbedit-view table.nb-history{border-collapse:collapse;color:inherit}
.nbedit-view table.nb-history th,.nbedit-view table.nb-history td{padding:2px 8px;text-align:left;
border-bottom:1px solid var(--jp-border-color2,rgba(128,128,128,.35));background:transparent;color:inherit}
.nbedit-view table.nb-history td.num{text-align:right;font-variant-numeric:tabular-nums}
"""

STYLE_TAG = f"<style>{STYLE.strip()}</style>"


def wrap(body: str, *, style: bool = True) -> str:
    """Put rendered pieces inside the scoped root, with the style sheet unless ``style=False``."""
    return f'<div class="{ROOT_CLASS}">{STYLE_TAG if style else ""}{body}</div>'


def _text(value: str) -> str:
    return escape(value, quote=False)


def _attribute(value: str) -> str:
    return escape(value, quote=True)


def _badge(label: str, title: str, kind: str = "") -> str:
    css = f"nb-badge {kind}".strip()
    return f'<span class="{css}" title="{_attribute(title)}">{_text(label)}</span>'


def _tier_badge(tier: Tier, score: float) -> str:
    if tier is Tier.EXACT:
        return ""
    explanation = tier.explanation + (f" (similarity {score:.2f})" if tier is Tier.FUZZY else "")
    return _badge("⚠ " + tier_label(tier, score), explanation)


def _row(row: Row) -> str:
    css = {"context": "c", "removed": "r", "added": "a"}[row.kind]
    old = "" if row.old_line is None else str(row.old_line)
    new = "" if row.new_line is None else str(row.new_line)
    text = "".join(
        f'<span class="w">{_text(segment.text)}</span>' if segment.changed else _text(segment.text)
        for segment in row.segments
    )
    return f'<tr class="{css}"><td class="n">{old}</td><td class="n">{new}</td><td class="m">{row.marker}</td><td>{text}</td></tr>'


def _gap(gap: Gap) -> str:
    lines = "line" if gap.count == 1 else "lines"
    return f'<tr class="g"><td colspan="4">⋯ {gap.count} unchanged {lines}</td></tr>'


def _block_header(block: Block, file_index: int | None, toggles: bool) -> str:
    pieces = []
    if toggles and file_index is not None:
        for hunk_index in block.hunk_indices:
            pieces.append(
                f'<input type="checkbox" class="nb-toggle" checked data-file="{file_index}" '
                f'data-hunk="{hunk_index}" title="include hunk {hunk_index + 1}">'
            )
    if block.hunk_indices:
        numbers = ", ".join(str(index + 1) for index in block.hunk_indices)
        pieces.append(f"hunk {numbers}" if len(block.hunk_indices) == 1 else f"hunks {numbers}")
    if block.cell:
        pieces.append(_badge(block.cell, "notebook cell", "nb-cell"))
    pieces.append(_tier_badge(block.tier, block.score))
    note = offset_note(block.offset)
    if note:
        pieces.append(_badge(note, "the hunk's context was found at a different line", ""))
    header = " ".join(piece for piece in pieces if piece)
    return f'<tr class="h"><td colspan="4">{header}</td></tr>' if header else ""


def _block(block: Block, file_index: int | None = None, toggles: bool = False) -> str:
    parts = [_block_header(block, file_index, toggles)]
    parts.extend(_row(row) for row in block.rows)
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


def _table(body: str) -> str:
    return f'<div class="nb-scroll"><table class="nb-diff">{body}</table></div>'


def _file_head(summary: FileSummary) -> str:
    flags = []
    if summary.notebook:
        flags.append(_badge("notebook", "edited through its cell view", "nb-cell"))
    if summary.already_applied:
        flags.append(_badge("already applied", "every hunk's new text is already in the file", "nb-ok"))
    for flag in summary.non_exact:
        flags.append(_badge("⚠ " + flag.label, flag.describe()))
    return (
        f'<div class="nb-file-head"><span class="nb-path">{_text(summary.title)}</span>'
        f'<span class="nb-plus">+{summary.added}</span><span class="nb-minus">-{summary.removed}</span>'
        f'<span class="nb-status">{_text(summary.status)}</span>{"".join(flags)}</div>'
    )


def _file_body(file_plan: FilePlan, file_index: int, toggles: bool) -> str:
    view = cached_view(file_plan)
    parts = []
    for note in view.notes:
        parts.append(f'<div class="nb-note">{_text(note)}</div>')
    rows = []
    for section in view.sections:
        if isinstance(section, Gap):
            rows.append(_gap(section))
        else:
            rows.append(_block(section, file_index, toggles))
    if rows:
        parts.append(_table("".join(rows)))
    elif not view.already_applied:
        parts.append('<div class="nb-note">no line changes</div>')
    return "".join(parts)


def _file(file_plan: FilePlan, file_index: int, toggles: bool) -> str:
    summary = summarize_file(file_plan)
    return f'<div class="nb-file">{_file_head(summary)}{_file_body(file_plan, file_index, toggles)}</div>'


def _header(summary: PlanSummary) -> str:
    items = []
    for file in summary.files:
        hunks = "1 hunk" if file.hunk_count == 1 else f"{file.hunk_count} hunks"
        detail = f"{file.status}, {hunks} ({file.tiers_note})" if file.hunk_count else file.status
        items.append(
            f'<li><span class="nb-path">{_text(file.title)}</span>'
            f'<span class="nb-plus">+{file.added}</span><span class="nb-minus">-{file.removed}</span>'
            f'<span class="nb-status">{_text(detail)}</span></li>'
        )
    flags = [
        f"<li>{'ℹ' if flag.exact else '⚠'} {_text(file.path)}: {_text(flag.describe())}</li>"
        for file in summary.files
        for flag in file.flags
    ]
    flag_list = f'<ul class="nb-flags">{"".join(flags)}</ul>' if flags else ""
    return (
        f'<div class="nb-head"><div class="nb-headline">{_text(summary.headline)}</div>'
        f'<ul class="nb-files">{"".join(items)}</ul>{flag_list}</div>'
    )


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
