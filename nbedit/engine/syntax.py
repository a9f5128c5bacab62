"""The syntax guard: a change placed leniently must not break a file that parsed.

Leniency decides *where* a change goes, never *what* is written; this stage checks
the result of that decision for the languages nbedit can check cheaply. Python
(``.py``/``.pyi``, and a notebook's code cells when its kernel is Python) is parsed
with ``ast``; JSON (``.json``) with ``json``. When a hunk was placed by a lenient
tier (anything but the exact one) and the result no longer parses where the
original did, the plan is refused with the reason ("the result would not parse:
line N ..."): a re-indented block landing at the wrong depth, a curly quote left in
code, a half-kept line. A change found exactly is the caller's own text and is
written as asked, with a note when it breaks parsing.

Cost: parsing a whole 10,000-line module takes tens to hundreds of milliseconds, so
Python is checked one *block* at a time: the run of sibling statements around each
change (from the nearest statement line above it no deeper than any line it touches,
to the next line as shallow below it), dedented, before and after the change: a few
hundred microseconds for a method of a big class (``benchmarks.bench_syntax.py``).
When that excerpt does not stand alone in the original (a line of a triple-quoted
string at column 0, say), the top-level statements around the change are tried, then
the whole file. A problem found in an excerpt is confirmed on the whole file before it
is reported, so only a refusal pays for a full parse, and its line number is the file's. JSON is
parsed whole (C speed) and skipped above ``JSON_LIMIT``; other files are never
looked at, so the guard stays off the hot path of large non-Python files.
"""

from __future__ import annotations

from collections.abc import Sequence

from nbedit._dataclass import dataclass

__all__ = [
    "CURLY_QUOTES",
    "JSON_LIMIT",
    "SyntaxProblem",
    "language_of",
    "notebook_problem",
    "straightened",
    "text_problem",
]

JSON_LIMIT = 8 << 20  # characters: a larger JSON file is not parsed twice for a guard
_PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")
# a column-0 line that starts a statement (not a comment, a closing bracket or a blank): a character
# after a newline that is none of these (``\s`` is ``str.isspace``); the pattern, for the record, is
# r"\n(?=[^\s#)\]}])", read by hand in ``_statement_end`` (re stays off an edit's way: start-up time)
_NOT_A_START = "#)]}"
# column-0 lines that continue the statement above them
_CONTINUATION = ("else", "elif", "except", "finally", "case ", "@")


CURLY_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def straightened(new: str, old: str) -> str | None:
    """``new`` with the curly quotes of the lines it adds (lines not in ``old``) made straight; None if none.

    A chat interface curls every quote of a reply; in Python a curly quote outside a string
    is a syntax error, so where the result would not parse *and* the straightened one
    does, the quotes were the interface's, not the model's (the callers check both). Lines
    the change keeps are the file's and are never touched.
    """
    if not any(char in new for char in "\u2018\u2019\u201c\u201d"):
        return None
    kept = set(old.splitlines())
    lines = new.splitlines(keepends=True)
    changed = [line if line.rstrip("\r\n") in kept else line.translate(CURLY_QUOTES) for line in lines]
    result = "".join(changed)
    return result if result != new else None


@dataclass(frozen=True, slots=True)
class SyntaxProblem:
    """Why a text does not parse: 1-based ``line`` in the whole text (or cell) and the parser's words."""

    line: int
    message: str
    where: str = ""  # "cell 3" in a notebook

    def describe(self) -> str:
        place = f"{self.where}, line {self.line}" if self.where else f"line {self.line}"
        return f"the result would not parse: {place}: {self.message}"


def language_of(path: str) -> str | None:
    lowered = path.lower()
    if lowered.endswith(_PYTHON_SUFFIXES):
        return "python"
    if lowered.endswith(".json"):
        return "json"
    return None


def text_problem(
    path: str, before: str, after: str, spans: Sequence[tuple[int, int, str]]
) -> SyntaxProblem | None:
    """A parse error the change brings into a text that parsed; None if it parses, or never did.

    ``spans`` are the changes as ``(start, end, replacement)``: character offsets into
    ``before``, in file order, not overlapping.
    """
    language = language_of(path)
    if language == "python":
        return _python_problem(before, after, spans)
    if language == "json" and len(before) <= JSON_LIMIT:
        return _json_problem(before, after)
    return None


