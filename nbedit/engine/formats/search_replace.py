"""Aider-style SEARCH/REPLACE blocks.

::

    path/to/file.py
    ```python
    <<<<<<< SEARCH
    old lines
    =======
    new lines
    >>>>>>> REPLACE
    ```

The marker rules are Aider's (``aider/coders/editblock_coder.py``): 5 to 9
marker characters, the line compared after stripping surrounding whitespace,
``<<<<<<< SEARCH>`` accepted, and the ``<<<<<<< ORIGINAL`` / ``>>>>>>> UPDATED``
markers of Aider's 2023 replies read as SEARCH / REPLACE. A block with more
than one ``=======`` line reads several ways; each reading is kept as an
alternative and the planner takes the one whose old text is in the file,
refusing when more than one is (never "the first divider"). A reading that
would write a divider line its old text does not have is dropped first (see
``_readings``): in real replies that line is a stray repeat of the divider.

The file path is found as a careful reader finds it (``_block_path``): the
last non-blank line before the block, looking past the code-block opener; an
opener's info string when it is a path (```` ```src/app.py ````), never a
language tag (```` ```python ````, ``<source>python``). Decorations models add
(backticks, ``**bold**``, a trailing colon, a Markdown ``#``) are stripped as
Aider's ``strip_filename`` does. Unlike Aider we refuse to read prose as a
path: a candidate with spaces that is not quoted in backticks is prose; the
one file it names is the block's path when nothing else says which file,
otherwise the block falls back to the previous block's path, then to
``default_path``, then to an error that says where to put the path. Prose
naming another file than that fallback is an error rather than a guess.
Backslashes in a path are kept as written; the planner decides which file
they name. Unlike Aider, a second ``<<<<<<< SEARCH`` inside an open block is
an error: it almost always means a ``>>>>>>> REPLACE`` line was lost, and
guessing where the block ends could edit the wrong lines.

Blocks of one file are grouped into one ``FileChange`` (in order, marked
``sequential``: each block applies to the text the previous blocks left, as
Aider applies them); files keep the order of their first block. An empty
SEARCH, or one of blank lines only (as Aider reads it), means "append, or
create the file" (``old=""``, ``at_end=True``).
"""

from __future__ import annotations

import re

from nbedit.engine.models import Change, FileChange, Hunk
from nbedit.errors import PatchSyntaxError

__all__ = ["DIALECT", "looks_like", "marker_line", "parse"]

DIALECT = "search_replace"

