"""A diff of a notebook's raw JSON, applied as JSON.

``git diff`` on an ``.ipynb`` prints a diff of the file's JSON text, and that is
what people commit, review and paste. Such a diff is not a diff of the cell view,
so it is located in the raw text instead, with strict tiers only: the exact text,
then ignoring line endings, then ignoring trailing whitespace. A locator (the
line number of a unified diff, corrected by the offset earlier hunks were found
at) decides only when the hunk is exactly there; anywhere else the hunk must be
unique, because notebook JSON repeats the same lines in every cell and "the
nearest one" would be a guess about which cell is meant. Never fuzzy and never re-indented: in JSON the indentation is
part of the bytes nbformat writes, and "similar enough" JSON is a different
notebook.

Which text a file's hunks are matched against is decided once per file, by data,
not by guessing:

* every hunk's old text is found in the raw text (and at least one hunk has old
  text) -> the raw text;
* a hunk that *looks like* notebook JSON (``"cell_type": ...``, a source line
  written as ``"    x = 1\\n",``) but is not in the raw text -> only the exact tier
  on the cell view, else refused with a message saying the diff does not match
  the notebook's JSON;
* otherwise -> the cell view, as before.

The patched text must still be a notebook that nbformat validates (when the
original was valid), or nothing is written. The plan's bytes are exactly the
patched raw text; its preview is the cell-view diff of the two notebooks plus a
note naming what changed outside the cell view (outputs, metadata).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from nbedit._dataclass import dataclass
from nbedit.engine.models import FileChange, FilePlan, Hunk, Tier, digested_when_read
from nbedit.engine.notebook.raw_check import check_notebook
from nbedit.engine.text import (
    decode,
    dominant_newline,
    encode,
    fingerprint,
    newline_of,
    split_lines,
    strip_newline,
)
from nbedit.errors import AmbiguousMatch, NotebookError, OverlappingHunks

__all__ = [
    "RAW_NOTE",
    "RawDecision",
    "RawMatch",
    "looks_like_notebook_json",
    "plan_raw",
]

RAW_NOTE = "applied to the notebook's JSON (the diff is a diff of the raw .ipynb text)"
_UNCHANGED = "the file was not changed"
_RAW_TIERS = (Tier.EXACT, Tier.LINE_ENDINGS, Tier.TRAILING_WHITESPACE)
_NOTEBOOK_KEY = re.compile(
    r'^\s*"(cell_type|source|outputs|metadata|execution_count|nbformat|nbformat_minor|output_type'
    r'|kernelspec|language_info|attachments)"\s*:'
)
_SOURCE_LINE = re.compile(r'^\s{3,}"(?:[^"\\]|\\.)*",?\s*$')  # an element of a source or text list


@dataclass(frozen=True, slots=True)
class RawMatch:
    """Where one hunk landed in the raw text: ``text[start:end]`` becomes ``replacement``."""

    hunk: Hunk
    number: int  # the hunk's position in the diff, 0-based
    start: int
    end: int
    replacement: str
    tier: Tier
    line: int  # 1-based
    offset: int | None  # lines away from the hunk's claimed start line


def looks_like_notebook_json(hunk: Hunk) -> bool:
    """Whether a hunk's lines are notebook JSON (members of a cell, quoted source lines).

    A notebook member key (``"cell_type":``, ``"source":`` ...) anywhere decides;
    otherwise at least half of the non-blank lines must be indented JSON strings, the
    elements of a source list (``    "x = 1\\n",``, ``    "print(x)"``). A code line that
    is only a string in a list looks the same; such a hunk is then matched on the cell
    view by the exact tier only, which is the safe side: a JSON line is never matched
    leniently into a cell.
    """
    lines = [line for line in (hunk.old + hunk.new).splitlines() if line.strip()]
    if not lines:
        return False
    if any(_NOTEBOOK_KEY.match(line) for line in lines):
        return True
    quoted = sum(1 for line in lines if _SOURCE_LINE.match(line))
    return quoted * 2 >= len(lines)


# -- locating ---------------------------------------------------------------------------------


class _RawText:
    """The raw text split into lines once, with an index per tier for candidate starts."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = split_lines(text)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self._keys: dict[Tier, list[str]] = {}
        self._positions: dict[Tier, dict[str, list[int]]] = {}

    def keys(self, tier: Tier) -> list[str]:
        if tier not in self._keys:
            self._keys[tier] = [_key(line, tier) for line in self.lines]
        return self._keys[tier]

    def positions(self, tier: Tier) -> dict[str, list[int]]:
        if tier not in self._positions:
            positions: dict[str, list[int]] = {}
            for number, key in enumerate(self.keys(tier)):
                positions.setdefault(key, []).append(number)
            self._positions[tier] = positions
        return self._positions[tier]


