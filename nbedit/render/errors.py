"""An ``NbeditError`` drawn for a person: HTML panel for notebooks, rich panel for the terminal.

The error's message already says what happened and what to do next; this
module lays out the structured facts the subclasses carry so they can be read
at a glance: the closest candidates of a ``NoMatch`` with their small diffs
coloured, the locations of an ``AmbiguousMatch``, the line and hint of a
``PatchSyntaxError``, what changed on disk for a ``StaleFile``. ``error_facts``
is the one place that decides what is shown; the two renderers only draw it.
"""

from __future__ import annotations

from html import escape

from nbedit._dataclass import dataclass
from nbedit.errors import AmbiguousMatch, NbeditError, NoMatch, PatchSyntaxError, StaleFile, spell
from nbedit.render.html import unified_diff_html, wrap

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.console import RenderableType

    from nbedit.errors import Surface

__all__ = ["ErrorFacts", "error_facts", "error_panel", "error_to_html"]


@dataclass(frozen=True, slots=True)
class ErrorFacts:
    kind: str  # the class name: NoMatch, AmbiguousMatch, ...
    path: str | None
    message: str  # the message without the parts shown as structure below
    details: tuple[tuple[str, str], ...] = ()  # (label, value) pairs: line, hint, tier
    diffs: tuple[tuple[str, str], ...] = ()  # (caption, unified diff) pairs
    locations: tuple[str, ...] = ()
    advice: str | None = None


def _before(text: str, marker: str) -> tuple[str, str]:
    head, found, tail = text.partition(marker)
    return head, (found + tail if found else "")


def error_facts(error: NbeditError, surface: Surface = "python") -> ErrorFacts:
    """Split an error into its message and the structured parts to draw.

    ``surface`` spells the options the message names (``--replace-all`` on the
    command line, ``replace_all=True`` in Python).
    """
    kind = type(error).__name__
    message = error.spelled(surface)
    if isinstance(error, NoMatch):
        if error.candidates:
            message, _ = _before(message, "\nclosest candidates")
            return ErrorFacts(
                kind,
                error.path,
                message,
                diffs=tuple((candidate.describe(), candidate.diff) for candidate in error.candidates),
                advice="fix the old text so it matches one of these exactly (copy it from the file), then retry",
            )
        message, rest = _before(message, "\nnothing in the file is close")
        return ErrorFacts(kind, error.path, message, advice=rest.strip() or None)
    if isinstance(error, AmbiguousMatch):
        message, rest = _before(message, "\nmatches at (line:col)")
        advice = rest.strip().split("\n")[-1] if rest else None
        return ErrorFacts(
            kind,
            error.path,
            message,
            details=(("matched by", error.tier),) if error.tier else (),
            # a notebook's message names each cell and its line; cell-view line numbers would only confuse
            locations=()
            if error.cells
            else tuple(f"line {line}, column {column}" for line, column in error.locations),
            advice=advice,
        )
    if isinstance(error, PatchSyntaxError):
        message, _ = _before(message, "\nhint:")
        details: list[tuple[str, str]] = []
        if error.line is not None:
            details.append(("line", str(error.line)))
        if error.dialect:
            details.append(("format", error.dialect))
        if error.hint_template:
            details.append(("hint", spell(error.hint_template, surface)))
        return ErrorFacts(kind, error.path, message, details=tuple(details))
    if isinstance(error, StaleFile) and error.diff:
        message, rest = _before(message, "\nwhat changed on disk since the preview:")
        advice = rest.strip().split("\n")[-1] if rest else None
        return ErrorFacts(
            kind, error.path, message, diffs=(("what changed on disk", error.diff),), advice=advice
        )
    return ErrorFacts(kind, error.path, message)


# --- HTML -----------------------------------------------------------------------------------------


def _escape(text: str) -> str:
    return escape(text, quote=False)


def error_to_html(error: NbeditError, surface: Surface = "magic") -> str:
    """A self-contained HTML panel: kind and path as title, message, structured parts."""
    facts = error_facts(error, surface)
    title = _escape(facts.kind) + (
        f" · <span class='nb-path'>{_escape(facts.path)}</span>" if facts.path else ""
    )
    parts = [
        f'<div class="nb-error-title">✖ {title}</div>',
        f'<div class="nb-error-message">{_escape(facts.message)}</div>',
    ]
    if facts.details:
        items = "".join(
            f"<li><b>{_escape(label)}</b>: {_escape(value)}</li>" for label, value in facts.details
        )
        parts.append(f"<ul>{items}</ul>")
    if facts.locations:
        items = "".join(f"<li>{_escape(location)}</li>" for location in facts.locations[:50])
        more = len(facts.locations) - 50
        extra = f"<li>… and {more} more</li>" if more > 0 else ""
        parts.append(f"<div>matches at:</div><ul>{items}{extra}</ul>")
    for caption, diff in facts.diffs:
        parts.append(f'<div class="nb-error-caption">{_escape(caption)}</div>{unified_diff_html(diff)}')
    if facts.advice:
        parts.append(f'<div class="nb-error-advice">→ {_escape(facts.advice)}</div>')
    return wrap(f'<div class="nb-error">{"".join(parts)}</div>')


# --- rich -----------------------------------------------------------------------------------------


def error_panel(error: NbeditError, surface: Surface = "cli") -> RenderableType:
    """A rich panel with the same parts as ``error_to_html``; no text is read as rich markup."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    from nbedit.render.terminal import unified_diff_text

    facts = error_facts(error, surface)
    parts: list[RenderableType] = [Text(facts.message)]
    for label, value in facts.details:
        line = Text()
        line.append(f"{label}: ", style="bold")
        line.append(value)
        parts.append(line)
    if facts.locations:
        parts.append(Text("matches at:", style="bold"))
        shown = facts.locations[:50]
        parts.extend(Text(f"  {location}") for location in shown)
        if len(facts.locations) > len(shown):
            parts.append(Text(f"  … and {len(facts.locations) - len(shown)} more"))
    for caption, diff in facts.diffs:
        parts.append(Text(caption, style="bold"))
        parts.append(unified_diff_text(diff, indent="    "))
    if facts.advice:
        parts.append(Text(f"→ {facts.advice}", style="yellow"))
    # A Text title: a path such as app/[slug]/page.tsx must never be read as markup.
    title = Text(facts.kind + (f": {facts.path}" if facts.path else ""))
    return Panel(Group(*parts), title=title, title_align="left", border_style="red", expand=False)