_HEAD = re.compile(r"<{5,9} (?:SEARCH|ORIGINAL)>?")
_DIVIDER = re.compile(r"={5,9}")
_UPDATED = re.compile(r">{5,9} (?:REPLACE|UPDATED)")
# A line that opens or closes a code block: a Markdown fence with its info string, or one of the
# XML-ish tags models wrap code in (``<source>python``, ``</source>``, ``<code>``). Never a path.
_FENCE_LINE = re.compile(r"(?:`{3,}|~{3,})(?P<info>.*)")
_TAG_LINE = re.compile(r"<(?P<closing>/?)(?:source|code|pre|codeblock)\b[^>]*>(?P<info>.*)", re.IGNORECASE)
_LOOKBACK = 6  # lines to walk back (past blanks and fences) for a path
# A word that names a file: directories and a stem, or a stem of 2+ characters alone ("e.g." is not one),
# then an extension.
_PATH_WORD = re.compile(
    r"(?:(?:[\w.\-]+[/\\])+[\w\-][\w.\-]*|[\w\-][\w.\-]*[\w\-])\.[A-Za-z][A-Za-z0-9]{0,7}"
)
# "File: src/app.py", "Path: `src/app.py`", "Updated file: src/app.py" (a few words, a colon, one path).
_LABEL_LINE = re.compile(
    r"(?:(?:new|updated|modified|edited|changed|target) )?(?:file|file ?name|path|in|changes (?:to|in))"
    r":\s*(?P<path>`?[^\s`]+`?):?",
    re.IGNORECASE,
)
# "src/app.py (new file)", "`src/app.py` (updated)": a path with a note in parentheses.
_ANNOTATED_PATH = re.compile(r"(?P<path>`?[^\s`()]+`?)\s*\([^()]*\)")
# A bare word on the path line that names a language, not a file (models put the fence's tag there).
_LANGUAGE_TAGS = frozenset(
    "python py python3 ipython javascript js jsx typescript ts tsx bash sh shell zsh console diff patch "  # noqa: SIM905
    "json yaml yml toml ini html xml css scss markdown md text txt plaintext sql go golang rust rs java "
    "kotlin c cpp c++ csharp cs ruby rb php swift r lua perl scala dockerfile makefile".split()
)
# The file suffixes a block tagged with a language may edit (a notebook holds Python too).
_PYTHON_SUFFIXES = (".py", ".pyi", ".pyw", ".pyx", ".ipynb")
_LANGUAGE_SUFFIXES = {
    "python": _PYTHON_SUFFIXES,
    "py": _PYTHON_SUFFIXES,
    "python3": _PYTHON_SUFFIXES,
    "javascript": (".js", ".mjs", ".cjs", ".jsx"),
    "js": (".js", ".mjs", ".cjs", ".jsx"),
    "typescript": (".ts", ".tsx", ".mts", ".cts"),
    "ts": (".ts", ".tsx", ".mts", ".cts"),
    "json": (".json", ".jsonc", ".json5", ".ipynb"),
    "yaml": (".yaml", ".yml"),
    "yml": (".yaml", ".yml"),
    "toml": (".toml",),
    "html": (".html", ".htm"),
    "css": (".css",),
    "rust": (".rs",),
    "go": (".go",),
}
# Files without an extension whose name may still end a line with a colon ("Makefile:").
_EXTENSIONLESS_FILES = frozenset(
    "Makefile GNUmakefile Dockerfile Containerfile Jenkinsfile Procfile Gemfile Rakefile Vagrantfile "  # noqa: SIM905
    "Pipfile Brewfile Justfile Caddyfile LICENSE README CHANGELOG AUTHORS NOTICE COPYING".split()
)
# Files whose titles are underlined with a line of '=' (reStructuredText). Markdown has '#' headings, and
# a stray divider after a line of a README or a requirements.txt looks just like a setext underline.
_UNDERLINED_SUFFIXES = (".rst", ".rest")


def marker_line(text: str) -> int | None:
    """0-based index of the first ``<<<<<<< SEARCH`` line, or None."""
    if ("SEARCH" not in text and "ORIGINAL" not in text) or "<<<<<" not in text:
        return None
    for index, line in enumerate(text.split("\n")):
        if _HEAD.fullmatch(line.strip()):
            return index
    return None


def looks_like(text: str) -> bool:
    return marker_line(text) is not None


def _error(
    message: str, line: int | None, hint: str | None = None, path: str | None = None
) -> PatchSyntaxError:
    return PatchSyntaxError(message, line=line, hint=hint, dialect=DIALECT, path=path)