def _key(line: str, tier: Tier) -> str:
    """A line as a tier compares it (the newline is part of the exact key)."""
    if tier is Tier.EXACT:
        return line
    body = strip_newline(line)
    ended = "\n" if line.endswith("\n") else ""
    if tier is Tier.LINE_ENDINGS:
        return body + ended
    return body.rstrip(" \t\r\f\v") + ended


def _hits(raw: _RawText, old_lines: Sequence[str], tier: Tier, low: int, at_end: bool) -> list[int]:
    """First lines (0-based, >= ``low``) where ``old_lines`` occur at ``tier``."""
    keys = [_key(line, tier) for line in old_lines]
    positions = raw.positions(tier)
    pivot = min(range(len(keys)), key=lambda number: len(positions.get(keys[number], ())))
    file_keys = raw.keys(tier)
    found: list[int] = []
    for position in positions.get(keys[pivot], ()):
        first = position - pivot
        if first < low or first + len(keys) > len(file_keys):
            continue
        if file_keys[first : first + len(keys)] != keys:
            continue
        if at_end and first + len(keys) != len(file_keys):
            continue
        found.append(first)
    return found


class _Outcome:
    """Per hunk: a match, ``"absent"`` or ``"ambiguous"`` (with the lines it occurs at)."""

    def __init__(self) -> None:
        self.matches: list[RawMatch] = []
        self.absent: list[int] = []  # hunk numbers
        self.ambiguous: list[tuple[int, list[int]]] = []
        self.unverified: list[int] = []  # insertions without context where the file has moved


def _check_insertions(hunks: Sequence[Hunk], outcome: _Outcome) -> None:
    """An insertion without context lines is placed by its line number alone; trust it only
    when the hunks with old text after it were found as far from their line numbers as the
    offset it was placed with (the file has not moved around it)."""
    drifts = {  # hunk number -> how far from its claimed line it was found
        match.number: match.line - match.hunk.start_line
        for match in outcome.matches
        if match.hunk.start_line is not None
    }
    for match in outcome.matches:
        if match.hunk.old or match.hunk.start_line is None:
            continue
        later = [drifts[other] for other in sorted(drifts) if other > match.number and hunks[other].old]
        if later and later[0] != drifts[match.number]:
            outcome.unverified.append(match.number)


def _anchor_floor(raw: _RawText, hunk: Hunk, low: int) -> int | None:
    """The line after the hunk's apply_patch anchors (each found once, in order); None: not found."""
    for anchor in hunk.anchors:
        wanted = anchor.strip()
        lines = [number for number in range(low, len(raw.lines)) if raw.lines[number].strip() == wanted]
        if len(lines) != 1:
            return None
        low = lines[0] + 1
    return low


def _locate(raw: _RawText, hunks: Sequence[Hunk], tiers: Sequence[Tier] = _RAW_TIERS) -> _Outcome:
    outcome = _Outcome()
    carried = 0
    previous_end = 0
    for number, hunk in enumerate(hunks):
        low = previous_end if hunk.search_from_previous else 0
        if hunk.anchors:
            floor = _anchor_floor(raw, hunk, low)
            if floor is None:
                outcome.absent.append(number)
                continue
            low = floor
        near = hunk.start_line + carried if hunk.start_line is not None else None
        old_lines = split_lines(hunk.old)
        if not old_lines:
            if near is None or not 1 <= near <= len(raw.lines) + 1:
                outcome.absent.append(number)
                continue
            start = raw.starts[near - 1]
            outcome.matches.append(
                RawMatch(hunk, number, start, start, _adapt(hunk.new, raw, near - 1), Tier.EXACT, near, 0)
            )
            continue
        for tier in tiers:
            hits = _hits(raw, old_lines, tier, low, hunk.at_end)
            if hits:
                break
        if not hits:
            outcome.absent.append(number)
            continue
        # A line number decides only where the hunk is exactly (after the offset the previous
        # hunks carried); elsewhere the hunk must be unique. Notebook JSON repeats lines like
        # '   },' and '"execution_count": null,' in every cell, so "the nearest one" would be a
        # guess about which cell is meant.
        chosen = [first for first in hits if near is not None and first + 1 == near] or hits
        if len(chosen) > 1:
            outcome.ambiguous.append((number, [first + 1 for first in chosen]))
            continue
        first = chosen[0]
        start, end = raw.starts[first], raw.starts[first + len(old_lines)]
        offset = first + 1 - near if near is not None else None
        if offset is not None and hunk.start_line is not None:
            carried = first + 1 - hunk.start_line
        replacement = hunk.new if tier is Tier.EXACT else _transport(raw, first, old_lines, hunk.new)
        outcome.matches.append(RawMatch(hunk, number, start, end, replacement, tier, first + 1, offset))
        previous_end = first + len(old_lines)
    return outcome