def notebook_problem(
    before_cells: dict[int, str], after_cells: Sequence[tuple[int | None, str]]
) -> SyntaxProblem | None:
    """The first code cell the change makes unparseable (``after_cells``: (index or None, source))."""
    for index, source in after_cells:
        original = before_cells.get(index) if index is not None else None
        if original == source:
            continue
        cleaned = _without_magics(source)
        if cleaned is None:
            continue
        if original is not None:
            cleaned_before = _without_magics(original)
            if cleaned_before is None or _python_error(cleaned_before) is not None:
                continue  # it did not parse before: nothing to guard
        error = _python_error(cleaned)
        if error is not None:
            where = f"cell {index}" if index is not None else "a new cell"
            return SyntaxProblem(error[0], error[1], where)
    return None


# --------------------------------------------------------------------------- Python


def _python_error(source: str) -> tuple[int, str] | None:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like are not ours to report
            compile(source, "<change>", "exec", 0x400, dont_inherit=True)  # ast.PyCF_ONLY_AST
    except SyntaxError as error:  # IndentationError and TabError are SyntaxErrors
        return (error.lineno or 1), f"{type(error).__name__}: {error.msg}"
    except (ValueError, MemoryError, RecursionError) as error:
        return 1, f"{type(error).__name__}: {error}"
    return None


def _python_problem(before: str, after: str, spans: Sequence[tuple[int, int, str]]) -> SyntaxProblem | None:
    if not spans:
        return None
    blocks = [_block(before, start, end, replacement) for start, end, replacement in spans]
    if all(block is not None for block in blocks) and all(
        blocks[number][1] <= blocks[number + 1][0]
        for number in range(len(blocks) - 1)  # type: ignore[index]
    ):
        for span, block in zip(spans, blocks, strict=True):
            assert block is not None
            first, last, level = block
            judged = _judge(before, spans, first, last, [span], level)
            if isinstance(judged, SyntaxProblem):
                return _whole(before, after)  # confirmed on the whole file (the rare refusing path)
            if judged is False:
                return _top_level_problem(before, after, spans)
        return None
    return _top_level_problem(before, after, spans)


def _top_level_problem(
    before: str, after: str, spans: Sequence[tuple[int, int, str]]
) -> SyntaxProblem | None:
    for first, last, group in _groups(before, spans):
        judged = _judge(before, spans, first, last, group, "")
        if judged is not None:
            return _whole(before, after)  # a problem is confirmed on the whole file; or it is judged whole
    return None


def _judge(
    before: str,
    spans: Sequence[tuple[int, int, str]],
    first: int,
    last: int,
    group: Sequence[tuple[int, int, str]],
    level: str,
) -> SyntaxProblem | bool | None:
    """None: the excerpt parses after the change; a problem; or False: the excerpt cannot stand alone."""
    excerpt = _dedented(before[first:last], level)
    if excerpt is None or _python_error(excerpt) is not None:
        return False
    changed = _dedented(_spliced(before, first, last, group), level)
    if changed is None:
        return False  # the change reaches outside the block: judge a wider excerpt
    error = _python_error(changed)
    if error is None:
        return None
    return SyntaxProblem(_after_line(before, spans, first) + error[0] - 1, error[1])


def _dedented(text: str, level: str) -> str | None:
    """``text`` with ``level`` removed from every line (None when a non-blank line lacks it)."""
    if not level:
        return text
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if line.startswith(level):
            lines[number] = line[len(level) :]
        elif line.strip(" \t\r\f"):
            if line.lstrip(" \t").startswith("#"):
                lines[number] = line.lstrip(" \t")
            else:
                return None
        else:
            lines[number] = ""
    return "\n".join(lines)


def _block(text: str, start: int, end: int, replacement: str) -> tuple[int, int, str] | None:
    """The smallest run of whole statements around one change: (first, last, their indentation).

    The statements are those at the indentation of the nearest statement line above the
    change that is no deeper than any line the change touches or writes; the run ends at
    the next line as shallow after it. None when the lines use tabs (judged whole instead).
    """
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end == -1 else line_end
    touched = text[line_start:line_end] + "\n" + text[line_start:start] + replacement
    depth = min(
        (len(line) - len(line.lstrip(" ")) for line in touched.split("\n") if line.strip()), default=0
    )
    if any("\t" in line[: len(line) - len(line.lstrip(" \t"))] for line in touched.split("\n")):
        return None
    position = line_start
    while True:
        line_end_here = text.find("\n", position)
        line = text[position : line_end_here if line_end_here != -1 else len(text)]
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        if body and indent <= depth and body[0] not in "#)]}\t\r" and not body.startswith(_CONTINUATION):
            break
        if position == 0:
            return 0, _statement_end(text, max(start, end)), ""
        position = text.rfind("\n", 0, position - 1) + 1
    level = " " * indent
    if not level:
        return position, _statement_end(text, max(start, end)), ""
    cursor = text.find("\n", max(start, end - 1, position))
    while cursor != -1:
        following = cursor + 1
        next_end = text.find("\n", following)
        line = text[following : next_end if next_end != -1 else len(text)]
        body = line.lstrip(" ")
        if body and body[0] not in "#)]}\r" and len(line) - len(body) <= indent:
            if not (len(line) - len(body) == indent and body.startswith(_CONTINUATION)):
                return position, following, level
        cursor = next_end
    return position, len(text), level