def parse(text: str, *, default_path: str | None = None) -> Change:
    """Parse SEARCH/REPLACE blocks; ``default_path`` serves blocks that name no file."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    order: list[str] = []
    hunks_by_path: dict[str, list[Hunk]] = {}
    first_line: dict[str, int] = {}
    current_path: str | None = None
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        if _UPDATED.fullmatch(stripped):
            raise _error(
                "'>>>>>>> REPLACE' without an open '<<<<<<< SEARCH' block",
                index + 1,
                hint="each block is '<<<<<<< SEARCH', the old lines, '=======', the new lines, '>>>>>>> REPLACE'",
            )
        if not _HEAD.fullmatch(stripped):
            _refuse_other_dialects(lines, index)
            index += 1
            continue
        head_number = index + 1
        path = _block_path(lines, index, current_path, default_path)
        current_path = path
        body, dividers, index = _block_body(lines, index + 1, head_number)
        index += 1
        readings = _readings(body, dividers, path)
        search, replace = readings[0]
        if not search.strip():
            search = ""  # blank lines only: Aider's "append, or create the file" too
        hunk = Hunk(
            old=search,
            new=replace,
            whole_lines=True,
            at_end=not search,
            source_line=head_number,
            alternatives=tuple(readings[1:]),
        )
        if path not in hunks_by_path:
            order.append(path)
            hunks_by_path[path] = []
            first_line[path] = head_number
        hunks_by_path[path].append(hunk)
    if not order:
        raise _error(
            "no '<<<<<<< SEARCH' block found",
            None,
            hint="write blocks as: path line, '<<<<<<< SEARCH', old lines, '=======', new lines, '>>>>>>> REPLACE'",
        )
    files = tuple(
        FileChange(
            path=path,
            operation="update",
            hunks=tuple(hunks_by_path[path]),
            source_line=first_line[path],
            sequential=True,
        )
        for path in order
    )
    return Change(files=files, dialect=DIALECT)


def _block_path(lines: list[str], head_index: int, current_path: str | None, default_path: str | None) -> str:
    """The file the block at ``head_index`` edits, as a careful reader finds it.

    In order: a path line (or a fence's info string) just above the block, or a
    heading, bold line or label line there that names one file; a
    path the prose line just above names, when it is the only one it names, no
    earlier block or default says otherwise and it fits the block's language
    tag (```` ```python ```` edits no ``config.json``); the previous block's path; the
    default path. Prose that names a different file than the one the block
    would otherwise edit is refused: guessing which of the two is meant is how
    an edit lands in the wrong file.
    """
    head_number = head_index + 1
    named, prose, language = _find_path(lines, head_index)
    if named is not None:
        return named
    labelled = _labelled_path(prose) if prose is not None else None
    if labelled is not None:
        return labelled
    fallback = current_path or default_path
    mentioned = sorted(_named_paths(prose)) if prose is not None else []
    if fallback is None and len(mentioned) == 1 and _fits_language(mentioned[0], language):
        return mentioned[0]
    if prose is not None and fallback is not None and set(mentioned) - {fallback}:
        raise _error(
            f"the line before the block ({prose[:60]!r}) names another file than {fallback!r}",
            head_number,
            hint="put the file path alone on the line before the block (or before its ``` fence)",
        )
    if fallback is None:
        several = f" (the line above names {', '.join(mentioned)})" if mentioned else ""
        raise _error(
            f"the block does not say which file it edits{several}",
            head_number,
            hint="put the file path alone on the line before the block (or before its ``` fence), "
            "or name the file in scope (default_path=..., nbedit apply --path FILE, %%edit FILE)",
        )
    return fallback


def _readings(body: list[str], dividers: list[int], path: str) -> list[tuple[str, str]]:
    """The (old, new) ways of reading a block, split at each of its ``=======`` lines.

    A second divider is usually a stray line the model repeated. A reading that
    would write a divider line the old text does not have is dropped, unless it
    underlines a title in a reStructuredText file (``doc.rst``: ``Title`` over
    ``=======``, at least as long as the title): a stray divider is never
    written into code or prose, and a divider that is really the file's text (a
    conflict-marker fixture, an underline kept as context) is in the old text
    too, so it stays editable. When no reading is left to choose from, the last
    one (its new text has no divider) stands alone, and the planner refuses it
    unless the file really holds its old text.
    """
    readings = [("".join(body[:divider]), "".join(body[divider + 1 :])) for divider in dividers]
    if len(readings) == 1:
        return readings
    underlines = path.lower().endswith(_UNDERLINED_SUFFIXES)
    kept = [reading for reading in readings if not _writes_a_divider(*reading, underlines=underlines)]
    return kept or readings[-1:]


def _writes_a_divider(old: str, new: str, *, underlines: bool) -> bool:
    """Whether ``new`` has a divider line that ``old`` does not (and that is no title underline)."""
    old_lines = {line.strip() for line in old.split("\n") if _DIVIDER.fullmatch(line.strip())}
    new_lines = new.split("\n")
    for number, line in enumerate(new_lines):
        stripped = line.strip()
        if not _DIVIDER.fullmatch(stripped) or stripped in old_lines:
            continue
        above = new_lines[number - 1].strip() if number else ""
        if underlines and above and not _DIVIDER.fullmatch(above) and len(above) <= len(stripped):
            continue
        return True
    return False