def _adapt(new: str, raw: _RawText, line: int) -> str:
    """New lines in the newline style of the raw text (inserted at 0-based ``line``)."""
    newline = dominant_newline(raw.text)
    if newline == "\n":
        return new
    return "".join(strip_newline(part) + newline if newline_of(part) else part for part in split_lines(new))


def _transport(raw: _RawText, first: int, old_lines: Sequence[str], new: str) -> str:
    """The change old -> new written onto file lines that match old only up to line ends.

    Lines old and new share identically are taken from the file; every other line
    is the new text's own, in the file's newline style.
    """
    new_lines = split_lines(new)
    file_lines = raw.lines[first : first + len(old_lines)]
    newline = newline_of(file_lines[0]) or dominant_newline(raw.text)
    pieces: list[str] = []
    import difflib  # only a raw JSON diff needs it: not imported on the cell view's path

    matcher = difflib.SequenceMatcher(a=list(old_lines), b=new_lines, autojunk=False)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag == "equal":
            pieces.extend(file_lines[old_start:old_end])
            continue
        for line in new_lines[new_start:new_end]:
            pieces.append(strip_newline(line) + newline if newline_of(line) else line)
    return "".join(pieces)


# -- planning ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RawDecision:
    """What the raw text says about a file's hunks (see the module docstring)."""

    plan: FilePlan | None  # the raw plan, when every hunk is in the raw text
    json_like: bool  # some hunk looks like notebook JSON


def plan_raw(
    path: str,
    data: bytes,
    change: FileChange,
    *,
    before_view: str,
    mode: int | None,
    exact: bool = False,
    digest: Callable[[], str] | None = None,
) -> RawDecision:
    """Plan ``change`` on the raw text when its hunks are there; raise when they are JSON but wrong.

    Returns ``RawDecision(None, json_like)`` when the hunks are not (all) in the raw
    text, so the caller falls back to the cell view (exact tier only if ``json_like``).
    ``exact`` (the caller's ``exact=True`` / ``--exact``) leaves only the exact tier.
    """
    hunks = change.hunks
    json_like = any(looks_like_notebook_json(hunk) for hunk in hunks)
    if not hunks or not all(hunk.whole_lines for hunk in hunks):
        return RawDecision(None, json_like)
    if not json_like and not all(_may_occur(hunk, data) for hunk in hunks):
        return RawDecision(None, json_like)  # cheap: a cell-view diff of a big notebook is not decoded here
    text, codec = decode(data, path)
    raw = _RawText(text)
    outcome = _locate(raw, hunks, (Tier.EXACT,) if exact else _RAW_TIERS)
    _check_insertions(hunks, outcome)
    if not json_like and (outcome.unverified or outcome.ambiguous):
        return RawDecision(None, json_like)  # nothing says the diff is JSON: the cell view decides
    if outcome.unverified and not outcome.absent and not outcome.ambiguous:
        number = outcome.unverified[0]
        raise AmbiguousMatch(
            f"{path}: hunk {number + 1} of the diff only inserts lines (it has no context lines) and the "
            "notebook's JSON has moved since the diff was made, so its line number no longer says where "
            "it goes; nbedit will not guess",
            path=path,
            locations=[(hunks[number].start_line or 1, 1)],
            tier=Tier.EXACT.value,
            detail=f"make the diff with context lines (git diff without -U0) against this version; {_UNCHANGED}",
        )
    # a diff that only inserts is placed by its line numbers alone: raw when its text is notebook JSON
    evidence = json_like or any(match.hunk.old for match in outcome.matches)
    if outcome.ambiguous and not outcome.absent:
        number, lines = outcome.ambiguous[0]
        shown = ", ".join(str(line) for line in lines[:10])
        raise AmbiguousMatch(
            f"{path}: hunk {number + 1} of the diff occurs {len(lines)} times in the notebook's JSON "
            f"(lines {shown}){', none of them at its line number' if hunks[number].start_line else ''}; "
            "nbedit will not guess which one is meant",
            path=path,
            locations=[(line, 1) for line in lines],
            tier=Tier.EXACT.value,
            detail="add context lines (git diff -U3) or a line number (a unified diff's @@ header) so the "
            f"hunk names one place; {_UNCHANGED}",
        )
    if outcome.absent or outcome.ambiguous or not evidence:
        if json_like and _already_applied(raw, hunks):
            return RawDecision(_unchanged_plan(path, data, change, before_view, mode, digest), json_like)
        return RawDecision(None, json_like)
    matches = sorted(outcome.matches, key=lambda match: (match.start, match.end))
    for earlier, later in zip(matches, matches[1:], strict=False):
        if later.start < earlier.end:
            raise OverlappingHunks(
                f"{path}: two hunks of the diff both change the notebook's JSON at lines "
                f"{earlier.line} and {later.line}; re-create the diff; {_UNCHANGED}",
                path=path,
                lines=(later.line, earlier.line),
            )
    after_text = _splice(text, matches)
    after_bytes = encode(after_text, codec)
    try:
        after_view, notes = check_notebook(path, data, after_bytes)
    except NotebookError:
        if not json_like:
            # lines like '}' or '  {' are whole lines of the JSON and of code cells alike: a diff
            # that nothing marks as JSON and that breaks the JSON was written for the cell view
            return RawDecision(None, json_like)
        raise
    tiers = sorted({match.tier for match in matches if match.tier is not Tier.EXACT}, key=_RAW_TIERS.index)
    offsets = [match for match in matches if match.offset]
    notes = [RAW_NOTE, *notes]
    if tiers:
        notes.append("raw JSON " + ", ".join(tier.explanation for tier in tiers))
    if offsets:
        notes.append(
            "raw JSON hunks found away from their line numbers: "
            + ", ".join(f"hunk at line {match.line} (offset {match.offset:+d})" for match in offsets[:5])
        )
    plan = FilePlan(
        path=path,
        operation="update",
        before=before_view,
        after=after_view,
        before_bytes=data,
        after_bytes=after_bytes,
        fingerprint=digested_when_read(digest) if digest is not None else fingerprint(data),
        hunks=(),  # located in the raw text: the preview diffs the two cell views instead
        new_path=change.new_path if change.new_path != path else None,
        mode=change.new_mode if change.new_mode is not None else mode,
        before_mode=mode,
        notebook=True,
        display_before=before_view,
        display_after=after_view,
        notes=tuple(notes),
    )
    return RawDecision(plan, json_like)