def _whole(before: str, after: str) -> SyntaxProblem | None:
    # the result first: when it parses (an excerpt that could not stand alone, the common case
    # here) the original need not be parsed at all; the original only decides a result that does not
    error = _python_error(after)
    if error is None or _python_error(before) is not None:
        return None
    return SyntaxProblem(error[0], error[1])


def _groups(
    text: str, spans: Sequence[tuple[int, int, str]]
) -> list[tuple[int, int, list[tuple[int, int, str]]]]:
    """Each change widened to whole top-level statements; changes sharing one are grouped."""
    groups: list[tuple[int, int, list[tuple[int, int, str]]]] = []
    for start, end, replacement in spans:
        first, last = _statement_start(text, start), _statement_end(text, max(start, end))
        if groups and first < groups[-1][1]:
            previous_first, previous_last, members = groups[-1]
            groups[-1] = (previous_first, max(previous_last, last), [*members, (start, end, replacement)])
        else:
            groups.append((first, last, [(start, end, replacement)]))
    return groups


def _statement_start(text: str, offset: int) -> int:
    """Offset of the column-0 statement line at or above ``offset`` (0: the file's start)."""
    position = text.rfind("\n", 0, offset) + 1 if offset else 0
    while position > 0:
        line_end = text.find("\n", position)
        line = text[position : line_end if line_end != -1 else len(text)]
        if line[:1] not in ("", " ", "\t", "\r", "#", ")", "]", "}") and not line.startswith(_CONTINUATION):
            return position
        position = text.rfind("\n", 0, position - 1) + 1
    return 0


def _statement_end(text: str, offset: int) -> int:
    """Offset of the next column-0 statement line after ``offset`` that does not continue it."""
    position = offset
    size = len(text)
    while True:
        position = text.find("\n", position)
        if position < 0:
            return size
        start = position + 1
        if start < size:
            first = text[start]
            starts = not first.isspace() and first not in _NOT_A_START
            if starts and not text.startswith(_CONTINUATION, start):
                return start
        position = start


def _spliced(text: str, first: int, last: int, group: Sequence[tuple[int, int, str]]) -> str:
    pieces: list[str] = []
    cursor = first
    for start, end, replacement in group:
        pieces.append(text[cursor:start])
        pieces.append(replacement)
        cursor = end
    pieces.append(text[cursor:last])
    return "".join(pieces)


def _after_line(before: str, spans: Sequence[tuple[int, int, str]], offset: int) -> int:
    """1-based line in the result where the excerpt starting at ``offset`` of ``before`` starts."""
    line = before.count("\n", 0, offset) + 1
    for start, end, replacement in spans:
        if start >= offset:
            break
        line += replacement.count("\n") - before.count("\n", start, end)
    return line


_MAGIC = r"(?m)^([ \t]*)([%!?]|[\w.]+\?{1,2}$)"  # compiled (and cached by re) at a notebook's first check


def _without_magics(source: str) -> str | None:
    """A code cell's source as Python: line magics and shell escapes blanked; None for a cell magic."""
    if source.lstrip().startswith("%%"):
        return None
    import re

    return re.sub(_MAGIC, lambda found: found.group(1) + "pass  # ", source)


# --------------------------------------------------------------------------- JSON


def _json_problem(before: str, after: str) -> SyntaxProblem | None:
    import json

    try:
        json.loads(before)
    except ValueError:
        return None
    try:
        json.loads(after)
    except ValueError as error:
        line = getattr(error, "lineno", 1)
        message = getattr(error, "msg", str(error))
        return SyntaxProblem(line, f"JSON: {message}")
    return None