def _refuse_other_dialects(lines: list[str], index: int) -> None:
    """Text between blocks may be prose, but never a diff or an apply_patch block.

    Planning only the SEARCH/REPLACE part of a reply that also carries a diff would
    silently drop part of the change; refusing says so instead.
    """
    line = lines[index]
    stripped = line.strip()
    following = lines[index + 1] if index + 1 < len(lines) else ""
    third = lines[index + 2] if index + 2 < len(lines) else ""
    other = None
    if stripped == "*** Begin Patch":
        other = "an apply_patch block"
    elif line.startswith("diff --git "):
        other = "a git diff"
    elif line.startswith("--- ") and following.startswith("+++ ") and third.startswith("@@"):
        other = "a unified diff"
    if other is not None:
        raise _error(
            f"this text mixes SEARCH/REPLACE blocks with {other}; only part of it would be applied",
            index + 1,
            hint="send the blocks and the other change separately (one %%patch cell or call each)",
        )


def _block_body(lines: list[str], start: int, head_number: int) -> tuple[list[str], list[int], int]:
    """The block's lines up to ``>>>>>>> REPLACE``, the positions of its divider lines, and the index of the end marker.

    A block normally has one ``=======`` line. More than one (a reStructuredText
    underline in the old or new text) gives several readings; the planner keeps
    the one whose old text is in the file and refuses when several are.
    """
    index = start
    body: list[str] = []
    dividers: list[int] = []
    while index < len(lines):
        stripped = lines[index].strip()
        if _UPDATED.fullmatch(stripped):
            if not dividers:
                raise _error(
                    f"'>>>>>>> REPLACE' before '=======' in the block opened at line {head_number}",
                    index + 1,
                    hint="separate the old lines from the new lines with a '=======' line",
                )
            return body, dividers, index
        if _HEAD.fullmatch(stripped):
            closing = ">>>>>>> REPLACE" if dividers else "======="
            raise _error(
                f"'<<<<<<< SEARCH' inside the block opened at line {head_number}, which has no '{closing}' yet",
                index + 1,
                hint=f"close each block with '{closing}' before starting the next one",
            )
        if _DIVIDER.fullmatch(stripped):
            dividers.append(len(body))
        body.append(lines[index] + "\n")
        index += 1
    closing = ">>>>>>> REPLACE" if dividers else "======="
    raise _error(
        f"the block opened at line {head_number} has no '{closing}' line (the text ends first)",
        head_number,
        hint=f"the block may be cut off; end it with '{closing}'",
    )


def _find_path(lines: list[str], head_index: int) -> tuple[str | None, str | None, str]:
    """(path, prose, language) named before the block at ``head_index``.

    The last non-blank line before the block, looking past code-block openers
    (```` ```python ````, ``<source>python``), is the path if it looks like one;
    if it is prose, it is returned as ``prose`` so the caller can read a path
    from it or check it does not name a different file. An opener's info string
    is a path only when it looks like one (```` ```src/app.py ````); a language
    tag never is, but is returned (lower case, "" when none) so a path read from
    prose can be checked against it.
    """
    index = head_index - 1
    steps = 0
    language = ""
    while index >= 0 and steps < _LOOKBACK:
        stripped = lines[index].strip()
        steps += 1
        index -= 1
        if not stripped:
            continue
        opener = _FENCE_LINE.fullmatch(stripped) or _TAG_LINE.fullmatch(stripped)
        if opener is not None:
            if opener.groupdict().get("closing"):
                return None, None, language  # '</source>': the previous block's end
            info = opener.group("info")
            tagged = _info_path(info)
            if tagged is not None:
                return tagged, None, language
            if info.strip() and not language:
                language = info.split()[0].strip("{}.").lower()
            if info.strip() or index < 0:
                continue  # an opener with a language tag; the path is above it
            # A bare fence: an opening fence (look above) or the previous block's closing one (stop).
            if _UPDATED.fullmatch(lines[index].strip()):
                return None, None, language
            continue
        if _HEAD.fullmatch(stripped) or _DIVIDER.fullmatch(stripped) or _UPDATED.fullmatch(stripped):
            return None, None, language
        path = _path_candidate(stripped)
        return (path, None, language) if path else (None, stripped, language)
    return None, None, language