def _may_occur(hunk: Hunk, data: bytes) -> bool:
    """Whether the longest old line of ``hunk`` is a whole line of the bytes (trailing whitespace aside).

    A cell-view line ("import os") is inside the JSON as a quoted string, never as a whole
    line, so a cell-view diff of a 50 MB notebook is ruled out by a few ``find`` calls.
    """
    lines = [line.rstrip() for line in hunk.old.splitlines()]
    longest = max(lines, key=len, default="").encode("utf-8", "surrogatepass")
    if not longest:
        return True

    def whole_line_at(position: int) -> bool:
        end = position + len(longest)
        while end < len(data) and data[end] in b" \t\r\f\v":
            end += 1
        return end == len(data) or data[end] == 0x0A

    if data.startswith(longest) and whole_line_at(0):
        return True
    found = data.find(b"\n" + longest)
    while found != -1:
        if whole_line_at(found + 1):
            return True
        found = data.find(b"\n" + longest, found + 1)
    return False


def _splice(text: str, matches: Sequence[RawMatch]) -> str:
    pieces: list[str] = []
    cursor = 0
    for match in matches:
        pieces.append(text[cursor : match.start])
        pieces.append(match.replacement)
        cursor = match.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _already_applied(raw: _RawText, hunks: Sequence[Hunk]) -> bool:
    """The whole diff is already there: every hunk's new text is, and nothing any hunk removes is.

    "Nothing it removes" is checked per run of removed lines, not for the old text as a
    whole: a hunk that deletes a cell has a new text of two generic lines ('"cells": [',
    '  {') found anywhere, so only the absence of the deleted cell's lines says it is done.
    """
    for hunk in hunks:
        new_lines, old_lines = split_lines(hunk.new), split_lines(hunk.old)
        if not new_lines or new_lines == old_lines:
            return False
        if not _hits(raw, new_lines, Tier.EXACT, 0, False):
            return False
        import difflib

        matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
        for tag, old_start, old_end, _, _ in matcher.get_opcodes():
            if tag in ("replace", "delete") and _hits(
                raw, old_lines[old_start:old_end], Tier.EXACT, 0, False
            ):
                return False
    return True


def _unchanged_plan(
    path: str, data: bytes, change: FileChange, view: str, mode: int | None, digest: Callable[[], str] | None
) -> FilePlan:
    return FilePlan(
        path=path,
        operation="update",
        before=view,
        after=view,
        before_bytes=data,
        after_bytes=data,
        fingerprint=digested_when_read(digest) if digest is not None else fingerprint(data),
        mode=mode,
        before_mode=mode,
        already_applied=True,
        notebook=True,
        display_before=view,
        display_after=view,
        notes=(f"{RAW_NOTE}: every hunk's new text is already there and its old text is not",),
    )
