"""Mixed tab/space indentation drift: the reply's indentation mapped to the file's, level by level.

``transport.IndentUnit`` recovers the uniform case (every line: one width, one shift). Real files
and replies are often less tidy: a Python 2 module indents with 4 spaces, then a tab, then a tab and
4 spaces (a tab is 8 columns); Go and Makefiles indent with tabs and align with spaces after them;
a reply re-indents a tab file with 4 spaces a tab on some lines and 8 on others. Leniency may still
find the place (the indentation tier ignores indentation); what is written must not be a guess.

``IndentLevels`` is built from the *strong* line pairs (an old line and the file line it was found
at, equal but for indentation) as a table ``old indentation -> file indentation``. It is used only
when the table is a real mapping of levels:

- **consistent**: one old indentation never stands for two file indentations;
- **unambiguous**: two old indentations never stand for the same file indentation (the reply's
  levels would collapse), and deeper stays deeper (an old indentation that extends another is
  deeper in the file too, by columns with a tab counting 8);
- **explained**: at least one conversion rule (``_Rule``: N spaces a tab, a tab N spaces, or
  columns with tabs of N written tabs first as Python 2 code does, or the indentation as it is)
  accounts for a pair of the table that is not at column 0. A rule explaining only pairs another
  rule explains too is dropped (``_dominant_rules``).

An old line's indentation takes the table's entry (that is how it was found). A new line's
indentation is converted only when every reading agrees: the table's entry (if any) and the answer
of every rule that explains a pair. A reply that uses both 4 and 8 spaces for a tab leaves a new
line at 8 spaces meaning one tab or two: refused, naming the line and both readings. Nothing else is
adapted: the new text's characters after the indentation are the reply's.
"""

from __future__ import annotations

from collections.abc import Sequence

from nbedit._dataclass import dataclass

_WIDTHS = (2, 4, 8)
_COLUMNS = 8  # how deep an indentation is, to compare levels: a tab reaches the next multiple of 8