def _labelled_path(prose: str) -> str | None:
    """The path a heading, a bold line or a label line gives the block below it.

    ``### Changes to `src/app.py```, ``**File: src/app.py**``, ``File: src/app.py``,
    ``src/app.py (new file)``:
    such a line says which file the next block edits as plainly as a path line
    does, so it is taken as one (and, like one, it overrides the previous
    block's file). It must name exactly one file.
    """
    line = prose.strip()
    heading = line.startswith("#")
    bold = len(line) > 4 and line[:2] in ("**", "__") and line.rstrip(":")[-2:] == line[:2]
    inner = line.lstrip("#").strip().rstrip(":")
    if bold:
        inner = inner[2:-2].strip().rstrip(":")
    label = _LABEL_LINE.fullmatch(inner) or _ANNOTATED_PATH.fullmatch(inner)
    if label is not None:
        name = label.group("path").strip("`'\"")
        known = _PATH_WORD.fullmatch(name) or "/" in name or name in _EXTENSIONLESS_FILES
        return name if known else None
    if heading or bold:
        names = _named_paths(line)
        return next(iter(names)) if len(names) == 1 else None
    return None


def _fits_language(path: str, language: str) -> bool:
    """Whether a file named in prose can be the one a code block tagged ``language`` edits.

    ```` ```python ```` under "uses the new `config.json`" edits a Python file,
    not the JSON file the prose mentions. Tags not listed here say nothing.
    """
    suffixes = _LANGUAGE_SUFFIXES.get(language)
    return suffixes is None or path.lower().endswith(suffixes)


def _info_path(info: str) -> str | None:
    """The path in a fence's info string (```` ```src/app.py ````, ```` ```python:src/app.py ````), if any."""
    words = [word.strip("`'\"") for word in info.replace(":", " ").split()]
    paths = [word.removeprefix("title=").strip("'\"") for word in words]
    paths = [word for word in paths if _PATH_WORD.fullmatch(word) or ("/" in word and "=" not in word)]
    return paths[0] if len(paths) == 1 else None


def _path_candidate(line: str) -> str | None:
    """Aider's ``strip_filename``, plus: prose (unquoted text with spaces) is not a path, nor is a
    tag (``<source>``), a language name (``python``) or a label (``Fix:``) standing alone.

    Backslashes are kept as written (``src\\app.py`` or a Markdown-escaped
    ``my\\_file.py``): which file they name is decided against the files there
    are, when the change is planned.
    """
    if line == "...":
        return None
    name = line.rstrip(":").lstrip("#").strip()
    quoted = len(name) > 1 and name.startswith("`") and name.endswith("`")
    name = name.strip("`").strip("*").strip("`").rstrip(":").strip()
    if not name:
        return None
    if not quoted and any(character.isspace() for character in name):
        return None
    if name.startswith("<") and name.endswith(">"):
        return None  # an XML-ish tag ('<source>'), never a file
    if not quoted and not any(character in name for character in "./\\"):
        # a bare word: a language tag ("python") or a label ("Fix:") unless it is a known file name
        if name in _EXTENSIONLESS_FILES:
            return name
        if name.lower() in _LANGUAGE_TAGS or line.rstrip().endswith(":"):
            return None
    return name


def _named_paths(prose: str) -> set[str]:
    """Words in a prose line that look like file paths (``src/app.py``, ``notes.md``)."""
    names = set()
    for word in prose.split():
        word = word.strip("`*'\"()[]{}<>,;:!?").rstrip(".")
        if _PATH_WORD.fullmatch(word):
            names.add(word)
    return names
