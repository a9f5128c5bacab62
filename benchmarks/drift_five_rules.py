"""The five rules of issue 21, on projects the drift corpus has not used, against exact oracles.

Replaying real diffs and LLM-style edits found wrong results in five rules the
drift corpus (``drift_corpus.py``) did not exercise. This module builds cases for
each rule from real modules of other projects (click, attrs, jinja2, httpx,
dateutil, anyio, arrow, babel, bleach: never the ten projects or the stdlib the
drift corpus uses), and checks nbedit against an oracle that never comes from
nbedit: either the exact text the file must hold, or a refusal.

Rules (``RULES``) and the kinds of case each holds:

- ``line-number``: the edit's region is copied far from it (>= 30 lines), so its
  text is at two places; a unified diff's line number points 2-12 lines from the
  copy (``far-off``: an ``AmbiguousMatch`` is due, never the copy), exactly at the
  original or the copy, or next to the original (that place is due), or is the base's
  number in a file shifted by lines added at the top, where an earlier unique hunk
  of the same diff was found at the same offset (``consistent-offset``: the original
  is due).
- ``already-applied``: a deletion whose removed line is mis-copied, so the change's
  new text is nothing but context lines that are in the file (``deletion-context-only``,
  refused); the change's new text stands elsewhere in the file while the old text,
  mis-copied, is still at its place (``new-elsewhere``, refused) or sent exactly
  (``new-elsewhere-old-exact``: applied at the old text's place); the change really
  applied (``truly-applied``: success, no byte changed).
- ``anchor-twice``: a Codex ``@@ def ...`` anchor that occurs twice: the function is
  copied next to itself with one token changed in the hunk's lines (the hunk is
  exact under one occurrence, near under the other: the exact place is due, or a
  refusal), copied unchanged (fits under both: refused), or the anchor is a def line
  the module itself repeats (``natural``).
- ``elision``: the old text elides the middle of a block with ``# ... existing code
  ...``, ``...``, ``# ...`` or ``# ... rest of the code ...`` (kept in new): a line is
  inserted before the elision or a token changed after it. The elided lines are
  written back unchanged (the oracle) or the edit is refused; with the block copied
  elsewhere in the file (``ambiguous``) it must be refused.
- ``context-free``: ``-U0`` hunks (no context lines): on the diff's base, with or
  without git's ``index <pre>..<post>`` line (the oracle is due); on a file that is
  not the base (lines added at the top, or one line changed far away) a hunk whose
  removed lines are unique there is placed by them (due), while a pure insertion or
  a hunk whose removed lines are not unique is refused.
- ``tabs``: tabs-for-spaces indentation drift: the file indented with tabs and the
  reply with spaces (4 a tab), the reverse, or a reply whose old lines mix 4 and 8
  spaces a tab (its added lines 4).
  The oracle writes added lines in the file's indentation (recovered when the mapping
  is uniform; a refusal is never wrong, a line written in the reply's indentation is).

Outcomes, as in the drift corpus: ``correct`` (the oracle's bytes, or a due refusal),
``refused`` (an ``NbeditError`` where a result was due: a miss, not a wrong result),
``wrong`` (any other bytes, a success where a refusal is due, or an exception that is
not an ``NbeditError``).

``python -m benchmarks.drift_five_rules`` runs every case from the modules of the installed
packages (``BENCHMARK_MODULES``; their versions are printed); ``--data`` runs on the
copies in ``tests/data/five-rules`` (what the tests use); ``--json`` for machines.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.drift_cases import mutate_token
from benchmarks.drift_edits import STDLIB_KINDS, BaseEdit, BaseFile, _base_file, _stdlib_edit
from nbedit.errors import NbeditError
from nbedit.workspace import Workspace

__all__ = [
    "BENCHMARK_MODULES",
    "DATA",
    "DIALECTS",
    "RULES",
    "Result",
    "RuleCase",
    "Source",
    "build",
    "data_sources",
    "installed_sources",
    "main",
    "run",
    "table",
]

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "five-rules"
DIALECTS = ("edit", "search_replace", "apply_patch", "unified")
RULES = ("line-number", "already-applied", "anchor-twice", "elision", "context-free", "tabs")

# (distribution, module path inside site-packages, licence): projects the drift corpus has not used
BENCHMARK_MODULES = (
    ("click", "click/formatting.py", "BSD-3-Clause"),
    ("click", "click/termui.py", "BSD-3-Clause"),
    ("click", "click/parser.py", "BSD-3-Clause"),
    ("attrs", "attr/_funcs.py", "MIT"),
    ("jinja2", "jinja2/utils.py", "BSD-3-Clause"),
    ("jinja2", "jinja2/lexer.py", "BSD-3-Clause"),
    ("httpx", "httpx/_urls.py", "BSD-3-Clause"),
    ("httpx", "httpx/_models.py", "BSD-3-Clause"),
    ("python-dateutil", "dateutil/relativedelta.py", "Apache-2.0 AND BSD-3-Clause"),
    ("anyio", "anyio/_core/_fileio.py", "MIT"),
    ("arrow", "arrow/parser.py", "Apache-2.0"),
    ("babel", "babel/dates.py", "BSD-3-Clause"),
    ("bleach", "bleach/sanitizer.py", "Apache-2.0"),
)
EDITS_PER_MODULE = 24
ELISIONS = ("# ... existing code ...", "...", "# ...", "# ... rest of the code ...")
FAR = 30  # a copy is at least this many lines from the original
_SHIFT_HEADER = "# a line added above, after the diff was made"


@dataclass(frozen=True, slots=True)
class Source:
    project: str
    version: str
    license: str
    file: BaseFile  # path: "<project>/<module path>"


@dataclass(frozen=True, slots=True)
class RuleCase:
    id: str  # rule/kind/source:line/dialect (+ a variant tag): the name in reports and xfails
    rule: str
    kind: str
    dialect: str
    path: str  # the file in the workspace
    before: str  # the file as written to disk
    change: str | tuple[str, str]  # a patch text, or (old, new) for the edit dialect
    expect: str  # "recover" (the oracle is due) or "refuse"
    oracle: str | None  # the text the file must hold (recover)
    meant: str | None = None  # where a refusal is due: the change made where its author meant it


@dataclass(frozen=True, slots=True)
class Result:
    case: RuleCase
    outcome: str  # "correct", "refused" or "wrong"
    detail: str
    got: str | None = None


# ---------------------------------------------------------------------------- sources


def installed_sources(modules: Sequence[tuple[str, str, str]] = BENCHMARK_MODULES) -> list[Source]:
    """The modules as installed (a missing package is left out): the version is the distribution's."""
    from importlib import metadata

    sources = []
    for distribution, module, license_name in modules:
        try:
            dist = metadata.distribution(distribution)
        except metadata.PackageNotFoundError:
            continue
        path = Path(str(dist.locate_file(module)))
        if not path.is_file():
            continue
        file = _base_file(f"{distribution}/{module}", path.read_text(encoding="utf-8"))
        if file is not None:
            sources.append(Source(distribution, dist.version, license_name, file))
    return sources


