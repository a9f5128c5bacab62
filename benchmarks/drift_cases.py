"""Drift cases: each base edit perturbed the way models drift, with its exact oracle.

A case is a file *variant* (the base file as written to disk, possibly with CRLF
line endings, trailing whitespace or duplicated regions), the old/new text a model
would send (``old_lines``/``new_lines``, LF) and the oracle: the bytes the file must
hold afterwards. The oracle never comes from nbedit. It is the variant with the
edit's lines replaced by: the variant's own context lines (the lines old and new
share are the file's, whatever the model wrote for them), then the edit's added
lines as the model wrote them, adapted only by the indentation offset it drifted
by (so: the true added lines, or those lines with trailing whitespace stripped when
the model stripped it), then the variant's own context lines, every line ending in
the variant's newline. For every category but ``trailing-ws-stripped`` and
``combined`` that is exactly ``variant.replace(old, new, 1)`` of the true edit.

Categories (perturbations apply to old and new alike unless said otherwise):

- ``exact``: no drift.
- ``indent+4``/``indent+8``/``indent-4``/``indent-8``/``tab-prefix``: every non-blank
  line shifted (minus only where every line has that many leading spaces).
- ``trailing-ws-stripped``: the file carries trailing blanks (" ", "  " or a tab) on
  every non-blank line; the model's text has none.
- ``curly-quotes-in-context``/``dashes-in-context``: context lines written with
  curly quotes / en dashes where the file has straight quotes / hyphens.
- ``token-changed-in-context``: one token of one context line changed on both sides
  (refused, a conflict, but in a unified diff, whose line number places it).
- ``token-miscopied-in-old``: the same, in the old text only (new keeps the file's line).
- ``crlf-file-lf-edit``: the file has CRLF line endings, the edit LF.
- ``combined``: CRLF file with trailing blanks; the text stripped, shifted by +4,
  with curly quotes and en dashes in context lines.
- ``ambiguous``: a copy of the edit's region is appended to the file (blank line
  first), and old is sent as is or shifted by +4: the place cannot be told, so the
  edit must be refused; a unified diff's line number tells it, so there the oracle
  is the edit at the numbered place.
- ``absent``: one removed line has a token changed in old only, while new does not
  keep that line: the text to change is not in the file, so the edit must be refused.

Cases where the drift cannot apply (no quote in the context, too little indentation
to remove) are not made; neither are cases whose drifted old text occurs verbatim in
the variant (the drift produced real text elsewhere, so an exact match there is
right), nor drifted cases where a removed line equals an added line (old and new
would share it, so which copy is kept is not defined by the text).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from benchmarks.drift_edits import BaseEdit, BaseFile, _tokens

__all__ = [
    "CATEGORIES",
    "DIALECTS",
    "Case",
    "Category",
    "Variant",
    "build_cases",
    "expectation",
    "render",
]

DIALECTS = ("edit", "search_replace", "apply_patch", "unified")


@dataclass(frozen=True, slots=True)
class Category:
    name: str
    expect: str  # "recover" (the oracle is written) or "refuse" (an NbeditError, nothing written)
    target: float  # the share of cases that must be recovered (or refused)


CATEGORIES = (
    Category("exact", "recover", 1.0),
    Category("indent+4", "recover", 0.97),
    Category("indent-4", "recover", 0.97),
    Category("indent+8", "recover", 0.97),
    Category("indent-8", "recover", 0.97),
    Category("tab-prefix", "recover", 0.97),
    Category("trailing-ws-stripped", "recover", 0.97),
    Category("curly-quotes-in-context", "recover", 0.97),
    Category("dashes-in-context", "recover", 0.97),
    Category("token-changed-in-context", "recover", 0.85),
    Category("token-miscopied-in-old", "recover", 0.85),
    Category("crlf-file-lf-edit", "recover", 0.97),
    Category("combined", "recover", 0.97),
    Category("ambiguous", "refuse", 1.0),
    Category("absent", "refuse", 1.0),
)
_BY_NAME = {category.name: category for category in CATEGORIES}
_TRAILING = (" ", "  ", "\t")


@dataclass(slots=True)
class Variant:
    """A file as written to disk for some categories: its lines (no endings) and newline."""

    path: str
    lines: tuple[str, ...]
    newline: str
    _text: str | None = field(default=None, repr=False)
    _offsets: list[int] | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "".join(line + self.newline for line in self.lines)
        return self._text

    def offset(self, line: int) -> int:
        """Character offset of the start of 0-based ``line``."""
        if self._offsets is None:
            offsets = [0]
            for text_line in self.lines:
                offsets.append(offsets[-1] + len(text_line) + len(self.newline))
            self._offsets = offsets
        return self._offsets[line]


@dataclass(frozen=True, slots=True)
class Case:
    number: int
    category: str
    edit: BaseEdit
    variant: Variant
    before_old: tuple[str, ...]
    before_new: tuple[str, ...]
    removed: tuple[str, ...]
    added: tuple[str, ...]
    after_old: tuple[str, ...]
    after_new: tuple[str, ...]
    written: tuple[str, ...]  # the added lines as the oracle writes them
    expect: str
    strip_final_newline: bool  # the plain old/new pair is sent without its final "\n"
    start_mid_line: bool = False  # ... or without the first line's indentation (starts mid-line)

    @property
    def old(self) -> str:
        return "".join(line + "\n" for line in self.before_old + self.removed + self.after_old)

    @property
    def new(self) -> str:
        return "".join(line + "\n" for line in self.before_new + self.added + self.after_new)

    def oracle(self) -> str:
        """The text the variant must hold after the edit (meaningful when ``expect == "recover"``)."""
        variant, edit = self.variant, self.edit
        newline = variant.newline
        middle = edit.start + len(edit.before)
        after_start = middle + len(edit.removed)
        replacement = "".join(
            [line + newline for line in variant.lines[edit.start : middle]]
            + [line + newline for line in self.written]
            + [line + newline for line in variant.lines[after_start : edit.end]]
        )
        text = variant.text
        return text[: variant.offset(edit.start)] + replacement + text[variant.offset(edit.end) :]


# ---------------------------------------------------------------------------- perturbations


def _shift(lines: Iterable[str], category: str) -> tuple[str, ...] | None:
    shifted = []
    for line in lines:
        if not line.strip():
            shifted.append(line)
        elif category == "tab-prefix":
            shifted.append("\t" + line)
        elif category.startswith("indent+"):
            shifted.append(" " * int(category[len("indent+") :]) + line)
        else:
            width = int(category[len("indent-") :])
            if not line.startswith(" " * width):
                return None
            shifted.append(line[width:])
    return tuple(shifted)


def _curly(line: str) -> str:
    out = []
    double_open = True
    for char in line:
        if char == "'":
            out.append("\u2019")
        elif char == '"':
            out.append("\u201c" if double_open else "\u201d")
            double_open = not double_open
        else:
            out.append(char)
    return "".join(out)


def _dashed(line: str) -> str:
    if " - " in line:
        return line.replace(" - ", " \u2013 ")
    return line.replace("-", "\u2013", 1)


def mutate_token(line: str, rng: random.Random) -> str | None:
    """``line`` with one identifier changed the way a model mis-copies it, or None."""
    tokens = [token for token in _tokens(line) if len(token.group()) >= 3]
    if not tokens:
        return None
    token = rng.choice(tokens)
    name = token.group()
    if name.endswith("s") and len(name) > 3:
        changed = name[:-1]
    elif name.startswith("_") and len(name) > 3:
        changed = name[1:]
    elif rng.random() < 0.5:
        changed = name + "s"
    else:
        changed = name[0] + name[2] + name[1] + name[3:]
    if changed == name:
        changed = name + "x"
    return line[: token.start()] + changed + line[token.end() :]


def _context_line(edit: BaseEdit, rng: random.Random) -> tuple[str, int] | None:
    """A context line with a token to change: ("before" or "after", its index)."""
    places = [("before", n) for n, line in enumerate(edit.before) if mutate_token(line, random.Random(0))]
    places += [("after", n) for n, line in enumerate(edit.after) if mutate_token(line, random.Random(0))]
    return rng.choice(places) if places else None


def _replace(lines: tuple[str, ...], index: int, line: str) -> tuple[str, ...]:
    return lines[:index] + (line,) + lines[index + 1 :]


# ---------------------------------------------------------------------------- building


@dataclass
class _Variants:
    """The variants of one base file, made on first use."""

    file: BaseFile
    edits: list[BaseEdit]
    made: dict[str, Variant] = field(default_factory=dict)

    def get(self, kind: str) -> Variant:
        if kind not in self.made:
            self.made[kind] = self._make(kind)
        return self.made[kind]

    def _make(self, kind: str) -> Variant:
        lines = self.file.lines
        path = f"{kind}/{self.file.path}"
        if kind == "lf":
            return Variant(path, lines, "\n")
        if kind == "crlf":
            return Variant(path, lines, "\r\n")
        if kind in ("ws", "ws-crlf"):
            padded = tuple(line + _TRAILING[n % 3] if line.strip() else line for n, line in enumerate(lines))
            return Variant(path, padded, "\r\n" if kind == "ws-crlf" else "\n")
        if kind == "dup":
            copies: list[str] = []
            for edit in self.edits:
                copies.append("")
                copies.extend(lines[edit.start : edit.end])
            return Variant(path, lines + tuple(copies), "\n")
        raise ValueError(kind)


_VARIANT = {
    "crlf-file-lf-edit": "crlf",
    "trailing-ws-stripped": "ws",
    "combined": "ws-crlf",
    "ambiguous": "dup",
}


def _perturb(edit: BaseEdit, category: str, rng: random.Random) -> tuple[tuple[str, ...], ...] | None:
    """(before_old, before_new, removed, added, after_old, after_new, written), or None."""
    before, removed, added, after = edit.before, edit.removed, edit.added, edit.after
    if category in ("exact", "crlf-file-lf-edit"):
        return before, before, removed, added, after, after, added
    if category in ("indent+4", "indent-4", "indent+8", "indent-8", "tab-prefix"):
        parts = [_shift(part, category) for part in (before, removed, added, after)]
        if any(part is None for part in parts):
            return None
        b, r, a, f = (part or () for part in parts)
        return b, b, r, a, f, f, added
    if category in ("trailing-ws-stripped", "combined"):
        b, r, a, f = (tuple(line.rstrip() for line in part) for part in (before, removed, added, after))
        written = a
        if category == "combined":
            b, r, a, f = (_shift(part, "indent+4") or () for part in (b, r, a, f))
            b, f = (tuple(_dashed(_curly(line)) for line in part) for part in (b, f))
        return b, b, r, a, f, f, written
    if category in ("curly-quotes-in-context", "dashes-in-context"):
        change = _curly if category.startswith("curly") else _dashed
        b, f = (tuple(change(line) for line in part) for part in (before, after))
        if (b, f) == (before, after):
            return None
        return b, b, removed, added, f, f, added
    if category in ("token-changed-in-context", "token-miscopied-in-old"):
        place = _context_line(edit, rng)
        if place is None:
            return None
        side, index = place
        part = before if side == "before" else after
        changed = mutate_token(part[index], rng)
        assert changed is not None
        old_part = _replace(part, index, changed)
        new_part = old_part if category == "token-changed-in-context" else part
        if side == "before":
            return old_part, new_part, removed, added, after, after, added
        return before, before, removed, added, old_part, new_part, added
    if category == "ambiguous":
        if rng.random() < 0.5:
            return before, before, removed, added, after, after, added
        shifted = [_shift(part, "indent+4") or () for part in (before, removed, added, after)]
        return shifted[0], shifted[0], shifted[1], shifted[2], shifted[3], shifted[3], added
    if category == "absent":
        kept = {line.strip() for line in added}
        choices = [
            n for n, line in enumerate(removed) if line.strip() not in kept and mutate_token(line, rng)
        ]
        if not choices:
            return None
        index = rng.choice(choices)
        changed = mutate_token(removed[index], rng)
        assert changed is not None
        return before, before, _replace(removed, index, changed), added, after, after, added
    raise ValueError(category)


def build_cases(edits: list[BaseEdit], categories: Iterable[str] | None = None) -> list[Case]:
    """Every applicable (edit, category) case, deterministic for a given list of edits."""
    names = list(categories) if categories is not None else [category.name for category in CATEGORIES]
    by_file: dict[str, _Variants] = {}
    for edit in edits:
        by_file.setdefault(edit.file.path, _Variants(edit.file, [])).edits.append(edit)
    cases: list[Case] = []
    for edit_number, edit in enumerate(edits):
        variants = by_file[edit.file.path]
        for category_number, name in enumerate(names):
            rng = random.Random(edit_number * 1009 + category_number)
            parts = _perturb(edit, name, rng)
            if parts is None:
                continue
            before_old, before_new, removed, added, after_old, after_new, written = parts
            variant = variants.get(_VARIANT.get(name, "lf"))
            case = Case(
                len(cases),
                name,
                edit,
                variant,
                before_old,
                before_new,
                removed,
                added,
                after_old,
                after_new,
                written,
                _BY_NAME[name].expect,
                False,
            )
            if not _usable(case, name):
                continue
            third = (edit_number + category_number) % 3
            if third == 0 and _strippable(case):
                case = replace(case, strip_final_newline=True)
            elif third == 1 and _mid_line_startable(case):
                case = replace(case, start_mid_line=True)
            cases.append(case)
    return cases


def _usable(case: Case, name: str) -> bool:
    old, new = case.old, case.new
    if old == new:
        return False
    occurrences = case.variant.text.count(old)
    if name == "exact":
        return occurrences == 1
    if name == "ambiguous":
        if old == case.edit.old:
            return occurrences >= 2
        return occurrences == 0 and not set(case.removed) & set(case.added)
    if occurrences:
        return False
    return name == "absent" or not set(case.removed) & set(case.added)


def _strippable(case: Case) -> bool:
    old, new = case.old, case.new
    if not new.endswith("\n") or len(old) < 2:
        return False
    text = case.variant.text
    return text.count(old[:-1]) == text.count(old)


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _mid_line_startable(case: Case) -> bool:
    """The pair may start after the first line's indentation: a context line, indented alike on
    both sides, and no more occurrences of old than with the indentation."""
    if not case.before_old or not case.before_old[0].strip():
        return False
    if case.before_old[0] != case.variant.lines[case.edit.start].rstrip():
        return False  # shifted indentation: where a mid-line start begins is not written down
    indentation = _indentation(case.before_old[0])
    if not indentation or _indentation(case.before_new[0]) != indentation:
        return False
    old = case.old
    text = case.variant.text
    return text.count(old[len(indentation) :]) == text.count(old)


# ---------------------------------------------------------------------------- dialects


def _body(case: Case) -> list[str]:
    lines: list[str] = []
    for old_part, new_part, changed in (
        (case.before_old, case.before_new, False),
        (case.removed, case.added, True),
        (case.after_old, case.after_new, False),
    ):
        if changed:
            lines += ["-" + line for line in old_part] + ["+" + line for line in new_part]
            continue
        for old_line, new_line in zip(old_part, new_part, strict=True):
            lines += [" " + old_line] if old_line == new_line else ["-" + old_line, "+" + new_line]
    return lines


def render(case: Case, dialect: str) -> tuple[str, str] | str:
    """What the model sends: (old, new) for ``edit``, else the change text."""
    path = case.variant.path
    if dialect == "edit":
        old, new = case.old, case.new
        if case.start_mid_line:
            indentation = len(_indentation(case.before_old[0]))
            return old[indentation:], new[indentation:]
        return (old[:-1], new[:-1]) if case.strip_final_newline else (old, new)
    if dialect == "search_replace":
        return f"{path}\n<<<<<<< SEARCH\n{case.old}=======\n{case.new}>>>>>>> REPLACE\n"
    body = "".join(line + "\n" for line in _body(case))
    if dialect == "apply_patch":
        return f"*** Begin Patch\n*** Update File: {path}\n@@\n{body}*** End Patch\n"
    if dialect == "unified":
        start = case.edit.start + 1
        old_count = case.old.count("\n")
        new_count = case.new.count("\n")
        return f"--- a/{path}\n+++ b/{path}\n@@ -{start},{old_count} +{start},{new_count} @@\n{body}"
    raise ValueError(dialect)


def expectation(case: Case, dialect: str) -> str:
    """ "recover" or "refuse": a unified diff's line number places an ambiguous edit.

    A context token changed on both sides is a conflict where nothing but the text
    places the edit (the model believes the file says something it does not, issue 21:
    copying the file's line would drop that part of the change), so it is refused; a
    unified diff's line number places it, and the file's line is kept as GNU patch keeps it.
    """
    if case.category == "ambiguous" and dialect == "unified":
        return "recover"
    if case.category == "token-changed-in-context" and dialect != "unified":
        return "refuse"
    return case.expect
