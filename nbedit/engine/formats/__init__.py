"""One parser per change dialect, and ``detect`` to tell them apart.

Every parser is ``parse(text, *, default_path=None) -> Change`` and raises only
``PatchSyntaxError`` (with a 1-based line number and a hint) on bad input.

The dialects are kept in a small registry (``FORMATS``), the way jupytext
keeps notebook formats: each entry knows its name, a one-line description for
error hints, a cheap sniffer and its parser. Detection does not try parsers
in turn and keep the first that succeeds (a failed parse is the most useful
error a user can get, and a lenient parser "succeeding" on the wrong dialect
is how edits land in the wrong place). Instead each sniffer reports the first
line that only its dialect would have, and the dialect whose marker comes
first wins: a SEARCH/REPLACE block that edits a diff file starts with
``<<<<<<< SEARCH``, a diff that adds a file full of SEARCH blocks starts with
``diff --git``.

Only the unified reader is imported with this module: ``nbedit apply`` is
started once per edit, and most changes are diffs. The other dialects'
modules are imported when their sniffer's first, C-level test finds their
marker string in the text (``*** Begin Patch``; ``<<<<<`` with ``SEARCH`` or
``ORIGINAL``) or when their parser is asked for.
"""

from __future__ import annotations

from nbedit._dataclass import dataclass
from nbedit.engine.formats import unified
from nbedit.engine.models import Change
from nbedit.errors import PatchSyntaxError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FORMATS", "FormatDescription", "detect", "dialect_names", "parse"]


@dataclass(frozen=True, slots=True)
class FormatDescription:
    """A change dialect: how to recognise it and how to parse it."""

    name: str
    description: str
    marker_line: Callable[[str], int | None]
    parse: Callable[..., Change]

    def looks_like(self, text: str) -> bool:
        return self.marker_line(text) is not None


def _apply_patch_marker_line(text: str) -> int | None:
    if "*** Begin Patch" not in text:  # apply_patch.marker_line's own first test
        return None
    from nbedit.engine.formats import apply_patch

    return apply_patch.marker_line(text)


def _apply_patch_parse(text: str, *, default_path: str | None = None) -> Change:
    from nbedit.engine.formats import apply_patch

    return apply_patch.parse(text, default_path=default_path)


def _search_replace_marker_line(text: str) -> int | None:
    if "<<<<<" not in text or ("SEARCH" not in text and "ORIGINAL" not in text):  # its own first test
        return None
    from nbedit.engine.formats import search_replace

    return search_replace.marker_line(text)


def _search_replace_parse(text: str, *, default_path: str | None = None) -> Change:
    from nbedit.engine.formats import search_replace

    return search_replace.parse(text, default_path=default_path)


FORMATS: tuple[FormatDescription, ...] = (
    FormatDescription(
        name=unified.DIALECT,
        description="unified diff ('--- a/f', '+++ b/f', '@@ -1,2 +1,2 @@'; diff -u, git diff)",
        marker_line=unified.marker_line,
        parse=unified.parse,
    ),
    FormatDescription(
        name="apply_patch",
        description="Codex patch ('*** Begin Patch', '*** Update File: f', '@@', '*** End Patch')",
        marker_line=_apply_patch_marker_line,
        parse=_apply_patch_parse,
    ),
    FormatDescription(
        name="search_replace",
        description="SEARCH/REPLACE blocks (path line, '<<<<<<< SEARCH', '=======', '>>>>>>> REPLACE')",
        marker_line=_search_replace_marker_line,
        parse=_search_replace_parse,
    ),
)

_BY_NAME = {description.name: description for description in FORMATS}
_ALIASES = {
    "diff": unified.DIALECT,
    "git": unified.DIALECT,
    "udiff": unified.DIALECT,
    "apply-patch": "apply_patch",
    "codex": "apply_patch",
    "search-replace": "search_replace",
    "aider": "search_replace",
}


def dialect_names() -> tuple[str, ...]:
    return tuple(description.name for description in FORMATS)


def _supported() -> str:
    return "supported dialects: " + "; ".join(f"{d.name}: {d.description}" for d in FORMATS)


def detect(text: str) -> str:
    """The name of the dialect ``text`` is written in; ``PatchSyntaxError`` if none fits."""
    found = []
    for description in FORMATS:
        position = description.marker_line(text)
        if position == 0:
            return description.name  # a marker line is one dialect's only: no other can start here
        if position is not None:
            found.append((position, description.name))
    if not found:
        raise PatchSyntaxError(
            "the text is not a change in any supported dialect"
            + (" (it is empty)" if not text.strip() else ""),
            hint=_supported(),
        )
    return min(found)[1]


def _lookup(dialect: str) -> FormatDescription:
    name = _ALIASES.get(dialect.strip().lower(), dialect.strip().lower())
    if name not in _BY_NAME:
        raise PatchSyntaxError(f"unknown dialect {dialect!r}", hint=_supported())
    return _BY_NAME[name]


def parse(text: str, *, dialect: str | None = None, default_path: str | None = None) -> Change:
    """Parse change text; the dialect is detected unless given.

    A ``PatchSyntaxError`` that names a line of the text also quotes it, so the
    message shows what was read there, not only where.
    """
    description = _lookup(dialect) if dialect is not None else _BY_NAME[detect(text)]
    try:
        return description.parse(text, default_path=default_path)
    except PatchSyntaxError as error:
        raise _quoting(error, text) from None


def _quoting(error: PatchSyntaxError, text: str) -> PatchSyntaxError:
    """``error`` with the line it names quoted, when its message does not show that line already."""
    if error.line is None:
        return error
    lines = text.split("\n")
    if not 1 <= error.line <= len(lines):
        return error
    line = lines[error.line - 1].rstrip("\r")
    shown = line.strip()
    first = error.template.split("\nhint: ", 1)[0]
    prefix = f"cannot parse {error.dialect + ' ' if error.dialect else ''}change: line {error.line}: "
    if not shown or shown[:40] in first or not first.startswith(prefix):
        return error
    quote = line if len(line) <= 80 else line[:77] + "..."
    quoted = PatchSyntaxError(
        f"{first[len(prefix) :]} (line {error.line} reads {quote!r})",
        line=error.line,
        hint=error.hint_template,
        dialect=error.dialect,
        path=error.path,
    )
    return quoted