def data_sources(folder: Path = DATA) -> list[Source]:
    """The copies in ``tests/data/five-rules/<project>-<version>/<module>`` (see its SOURCE.md)."""
    licenses = dict((d, lic) for d, _, lic in BENCHMARK_MODULES)
    sources = []
    for path in sorted(folder.rglob("*.py")):
        top = path.relative_to(folder).parts[0]
        project, _, version = top.rpartition("-")
        module = path.relative_to(folder / top).as_posix()
        file = _base_file(f"{project}/{module}", path.read_text(encoding="utf-8"))
        if file is not None:
            sources.append(Source(project, version, licenses.get(project, "?"), file))
    return sources


def _edits(source: Source, count: int) -> list[BaseEdit]:
    """Seeded edits of a module (the drift corpus's kinds: token, delete, insert, wrap, ...)."""
    file = source.file
    rng = random.Random(zlib.crc32(file.path.encode()))
    edits: list[BaseEdit] = []
    attempts = 0
    while len(edits) < count and attempts < count * 8:
        attempts += 1
        kind = STDLIB_KINDS[attempts % len(STDLIB_KINDS)]
        edit = _stdlib_edit(file, rng.randrange(len(file.lines)), kind, rng)
        if edit is not None:
            edits.append(replace_source(edit, f"{file.path}:{edit.start + 1}"))
    return edits


def replace_source(edit: BaseEdit, source: str) -> BaseEdit:
    return BaseEdit(
        edit.file, source, edit.kind, edit.start, edit.before, edit.removed, edit.added, edit.after
    )


# ---------------------------------------------------------------------------- rendering


Body = list[tuple[str, str]]  # (" " | "-" | "+", line)


def _body(before: Sequence[str], removed: Sequence[str], added: Sequence[str], after: Sequence[str]) -> Body:
    return (
        [(" ", line) for line in before]
        + [("-", line) for line in removed]
        + [("+", line) for line in added]
        + [(" ", line) for line in after]
    )


def _old_new(body: Body) -> tuple[str, str]:
    old = "".join(line + "\n" for tag, line in body if tag != "+")
    new = "".join(line + "\n" for tag, line in body if tag != "-")
    return old, new


def _hunk_text(body: Body) -> str:
    return "".join(tag + line + "\n" for tag, line in body)


def render(
    dialect: str,
    path: str,
    body: Body,
    start: int = 1,
    anchor: str | None = None,
    index: str | None = None,
) -> str | tuple[str, str]:
    """What the model sends. ``start``: 1-based first old line (unified); for a hunk with no
    old line, the line after which it inserts (``@@ -start,0``)."""
    if dialect == "edit":
        return _old_new(body)
    if dialect == "search_replace":
        old, new = _old_new(body)
        return f"{path}\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n"
    if dialect == "apply_patch":
        header = f"@@ {anchor}\n" if anchor else "@@\n"
        return f"*** Begin Patch\n*** Update File: {path}\n{header}{_hunk_text(body)}*** End Patch\n"
    if dialect == "unified":
        return _unified_header(path, index) + _unified_hunk(body, start, start)
    raise ValueError(dialect)


