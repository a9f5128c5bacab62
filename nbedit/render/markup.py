"""The small pieces of markup every static HTML renderer shares: escaped text, badges, the diff
table, indentation that survives a page without styles, and a hunk's "Why here?" disclosure.

Kept apart from ``html`` (the plan's layout) so the notebook renderer (``cells_html``) can
draw with the same pieces without the two layouts importing each other.

What a stripped page keeps decides the shapes here: GitHub drops ``<style>`` and every
``style`` and ``class`` attribute, so whatever must still read (indentation, spaces between a
header's pieces, a disclosure) is carried by the text and by elements that have a meaning of
their own (``<details>``, ``<b>``, no-break spaces), never by a class alone.
"""

from __future__ import annotations

import re
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbedit.engine.explain import Reason
    from nbedit.engine.models import FilePlan

__all__ = ["attribute", "badge", "hunk_why_html", "kept_indent", "table", "text", "why_html"]

_INDENT = re.compile(r"^[ \t]+")


def text(value: str) -> str:
    return escape(value, quote=False)


def attribute(value: str) -> str:
    return escape(value, quote=True)


def badge(label: str, title: str, kind: str = "") -> str:
    css = f"nb-badge {kind}".strip()
    return f'<span class="{css}" title="{attribute(title)}">{text(label)}</span>'


def kept_indent(markup: str) -> str:
    """Leading spaces and tabs as no-break spaces: where a page strips the style sheet (GitHub
    drops ``style`` and ``class``), a cell's white-space rule goes with it and indentation would
    collapse; no-break spaces keep it. (A tab shows as four.)"""
    found = _INDENT.match(markup)
    if found is None:
        return markup
    width = sum(4 if character == "\t" else 1 for character in found.group())
    return "\u00a0" * width + markup[found.end() :]


def table(body: str, css: str = "nb-diff") -> str:
    return f'<div class="nb-scroll"><table class="{css}">{body}</table></div>'


def why_html(reason: Reason, comparison_label: str) -> str:
    """A hunk's "Why here?" as a closed ``<details>``: the summary line, the score, the rows; the
    comparison row's whitespace-only lines with their spaces and tabs made visible."""
    from nbedit.engine.explain import visible_whitespace

    marked = set(reason.whitespace)

    def cell(label: str, value: str) -> str:
        if label != comparison_label and "\n" not in value:
            return text(value)
        comparison = label == comparison_label
        shown = []
        for number, line in enumerate(value.split("\n")):
            if comparison and number in marked:
                visible = text(visible_whitespace(line))
                shown.append(f'<span class="nb-ws" title="· is a space, → a tab">{visible}</span>')
            elif comparison:  # "-", "+" or " ", then the line: its indentation kept after the marker
                shown.append(text(line[:1]) + kept_indent(text(line[1:])))
            else:
                shown.append(kept_indent(text(line)))
        # one <br> per line and no-break indentation: the lines hold without a white-space rule
        return "<br>".join(shown)

    rows = [("score", f"{reason.score:.2f} ({reason.score_label})"), *reason.rows]
    body = "".join(
        f"<tr><th>{text(label)}</th><td><code>{cell(label, value)}</code></td></tr>" for label, value in rows
    )
    summary = f'<p class="nb-why-summary">{text(reason.summary)}</p>'
    rows_table = f'<table class="nb-why-table">{body}</table>'
    return f'<details class="nb-why"><summary>Why here?</summary>{summary}{rows_table}</details>'


def hunk_why_html(file_plan: FilePlan, index: int) -> str:
    """Hunk ``index``'s "Why here?"; none for a plain exact match (nothing was decided there)."""
    located = file_plan.hunks[index]
    if located.match.exact and not located.match.explanation:
        return ""
    from nbedit.engine.explain import COMPARISON_LABEL, cell_place, found_text, reason

    shown = reason(located, found_text(file_plan, located), cell_place(file_plan, located))
    return why_html(shown, COMPARISON_LABEL)
