"""Errors as each agent surface's model should read them: only what that tool has.

nbedit's engine writes one message per error and names options with neutral
tokens (``nbedit.errors.option``), which the Python API, the command line and
the magics spell their own way. A model has none of those: the text editor
tool has no ``replace_all``, ``apply_patch`` has no ``overwrite=True``, no
agent can pass ``encoding=`` or ``root=``. So this module rewrites a message
for a tool surface from the error's template and structured fields:

* a clause naming an option the surface has is spelled in the tool's own
  arguments (``set replace_all to true``); a clause naming one it lacks is
  dropped, and the hint that remains says what the model *can* do
  ("include more surrounding lines so the old text occurs once");
* ``NoMatch`` candidates scoring near zero are left out (a model pays for
  every token of them and none is the place it meant);
* line numbers of a change the adapter wrapped (apply_patch's V4A ``diff``
  inside a ``*** Begin Patch`` envelope) are given back in the model's own
  ``diff`` lines.

Surfaces: ``text_editor``, ``apply_patch`` and ``functions`` (also the MCP
server, whose tools are the function tools).
"""

from __future__ import annotations

import re
from typing import Literal

from nbedit.errors import (
    AmbiguousMatch,
    BinaryFile,
    FileExists,
    NbeditError,
    NoMatch,
    OutsideWorkspace,
    StaleFile,
)

__all__ = ["MIN_CANDIDATE_SCORE", "Surface", "for_model"]

Surface = Literal["text_editor", "apply_patch", "functions"]

MIN_CANDIDATE_SCORE = 0.3
"""NoMatch candidates below this similarity are left out of a model's text."""


def _token(name: str) -> str:
    return f"\ue000{name}\ue001"


_ANY_TOKEN = re.compile("\ue000([a-z_]+)\ue001")

# how a surface says "make the old text unique" (and, where it can, "change every one")
_UNIQUE = {
    "text_editor": "include more surrounding lines in old_str so the old text occurs exactly once",
    "apply_patch": (
        "include more context lines (or an @@ line naming the enclosing class or function) so the "
        "lines to change occur exactly once"
    ),
    "functions": (
        "include more surrounding lines in old so the old text occurs exactly once, or set "
        "replace_all to true to change every one"
    ),
}
_ONE_CELL = {
    "text_editor": "include a line unique to the cell you mean",
    "apply_patch": "include a line unique to the cell you mean",
    "functions": "set cell to the id or index of the cell you mean",
}
# the next step for errors whose engine hint names an option the surface lacks
_NEXT_STEP: dict[type[NbeditError], dict[str, str]] = {
    FileExists: {
        "text_editor": "view it, then change it with str_replace (or create, which replaces the whole file)",
        "apply_patch": "send an update_file operation with a diff of the lines to change instead",
        "functions": "view it, then change it with edit (or patch with a diff of the lines to change)",
    },
    BinaryFile: {
        "text_editor": "this tool cannot edit it; leave it as it is or ask the user",
        "apply_patch": "this tool cannot edit it; leave it as it is or ask the user",
        "functions": "these tools cannot edit it; leave it as it is or ask the user",
    },
    StaleFile: {
        "text_editor": "view the file again and base your edit on what it holds now",
        "apply_patch": "read the file again and base your diff on what it holds now",
        "functions": "view the file again and base your edit on what it holds now",
    },
}


def for_model(error: NbeditError, surface: Surface, *, line_offset: int = 0) -> str:
    """``Type: message`` for ``surface``; ``line_offset``: lines the adapter put before the model's text."""
    if isinstance(error, NoMatch):
        text = _no_match(error, surface)
    elif isinstance(error, AmbiguousMatch):
        text = _ambiguous(error, surface)
    else:
        text = _drop_foreign_options(error.template)
        step = _NEXT_STEP.get(type(error), {}).get(surface)
        if step is None:
            step = next(
                (steps[surface] for kind, steps in _NEXT_STEP.items() if isinstance(error, kind)), None
            )
        if step:
            text = f"{text}; {step}"
    if isinstance(error, OutsideWorkspace):
        text = text.replace(
            "nbedit only edits files under the root (set root=... / --root to widen it)",
            "only files under the workspace root can be viewed or changed; use a path relative to it",
        )
    if line_offset:
        text = _shift_lines(text, line_offset, surface)
    return f"{type(error).__name__}: {text}"


def _drop_foreign_options(template: str) -> str:
    """Every clause that names an option is dropped: no agent surface has those options."""
    lines = []
    for line in template.split("\n"):
        clauses: list[str] = []
        dropped = False
        for clause in line.split("; "):
            if _ANY_TOKEN.search(clause):
                dropped = True
                continue
            if dropped and clause.startswith("otherwise "):  # its "if" went with the dropped clause
                clause = clause.removeprefix("otherwise ")
            clauses.append(clause)
            dropped = False
        kept = "; ".join(clauses)
        # a parenthesis or comma clause naming an option inside a kept sentence
        kept = re.sub(
            r",? (?:or )?(?:pass|allow \w+|with|declare it|declare its encoding) \(?\ue000[a-z_]+\ue001[^,;)]*\)?",
            "",
            kept,
        )
        kept = _ANY_TOKEN.sub("", kept)
        if kept.strip():
            lines.append(kept)
    return "\n".join(lines)


def _ambiguous(error: AmbiguousMatch, surface: Surface) -> str:
    first, _, detail = error.template.partition("\n")
    where = detail.split("\n", 1)[0] if detail else ""
    hint = _UNIQUE[surface]
    if len(error.cells) > 1 or "limit the edit to one cell" in detail or "limit it to one cell" in detail:
        hint = f"{_ONE_CELL[surface]}, or {hint}"
    parts = [first]
    if where and not _ANY_TOKEN.search(where):
        parts.append(where)
    parts.append(hint)
    return "\n".join(parts)


def _no_match(error: NoMatch, surface: Surface) -> str:
    base = error.template.split("\nclosest candidates", 1)[0].split("\nnothing in the file is close", 1)[0]
    kept = [candidate for candidate in error.candidates if candidate.score >= MIN_CANDIDATE_SCORE]
    what = (
        "old_str" if surface == "text_editor" else ("the diff's lines" if surface == "apply_patch" else "old")
    )
    if not kept:
        return (
            f"{base}\nnothing in the file is close to it; view the file again and copy {what} from what "
            "it holds now"
        )
    parts = [base, "closest candidates ('-' lines: what you sent, '+' lines: the file):"]
    for candidate in kept:
        parts.append(f"  {candidate.describe()}")
        parts.extend("    " + line for line in candidate.diff.splitlines())
    parts.append(f"copy {what} exactly from one of these places in the file, then retry")
    return "\n".join(parts)


_LINE = re.compile(r"\b(line|the hunk at line) (\d+)(?: of the change text)?")


def _shift_lines(text: str, offset: int, surface: Surface) -> str:
    """Line numbers of the wrapped change text, given back as lines of the model's own diff.

    Only the first line (where a parse error or a hunk is placed in the change text)
    counts change-text lines; candidates' lines are the file's and stay as they are.
    """
    first, newline, others = text.partition("\n")

    def shifted(found: re.Match[str]) -> str:
        number = int(found.group(2)) - offset
        if number < 1:
            return "the operation's header"
        return f"{found.group(1)} {number} of your diff"

    if first.startswith("cannot parse") or "of the change text" in first:
        first = _LINE.sub(shifted, first, count=1)
    return f"{first}{newline}{others}"