def _unified_header(path: str, index: str | None) -> str:
    git = f"diff --git a/{path} b/{path}\nindex {index} 100644\n" if index else ""
    return f"{git}--- a/{path}\n+++ b/{path}\n"


def _unified_hunk(body: Body, old_start: int, new_start: int) -> str:
    old_count = sum(tag != "+" for tag, _ in body)
    new_count = sum(tag != "-" for tag, _ in body)
    if not old_count:
        new_start = old_start + 1
    if not new_count:
        new_start = max(new_start - 1, 0)
    return f"@@ -{old_start},{old_count} +{new_start},{new_count} @@\n{_hunk_text(body)}"


def _text(lines: Sequence[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _splice(lines: Sequence[str], start: int, stop: int, middle: Sequence[str]) -> list[str]:
    return [*lines[:start], *middle, *lines[stop:]]


def _blob(text: str) -> str:
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _variant_path(path: str, text: str) -> str:
    return f"v{zlib.crc32(text.encode()):08x}/{path}"


def _case(
    rule: str,
    kind: str,
    edit: BaseEdit,
    dialect: str,
    before: list[str],
    change_for: object,
    expect: str,
    oracle: list[str] | None,
    tag: str = "",
    meant: list[str] | None = None,
) -> RuleCase:
    text = _text(before)
    path = _variant_path(edit.file.path, text)
    change = change_for(path) if callable(change_for) else change_for  # type: ignore[operator]
    name = f"{rule}/{kind}/{edit.source}/{dialect}" + (f"/{tag}" if tag else "")
    return RuleCase(
        name,
        rule,
        kind,
        dialect,
        path,
        text,
        change,
        expect,
        oracle and _text(oracle),
        meant and _text(meant),
    )


def _count(lines: Sequence[str], block: Sequence[str]) -> int:
    size = len(block)
    first = block[0] if block else None
    return sum(
        1
        for n in range(len(lines) - size + 1)
        if lines[n] == first and tuple(lines[n : n + size]) == tuple(block)
    )


# ---------------------------------------------------------------------------- rule 1: line numbers


def _far_place(lines: Sequence[str], edit: BaseEdit, rng: random.Random) -> int | None:
    """A line after a blank line, at least ``FAR`` lines from the edit's region, to copy it to."""
    places = [
        n
        for n in range(1, len(lines))
        if not lines[n - 1].strip() and (n <= edit.start - FAR or n >= edit.end + FAR)
    ]
    return rng.choice(places) if places else None


def line_number_cases(edit: BaseEdit, rng: random.Random) -> Iterator[RuleCase]:
    lines = edit.file.lines
    region = lines[edit.start : edit.end]
    place = _far_place(lines, edit, rng)
    if place is None:
        return
    copied = _splice(lines, place, place, [*region, ""])
    original = edit.start + (len(region) + 1 if place <= edit.start else 0)
    copy = place
    body = _body(edit.before, edit.removed, edit.added, edit.after)
    new_region = [*edit.before, *edit.added, *edit.after]
    at_original = _splice(copied, original, original + len(region), new_region)
    at_copy = _splice(copied, copy, copy + len(region), new_region)

    def unified(number: int):  # type: ignore[no-untyped-def]
        return lambda path: render("unified", path, body, number)

    rule = "line-number"
    offsets = [d for d in (-12, -7, -4, -2, 2, 4, 9) if abs(copy + d - original) > 1]
    distance = rng.choice(offsets)
    number = copy + 1 + distance
    if 1 <= number <= len(copied):
        yield _case(
            rule,
            "far-off",
            edit,
            "unified",
            copied,
            unified(number),
            "refuse",
            None,
            f"{distance:+d}",
            at_original,
        )
    yield _case(rule, "at-original", edit, "unified", copied, unified(original + 1), "recover", at_original)
    yield _case(
        rule, "next-to-original", edit, "unified", copied, unified(original + 2), "recover", at_original
    )
    yield _case(rule, "at-copy", edit, "unified", copied, unified(copy + 1), "recover", at_copy)


def consistent_offset_cases(first: BaseEdit, second: BaseEdit, rng: random.Random) -> Iterator[RuleCase]:
    """Two hunks of one diff on a file shifted by lines added at the top: the first is unique and
    found at the shift; the second's text is also copied far below it: the shift places it."""
    lines = first.file.lines
    if first.end > second.start - 3:
        return
    places = [n for n in range(second.end + FAR, len(lines)) if not lines[n - 1].strip()]
    if not places:
        return
    place = rng.choice(places)
    region = lines[second.start : second.end]
    shift = rng.choice((5, 12, 31))
    shifted = [_SHIFT_HEADER] * shift + _splice(lines, place, place, [*region, ""])
    oracle = _splice(
        shifted,
        second.start + shift,
        second.start + shift + len(region),
        [*second.before, *second.added, *second.after],
    )
    oracle = _splice(
        oracle,
        first.start + shift,
        first.start + shift + len(first.before + first.removed + first.after),
        [*first.before, *first.added, *first.after],
    )

    def change(path: str) -> str:
        first_body = _body(first.before, first.removed, first.added, first.after)
        second_body = _body(second.before, second.removed, second.added, second.after)
        delta = len(first.added) - len(first.removed)
        return (
            _unified_header(path, None)
            + _unified_hunk(first_body, first.start + 1, first.start + 1)
            + _unified_hunk(second_body, second.start + 1, second.start + 1 + delta)
        )

    yield _case(
        "line-number", "consistent-offset", second, "unified", shifted, change, "recover", oracle, f"+{shift}"
    )


# ---------------------------------------------------------------------------- rule 2: already applied


def _miscopied_removed(edit: BaseEdit, rng: random.Random) -> tuple[str, ...] | None:
    kept = {line.strip() for line in edit.added}
    choices = [
        n for n, line in enumerate(edit.removed) if line.strip() not in kept and mutate_token(line, rng)
    ]
    if not choices:
        return None
    index = rng.choice(choices)
    changed = mutate_token(edit.removed[index], rng)
    assert changed is not None
    if changed.strip() in kept:
        return None  # the mis-copy repeats the edit's own change: old and new would be one text
    return (*edit.removed[:index], changed, *edit.removed[index + 1 :])


def already_applied_cases(edit: BaseEdit, rng: random.Random) -> Iterator[RuleCase]:
    lines = edit.file.lines
    rule = "already-applied"
    dialects = DIALECTS
    miscopied = _miscopied_removed(edit, rng)
    start = edit.start + 1
    if edit.kind == "delete" and miscopied is not None:
        for side in ("both", "before-only", "after-only"):
            before = edit.before if side != "after-only" else ()
            after = edit.after if side != "before-only" else ()
            if not before and not after:
                continue
            body = _body(before, miscopied, (), after)
            first = edit.start + len(edit.before) - len(before) + 1
            for dialect in dialects:
                yield _case(
                    rule,
                    "deletion-context-only",
                    edit,
                    dialect,
                    list(lines),
                    lambda path, d=dialect, b=body, f=first: render(d, path, b, f),  # type: ignore[misc]
                    "refuse",
                    None,
                    side,
                )
    new_region = [*edit.before, *edit.added, *edit.after]
    place = _far_place(lines, edit, rng)
    if place is not None and place > edit.end:
        # the new text also stands elsewhere (after the region: the line numbers stay right)
        variant = _splice(lines, place, place, [*new_region, ""])
        if _count(variant, [*edit.before, *edit.removed, *edit.after]) == 1:
            oracle = _splice(variant, edit.start, edit.end, new_region)
            exact = _body(edit.before, edit.removed, edit.added, edit.after)
            for dialect in dialects:
                yield _case(
                    rule,
                    "new-elsewhere-old-exact",
                    edit,
                    dialect,
                    variant,
                    lambda path, d=dialect: render(d, path, exact, start),  # type: ignore[misc]
                    "recover",
                    oracle,
                )
            if miscopied is not None:
                body = _body(edit.before, miscopied, edit.added, edit.after)
                for dialect in dialects:
                    yield _case(
                        rule,
                        "new-elsewhere",
                        edit,
                        dialect,
                        variant,
                        lambda path, d=dialect, b=body: render(d, path, b, start),  # type: ignore[misc]
                        "refuse",
                        None,
                    )
    applied = _splice(lines, edit.start, edit.end, new_region)
    old_block = [*edit.before, *edit.removed, *edit.after]
    if _count(applied, old_block) == 0 and _count(applied, new_region) == 1 and edit.removed:
        exact = _body(edit.before, edit.removed, edit.added, edit.after)
        for dialect in dialects:
            yield _case(
                rule,
                "truly-applied",
                edit,
                dialect,
                applied,
                lambda path, d=dialect: render(d, path, exact, start),  # type: ignore[misc]
                "recover",
                applied,
            )


# ---------------------------------------------------------------------------- rule 3: anchors twice


_DEF = re.compile(r"^(\s*)(async\s+def|def|class)\s+\w+")


def _functions(lines: Sequence[str]) -> list[tuple[int, int]]:
    """(def line, end) of every def/class: the end is the first non-blank line indented no deeper."""
    found = []
    for number, line in enumerate(lines):
        match = _DEF.match(line)
        if not match:
            continue
        depth = len(match.group(1))
        end = number + 1
        while end < len(lines) and (
            not lines[end].strip()
            or len(lines[end]) - len(lines[end].lstrip()) > depth
            or lines[end].lstrip().startswith(")")
        ):
            end += 1
        while end > number + 1 and not lines[end - 1].strip():
            end -= 1
        found.append((number, end))
    return found


def anchor_cases(edit: BaseEdit, rng: random.Random) -> Iterator[RuleCase]:
    lines = edit.file.lines
    inside = [(d, e) for d, e in _functions(lines) if d < edit.start and edit.end <= e]
    if not inside:
        return
    definition, end = max(inside)  # the innermost def holding the edit
    anchor = lines[definition]
    if anchor.rstrip().endswith(",") or "(" in anchor and ")" not in anchor:
        return  # a def line continued on the next line: not a line a model names as an anchor
    rule = "anchor-twice"
    body = _body(edit.before, edit.removed, edit.added, edit.after)
    new_region = [*edit.before, *edit.added, *edit.after]
    old_block = [*edit.before, *edit.removed, *edit.after]

    def patch(path: str) -> str:
        return render("apply_patch", path, body, anchor=anchor.strip())  # type: ignore[return-value]

    if sum(line == anchor for line in lines) >= 2 and _count(lines, old_block) == 1:
        oracle = _splice(lines, edit.start, edit.end, new_region)
        yield _case(rule, "natural", edit, "apply_patch", list(lines), patch, "recover", oracle)
    function = list(lines[definition:end])
    offset = edit.start - definition
    candidates = [n for n in range(len(old_block)) if mutate_token(old_block[n], random.Random(0))]
    if not candidates:
        return
    near = list(function)
    line = rng.choice(candidates)
    changed = mutate_token(old_block[line], rng)
    assert changed is not None
    near[offset + line] = changed
    for copy, label in ((near, "near-copy"), (function, "same-copy")):
        for position, where in ((definition, "before"), (end, "after")):
            variant = _splice(lines, position, position, [*copy, ""] if where == "before" else ["", *copy])
            shift = len(copy) + 1 if where == "before" else 0
            if label == "same-copy":
                yield _case(rule, label, edit, "apply_patch", variant, patch, "refuse", None, where)
                continue
            if _count(variant, old_block) != 1:
                continue
            oracle = _splice(variant, edit.start + shift, edit.end + shift, new_region)
            yield _case(rule, label, edit, "apply_patch", variant, patch, "recover", oracle, where)
            if where == "before":
                drifted = [(tag, "    " + text if text.strip() else text) for tag, text in body]
                yield _case(
                    rule,
                    "near-copy-indent+4",
                    edit,
                    "apply_patch",
                    variant,
                    lambda path, b=drifted: render("apply_patch", path, b, anchor=anchor.strip()),
                    "recover",
                    oracle,
                    where,
                )


# ---------------------------------------------------------------------------- rule 4: elisions


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def elision_cases(source: Source, rng: random.Random, count: int) -> Iterator[RuleCase]:
    """Blocks of 6-14 lines inside functions: two lines kept each side, the middle elided."""
    lines = source.file.lines
    functions = [(d, e) for d, e in _functions(lines) if e - d >= 10]
    rng.shuffle(functions)
    made = 0
    for definition, end in functions:
        if made >= count:
            return
        size = rng.randint(6, min(14, end - definition - 1))
        start = rng.randint(definition + 1, end - size)
        block = lines[start : start + size]
        head, middle, tail = block[:2], block[2:-2], block[-2:]
        if not all(line.strip() for line in (*head, *tail)) or any("..." in line for line in block):
            continue
        if _count(lines, head) != 1 or _count(lines, tail) != 1:
            continue
        indent = _indentation(next((line for line in middle if line.strip()), head[-1]))
        style = ELISIONS[made % len(ELISIONS)]
        elision = indent + style
        made += 1
        edit = BaseEdit(
            source.file, f"{source.file.path}:{start + 1}", "elision", start, (), tuple(block), (), ()
        )
        last = head[-1].rstrip()
        if last.endswith((",", "\\", "(", "[", "{")) or any(
            last.count(a) != last.count(b) for a, b in ("()", "[]", "{}")
        ):
            continue
        follows = next((line for line in middle if line.strip()), head[-1])
        inserted = (
            _indentation(follows if last.endswith(":") else head[-1]) + f"{_name(last, rng)} = None  # added"
        )
        changed_tail = mutate_token(tail[0], rng)
        changes = [("insert-before-elision", [*head, inserted], tail)]
        if changed_tail:
            changes.append(("token-after-elision", head, [changed_tail, tail[1]]))
        for kind, new_head, new_tail in changes:
            body: Body = _pairs(head, new_head) + [(" ", elision)] + _pairs(tail, new_tail)
            result = [*new_head, *middle, *new_tail]
            oracle = _splice(lines, start, start + size, result)
            duplicated = [*lines, "", *block]
            for dialect in DIALECTS:
                yield _case(
                    "elision",
                    kind,
                    edit,
                    dialect,
                    list(lines),
                    lambda path, d=dialect, b=body, s=start: render(d, path, b, s + 1),  # type: ignore[misc]
                    "recover",
                    oracle,
                    style,
                )
                # a unified diff's line number, pointing at the original, places it (rule 1)
                numbered = dialect == "unified"
                yield _case(
                    "elision",
                    "ambiguous",
                    edit,
                    dialect,
                    duplicated,
                    lambda path, d=dialect, b=body, s=start: render(d, path, b, s + 1),  # type: ignore[misc]
                    "recover" if numbered else "refuse",
                    _splice(duplicated, start, start + size, result) if numbered else None,
                    f"{kind} {style}",
                )


def _name(line: str, rng: random.Random) -> str:
    names = re.findall(r"\b[a-z_][a-z0-9_]{2,}\b", line)
    return rng.choice(names) + "_seen" if names else "value_seen"


def _pairs(old: Sequence[str], new: Sequence[str]) -> Body:
    """Body lines turning ``old`` into ``new`` (a shared prefix and suffix kept as context)."""
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return (
        [(" ", line) for line in old[:prefix]]
        + [("-", line) for line in old[prefix : len(old) - suffix]]
        + [("+", line) for line in new[prefix : len(new) - suffix]]
        + [(" ", line) for line in old[len(old) - suffix :]]
    )


# ---------------------------------------------------------------------------- rule 5: -U0 hunks


def context_free_cases(edit: BaseEdit, rng: random.Random) -> Iterator[RuleCase]:
    lines = edit.file.lines
    rule = "context-free"
    position = edit.start + len(edit.before)
    removed, added = list(edit.removed), list(edit.added)
    body = _body((), removed, added, ())
    number = position + 1 if removed else position  # "@@ -N,0": inserted after line N
    base_text = edit.file.text
    applied = _splice(lines, position, position + len(removed), added)
    index = f"{_blob(base_text)[:7]}..{_blob(_text(applied))[:7]}"

    def change(with_index: bool):  # type: ignore[no-untyped-def]
        return lambda path: render("unified", path, body, number, index=index if with_index else None)

    kind = "removes" if removed else "inserts"
    for with_index in (True, False):
        tag = "index" if with_index else "no-index"
        yield _case(
            rule, f"base-{kind}", edit, "unified", list(lines), change(with_index), "recover", applied, tag
        )
    # not the base: lines added at the top, or one line changed far away
    shift = rng.choice((4, 9, 23))
    shifted = [_SHIFT_HEADER] * shift + list(lines)
    far = [
        n
        for n in range(len(lines))
        if abs(n - position) > FAR and lines[n].strip() and mutate_token(lines[n], rng)
    ]
    variants = [("shifted", shifted, shift)]
    if far:
        line = rng.choice(far)
        changed_line = mutate_token(lines[line], rng)
        assert changed_line is not None
        variants.append(("changed-elsewhere", _splice(lines, line, line + 1, [changed_line]), 0))
    for label, variant, moved in variants:
        for with_index in (True, False):
            tag = f"{label} {'index' if with_index else 'no-index'}"
            if removed and _count(variant, removed) == 1:
                oracle = _splice(variant, position + moved, position + moved + len(removed), added)
                yield _case(
                    rule,
                    f"not-base-{kind}-unique",
                    edit,
                    "unified",
                    variant,
                    change(with_index),
                    "recover",
                    oracle,
                    tag,
                )
            elif removed and not moved:
                # the removed lines are at the very line named (rule 1: a number pointing at one of
                # identical places is trusted), nothing moved: that place is due
                oracle = _splice(variant, position, position + len(removed), added)
                yield _case(
                    rule,
                    f"not-base-{kind}-repeated",
                    edit,
                    "unified",
                    variant,
                    change(with_index),
                    "recover",
                    oracle,
                    tag,
                )
            elif removed:
                at_number = variant[position : position + len(removed)] == removed
                if with_index or not at_number:
                    meant = _splice(variant, position + moved, position + moved + len(removed), added)
                    yield _case(
                        rule,
                        f"not-base-{kind}-repeated",
                        edit,
                        "unified",
                        variant,
                        change(with_index),
                        "refuse",
                        None,
                        tag,
                        meant,
                    )
            elif with_index or moved:
                # a pure insertion: nothing in the hunk says where it goes but the number; with no
                # index line and nothing moved the file may be the base (not judged)
                by_number = _splice(variant, position, position, added)
                true_place = _splice(variant, position + moved, position + moved, added)
                if by_number != true_place or with_index:
                    yield _case(
                        rule,
                        "not-base-inserts",
                        edit,
                        "unified",
                        variant,
                        change(with_index),
                        "refuse",
                        None,
                        tag,
                        true_place,
                    )


# ---------------------------------------------------------------------------- tabs for spaces


def _tabbed(line: str, width: int = 4) -> str:
    indent = len(line) - len(line.lstrip(" "))
    return "\t" * (indent // width) + " " * (indent % width) + line[indent:]


def _spaced(line: str, width: int) -> str:
    indent = len(line) - len(line.lstrip("\t"))
    return " " * (width * indent) + line[indent:]


def tabs_cases(edit: BaseEdit, rng: random.Random) -> Iterator[RuleCase]:
    lines = edit.file.lines
    parts = (edit.before, edit.removed, edit.added, edit.after)
    if not any(line.startswith("    ") for part in (edit.before, edit.removed, edit.after) for line in part):
        return  # no indented line in the old text: an exact match, written as the reply asks
    if any("\t" in line for part in parts for line in part):
        return
    rule = "tabs"
    new_region = [*edit.before, *edit.added, *edit.after]
    start = edit.start + 1
    tab_file = [_tabbed(line) for line in lines]
    tab_oracle = _splice(tab_file, edit.start, edit.end, [_tabbed(line) for line in new_region])
    space_oracle = _splice(lines, edit.start, edit.end, new_region)
    spaces = _body(*parts)
    tabs = _body(*([_tabbed(line) for line in part] for part in parts))
    # the old side's lines alternate 4 and 8 spaces a tab (no uniform mapping); added lines 4
    mixed = [(tag, _spaced(text, 8 if n % 2 and tag != "+" else 4)) for n, (tag, text) in enumerate(tabs)]
    widths = {
        (n % 2 and 8) or 4 for n, (tag, text) in enumerate(tabs) if tag != "+" and text.startswith("\t")
    }
    for dialect in DIALECTS:
        yield _case(
            rule,
            "file-tabs-reply-spaces",
            edit,
            dialect,
            tab_file,
            lambda path, d=dialect: render(d, path, spaces, start),
            "recover",
            tab_oracle,
        )  # type: ignore[misc]
        yield _case(
            rule,
            "file-spaces-reply-tabs",
            edit,
            dialect,
            list(lines),
            lambda path, d=dialect: render(d, path, tabs, start),
            "recover",
            space_oracle,
        )  # type: ignore[misc]
        if widths == {4, 8}:  # both widths really used by old lines: no uniform mapping
            yield _case(
                rule,
                "file-tabs-reply-mixed",
                edit,
                dialect,
                tab_file,
                lambda path, d=dialect: render(d, path, mixed, start),
                "recover",
                tab_oracle,
            )  # type: ignore[misc]


# ---------------------------------------------------------------------------- building and running


def build(sources: Sequence[Source], per_module: int = EDITS_PER_MODULE) -> list[RuleCase]:
    """Every case of every rule, deterministic for given sources."""
    cases: list[RuleCase] = []
    for source in sources:
        rng = random.Random(f"five-rules {source.file.path}")
        edits = _edits(source, per_module)
        for edit in edits:
            cases.extend(line_number_cases(edit, rng))
            cases.extend(already_applied_cases(edit, rng))
            cases.extend(anchor_cases(edit, rng))
            cases.extend(context_free_cases(edit, rng))
            cases.extend(tabs_cases(edit, rng))
        ordered = sorted(edits, key=lambda edit: edit.start)
        for first, second in zip(ordered, ordered[1:], strict=False):
            if _count(source.file.lines, [*first.before, *first.removed, *first.after]) == 1:
                cases.extend(consistent_offset_cases(first, second, rng))
        cases.extend(elision_cases(source, rng, max(2, per_module // 6)))
    seen: set[str] = set()
    unique = []
    for case in cases:
        if case.id not in seen:
            seen.add(case.id)
            unique.append(case)
    return unique


def stratified(cases: Sequence[RuleCase], per_cell: int, seed: int = 20261127) -> list[RuleCase]:
    """Up to ``per_cell`` cases of every (rule, kind, dialect), seeded."""
    rng = random.Random(seed)
    cells: dict[tuple[str, str, str], list[RuleCase]] = {}
    for case in cases:
        cells.setdefault((case.rule, case.kind, case.dialect), []).append(case)
    chosen = []
    for key in sorted(cells):
        cell = cells[key]
        chosen.extend(rng.sample(cell, min(per_cell, len(cell))))
    return chosen


def run_case(workspace: Workspace, case: RuleCase) -> Result:
    try:
        if isinstance(case.change, tuple):
            plan = workspace.plan_edit(case.path, case.change[0], case.change[1])
        else:
            plan = workspace.plan_patch(case.change)
    except NbeditError as error:
        outcome = "correct" if case.expect == "refuse" else "refused"
        return Result(case, outcome, f"{type(error).__name__}: {str(error).splitlines()[0]}")
    except Exception as error:  # anything else escaping the engine is a bug
        return Result(case, "wrong", f"{type(error).__name__}: {error}")
    if len(plan.files) != 1 or plan.files[0].path != case.path:
        return Result(case, "wrong", f"planned {plan.paths}")
    file_plan = plan.files[0]
    got = (file_plan.after_bytes or b"").decode("utf-8")
    unchanged = file_plan.after_bytes == file_plan.before_bytes
    if case.expect == "refuse":
        reason = "reported as already applied" if unchanged else "applied where a refusal is due"
        if not unchanged and case.meant is not None:
            reason += (
                " (at the place meant, unverified)" if got == case.meant else " (not where it was meant)"
            )
        return Result(case, "wrong", reason, got)
    if got == case.oracle:
        return Result(case, "correct", "")
    reason = "no change reported as success" if unchanged else "bytes differ from the oracle"
    return Result(case, "wrong", reason, got)


def run(cases: Sequence[RuleCase], root: Path) -> list[Result]:
    """Write each file variant once under ``root`` and plan every case (nothing is applied)."""
    written: set[str] = set()
    for case in cases:
        if case.path not in written:
            written.add(case.path)
            path = root / case.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(case.before.encode("utf-8"))
    workspace = Workspace(root, history=False)
    return [run_case(workspace, case) for case in cases]


def table(results: Iterable[Result], by: str = "dialect") -> list[tuple[str, str, str, Counter[str]]]:
    """(rule, kind or dialect, expect, outcome counts) rows, in the rules' order."""
    counts: dict[tuple[str, str, str], Counter[str]] = {}
    for result in results:
        case = result.case
        key = (case.rule, getattr(case, by), case.expect)
        counts.setdefault(key, Counter())[result.outcome] += 1
    return sorted(
        ((rule, column, expect, count) for (rule, column, expect), count in counts.items()),
        key=lambda row: (RULES.index(row[0]), row[1], row[2]),
    )


def format_rows(rows: Sequence[tuple[str, str, str, Counter[str]]], by: str = "dialect") -> str:
    lines = [
        f"| rule | {by} | due | cases | correct | refused | wrong |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for rule, column, expect, count in rows:
        due = "result" if expect == "recover" else "refusal"
        lines.append(
            f"| {rule} | {column} | {due} | {sum(count.values()):,} | {count['correct']:,} | "
            f"{count['refused']:,} | {count['wrong']:,} |"
        )
    return "\n".join(lines)


def repro(result: Result, width: int = 3) -> dict[str, str]:
    """A wrong result in a few lines: the change as sent and where the file differs."""
    case = result.case
    out = {"id": case.id, "detail": result.detail, "expect": case.expect}
    out["change"] = (
        case.change if isinstance(case.change, str) else f"OLD:\n{case.change[0]}NEW:\n{case.change[1]}"
    )
    if result.got is not None:
        expected = case.oracle if case.oracle is not None else case.before
        got_lines, want_lines = result.got.split("\n"), expected.split("\n")
        first = 0
        while first < min(len(got_lines), len(want_lines)) and got_lines[first] == want_lines[first]:
            first += 1
        out["first_difference_line"] = str(first + 1)
        out["expected"] = "\n".join(want_lines[max(first - width, 0) : first + width])
        out["got"] = "\n".join(got_lines[max(first - width, 0) : first + width])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.drift_five_rules", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", action="store_true", help="use the copies in tests/data/five-rules")
    parser.add_argument("--per-module", type=int, default=EDITS_PER_MODULE, metavar="N")
    parser.add_argument("--sample", type=int, metavar="N", help="at most N cases per (rule, kind, dialect)")
    parser.add_argument("--json", action="store_true", help="rows and wrong cases as JSON")
    parser.add_argument(
        "--case",
        action="append",
        metavar="ID",
        help="run only the cases whose id starts with ID (repeatable)",
    )
    parser.add_argument(
        "--wrong", type=int, default=3, metavar="N", help="wrong cases shown per (rule, kind)"
    )
    arguments = parser.parse_args(argv)
    started = time.perf_counter()
    sources = data_sources() if arguments.data else installed_sources()
    cases = build(sources, arguments.per_module)
    if arguments.sample:
        cases = stratified(cases, arguments.sample)
    if arguments.case:
        cases = [case for case in cases if case.id.startswith(tuple(arguments.case))]
    built = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="nbedit-five-rules-") as folder:
        results = run(cases, Path(folder))
    finished = time.perf_counter()
    wrong = [result for result in results if result.outcome == "wrong"]
    shown: dict[tuple[str, str], list[Result]] = {}
    for result in wrong:
        shown.setdefault((result.case.rule, result.case.kind), []).append(result)
    examples = [repro(result) for cell in shown.values() for result in cell[: arguments.wrong]]
    projects = sorted({f"{s.project} {s.version} ({s.license})" for s in sources})
    if arguments.json:
        payload = {
            "projects": projects,
            "modules": [s.file.path for s in sources],
            "cases": len(cases),
            "rows": [
                {"rule": r, "dialect": c, "expect": e, **{k: n[k] for k in ("correct", "refused", "wrong")}}
                for r, c, e, n in table(results)
            ],
            "wrong_ids": [result.case.id for result in wrong],
            "wrong_cases": examples,
        }
        json.dump(payload, sys.stdout, indent=1)
        print()
        return 1 if wrong else 0
    print(f"projects: {', '.join(projects)}")
    print(
        f"{len(sources)} modules -> {len(cases):,} cases; built in {built - started:.1f} s, "
        f"run in {finished - built:.1f} s\n"
    )
    print(format_rows(table(results, "dialect")))
    print()
    print(format_rows(table(results, "kind"), "kind"))
    print(f"\n{len(wrong):,} wrong results")
    for result in wrong:
        print(f"  {result.case.id}: {result.detail}")
    for item in examples:
        print("\n" + "-" * 72)
        for key, value in item.items():
            print(f"{key}:\n{value}" if "\n" in value else f"{key}: {value}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