@dataclass(frozen=True, slots=True)
class _Rule:
    """One way to convert an indentation: ``kind`` is "tabs" (N spaces -> a tab), "spaces" (a tab ->
    N spaces), "columns" (columns with tabs of N, written tabs first, then spaces), "same"."""

    kind: str
    width: int = 0
    chars: frozenset[str] = frozenset(" \t")  # the characters of the old indentations it has read

    def convert(self, indent: str) -> str | None:
        if set(indent) - self.chars:
            return None  # a reply's tabs read as tabs say nothing about its spaces
        if self.kind == "same":
            return indent
        if self.kind == "tabs":
            if set(indent) - {" "} or len(indent) % self.width:
                return None
            return "\t" * (len(indent) // self.width)
        if self.kind == "spaces":
            if set(indent) - {"\t"}:
                return None
            return " " * (self.width * len(indent))
        columns = len(indent.expandtabs(self.width))
        return "\t" * (columns // self.width) + " " * (columns % self.width)

    def __str__(self) -> str:
        if self.kind == "tabs":
            return f"{self.width} spaces a tab"
        if self.kind == "spaces":
            return f"a tab {self.width} spaces"
        if self.kind == "columns":
            return f"tabs of {self.width} columns, then spaces"
        return "as written"


_RULES = (
    *(_Rule("tabs", width) for width in _WIDTHS),
    *(_Rule("spaces", width) for width in _WIDTHS),
    *(_Rule("columns", width) for width in (8, 4)),
    _Rule("same"),
)


def describe(indent: str) -> str:
    """``4 spaces``, ``1 tab``, ``1 tab and 4 spaces``, ``no indentation``."""
    if not indent:
        return "no indentation"
    tabs, spaces = indent.count("\t"), indent.count(" ")
    parts = [f"{tabs} tab{'s' if tabs != 1 else ''}"] if tabs else []
    if spaces:
        parts.append(f"{spaces} space{'s' if spaces != 1 else ''}")
    return " and ".join(parts)


def _depth(indent: str) -> int:
    return len(indent.expandtabs(_COLUMNS))


@dataclass(frozen=True, slots=True)
class IndentLevels:
    """The old text's indentation levels mapped to the file's (see the module docstring)."""

    table: tuple[tuple[str, str], ...]  # (old indentation, file indentation), by depth
    rules: tuple[_Rule, ...]  # the rules that explain at least one pair off column 0

    @classmethod
    def between(cls, pairs: Sequence[tuple[str, str]]) -> IndentLevels | str:
        """The mapping from (old indentation, file indentation) pairs, or why it is not one."""
        table: dict[str, str] = {}
        for old, file in pairs:
            if table.setdefault(old, file) != file:
                return (
                    f"the old text's {describe(old)} stands for both {describe(table[old])} and "
                    f"{describe(file)} in the file"
                )
        by_file: dict[str, str] = {}
        for old, file in table.items():
            if by_file.setdefault(file, old) != old:
                return (
                    f"the old text's {describe(by_file[file])} and {describe(old)} both stand for the "
                    f"file's {describe(file)}"
                )
        ordered = sorted(table.items(), key=lambda item: (_depth(item[0]), item[0]))
        for old, file in ordered:
            for deeper_old, deeper_file in ordered:
                if deeper_old != old and deeper_old.startswith(old) and _depth(deeper_file) <= _depth(file):
                    return (
                        f"the old text's {describe(deeper_old)} is deeper than its {describe(old)}, but the "
                        f"file's {describe(deeper_file)} is not deeper than its {describe(file)}"
                    )
        evidence = [(old, file) for old, file in ordered if old or file]
        rules = _dominant_rules(evidence)
        if not rules:
            return "no tabs-for-spaces conversion accounts for the old text's indentation"
        return cls(tuple(ordered), rules)

    def old(self, indent: str) -> str | None:
        """An old line's indentation as the file has it (the table: that is how it was found)."""
        return dict(self.table).get(indent)

    def new(self, indent: str) -> str | list[str]:
        """A new line's indentation in the file's style, or every differing reading of it."""
        readings: list[str] = []
        known = dict(self.table).get(indent)
        if known is not None:
            readings.append(known)
        for rule in self.rules:
            converted = rule.convert(indent)
            if converted is not None and converted not in readings:
                readings.append(converted)
        return readings[0] if len(readings) == 1 else readings

    def apply(self, line: str) -> str | None:
        """A new line moved into the file's indentation; None when the readings differ or none."""
        body = line.lstrip(" \t")
        if not body.strip():
            return line if not line.strip() else body
        converted = self.new(line[: len(line) - len(body)])
        return converted + body if isinstance(converted, str) else None

    def apply_old(self, line: str) -> str | None:
        body = line.lstrip(" \t")
        if not body.strip():
            return line if not line.strip() else body
        converted = self.old(line[: len(line) - len(body)])
        return None if converted is None else converted + body

    @property
    def removed(self) -> str:  # read by transport's message for a line that cannot move
        return ""

    def why_not(self, line: str) -> str:
        """Why a new line cannot be moved: its readings, or that no rule reads it."""
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        readings = self.new(indent)
        if isinstance(readings, list) and readings:
            shown = " or ".join(describe(reading) for reading in readings)
            return (
                f"its {describe(indent)} could mean {shown} in the file: the reply's old lines use more than "
                f"one indentation width ({self}); write the change in the file's indentation"
            )
        return (
            f"its {describe(indent)} is not a level the old text uses and no single conversion gives it "
            f"one ({self}); write the change in the file's indentation"
        )

    def __str__(self) -> str:
        shown = ", ".join(f"{describe(old)} -> {describe(file)}" for old, file in self.table if old or file)
        return f"mixed tab/space indentation ({shown})"


def _dominant_rules(evidence: Sequence[tuple[str, str]]) -> tuple[_Rule, ...]:
    """The rules that explain a pair, less those another rule explains more of (or as much,
    earlier in ``_RULES``): a Python 2 file's 4-space lines are "as written" only because its
    tabs-of-8-columns rule also writes them so, and a plain tab file read as columns is read
    as tabs."""
    explained = {
        rule: frozenset(n for n, (old, file) in enumerate(evidence) if rule.convert(old) == file)
        for rule in _RULES
    }
    plain = frozenset().union(*(explained[rule] for rule in _RULES if rule.kind != "columns"))
    # a columns rule only where the plain rules fall short (tabs then spaces in the file: Python 2)
    candidates = [
        rule for rule in _RULES if explained[rule] and (rule.kind != "columns" or explained[rule] - plain)
    ]
    kept = []
    for position, rule in enumerate(candidates):
        pairs = explained[rule]
        if any(
            pairs < explained[other] or (pairs == explained[other] and earlier < position)
            for earlier, other in enumerate(candidates)
            if other is not rule
        ):
            continue
        chars = frozenset("".join(evidence[n][0] for n in pairs))
        kept.append(_Rule(rule.kind, rule.width, chars))
    return tuple(kept)
