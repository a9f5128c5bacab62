"""Base edits for the drift corpus, taken from real code and never from nbedit.

Why real code: a matcher's mistakes come from what real files look like (repeated
idioms, blank lines, near-duplicate blocks, comments full of punctuation), so the
edits the corpus perturbs are cut from real files, in two ways:

1. **Real diffs.** Every hunk of the release diffs in
   ``tests/data/real-history/*-history.tar.xz`` (``patches/NNN-<old>-<new>.diff``,
   ``diff -ruN`` between consecutive sdists of packaging and click), applied to the
   file it was made from (``trees/<old>/<path>``). Each run of removed/added lines
   becomes one edit, with 1 or 2 lines of unchanged context on each side taken from
   that file. Only text sources (``.py``, ``.rst``, ``.txt``, ``.md``, ``.cfg``,
   ``.toml``, ``.ini``, ``.in``, ``.yml``, ``.yaml``; no ``PKG-INFO`` and no
   ``*.egg-info``), files that end with a newline and hold no ``\\r``, and runs of at
   most 12 removed and 12 added lines.
2. **Edits on the running interpreter's standard library.** The modules in
   ``STDLIB_MODULES`` (under ``sysconfig.get_paths()["stdlib"]``), edited at seeded
   random places the way people edit code: a token changed, a line deleted, a line
   inserted, a block wrapped in ``with ctx:`` or ``try:`` (the body only re-indented),
   a block dedented, punctuation changed (quote style; in a comment, a hyphen made
   an en dash or an apostrophe a curly one), an identifier renamed on two adjacent
   lines.

An edit is kept only if its old text (context + removed lines, whole lines) occurs
exactly once in its file, so its exact replacement is the one true answer. Context
starts at 1 or 2 lines (seeded) and grows to 2 when 1 is not unique.

Everything is deterministic: a ``random.Random`` seeded from the source's name.
Pure except for reading the archives and the stdlib files.
"""

from __future__ import annotations

import keyword
import random
import re
import sysconfig
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "HISTORY",
    "STDLIB_MODULES",
    "BaseEdit",
    "BaseFile",
    "base_edits",
    "history_edits",
    "stdlib_edits",
]

HISTORY = Path(__file__).resolve().parent.parent / "tests" / "data" / "real-history"
TEXT_SUFFIXES = (".py", ".rst", ".txt", ".md", ".cfg", ".toml", ".ini", ".in", ".yml", ".yaml")
MAX_CHANGED_LINES = 12

# A fixed list: what differs between interpreters is the text of the modules, never which ones.
STDLIB_MODULES = (
    "argparse.py",
    "ast.py",
    "base64.py",
    "bisect.py",
    "calendar.py",
    "cmd.py",
    "code.py",
    "codecs.py",
    "colorsys.py",
    "configparser.py",
    "contextlib.py",
    "copy.py",
    "csv.py",
    "dataclasses.py",
    "difflib.py",
    "dis.py",
    "email/message.py",
    "email/utils.py",
    "enum.py",
    "filecmp.py",
    "fileinput.py",
    "fnmatch.py",
    "fractions.py",
    "ftplib.py",
    "functools.py",
    "getopt.py",
    "gettext.py",
    "glob.py",
    "gzip.py",
    "heapq.py",
    "hmac.py",
    "html/parser.py",
    "http/client.py",
    "http/cookies.py",
    "imaplib.py",
    "inspect.py",
    "ipaddress.py",
    "json/decoder.py",
    "json/encoder.py",
    "logging/__init__.py",
    "logging/handlers.py",
    "mailbox.py",
    "netrc.py",
    "ntpath.py",
    "numbers.py",
    "operator.py",
    "optparse.py",
    "pathlib.py",
    "pickle.py",
    "platform.py",
    "plistlib.py",
    "posixpath.py",
    "pprint.py",
    "queue.py",
    "random.py",
    "reprlib.py",
    "sched.py",
    "selectors.py",
    "shlex.py",
    "shutil.py",
    "smtplib.py",
    "socket.py",
    "statistics.py",
    "string.py",
    "subprocess.py",
    "tarfile.py",
    "tempfile.py",
    "textwrap.py",
    "threading.py",
    "timeit.py",
    "tokenize.py",
    "trace.py",
    "traceback.py",
    "types.py",
    "typing.py",
    "urllib/parse.py",
    "uuid.py",
    "warnings.py",
    "weakref.py",
    "zipapp.py",
)
STDLIB_EDITS_PER_MODULE = 110

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INSERTED = (
    'logger.debug("checkpoint %s", {name})',
    "{name} = None",
    "assert {name} is not None",
    "# keep {name} for the caller",
    "_unused = {name}",
)


@dataclass(frozen=True, slots=True)
class BaseFile:
    """A real file the edits are made against: ``path`` in the workspace, LF text."""

    path: str
    text: str
    lines: tuple[str, ...]  # without their "\n"; the text is every line + "\n"


@dataclass(frozen=True, slots=True)
class BaseEdit:
    """One true edit: lines ``[start, start + len(before + removed + after))`` of the file.

    ``before``/``after`` are unchanged context; ``removed`` becomes ``added``.
    """

    file: BaseFile
    source: str  # where the edit comes from, for repros ("click 7.0->7.1 CHANGES.rst", "stdlib wrap-with")
    kind: str  # "real-diff", or the stdlib edit kind
    start: int  # 0-based first line of ``before``
    before: tuple[str, ...]
    removed: tuple[str, ...]
    added: tuple[str, ...]
    after: tuple[str, ...]

    @property
    def old(self) -> str:
        return "".join(line + "\n" for line in self.before + self.removed + self.after)

    @property
    def new(self) -> str:
        return "".join(line + "\n" for line in self.before + self.added + self.after)

    @property
    def end(self) -> int:
        """0-based line after the edit's last line."""
        return self.start + len(self.before) + len(self.removed) + len(self.after)


def _base_file(path: str, text: str) -> BaseFile | None:
    if not text or not text.endswith("\n") or "\r" in text or "\ufeff" in text or "\x00" in text:
        return None
    return BaseFile(path, text, tuple(text[:-1].split("\n")))


def _occurs_once(text: str, part: str) -> bool:
    first = text.find(part)
    return first >= 0 and text.find(part, first + 1) < 0


def _with_context(
    file: BaseFile,
    position: int,
    end: int,
    added: tuple[str, ...],
    rng: random.Random,
    source: str,
    kind: str,
) -> BaseEdit | None:
    """The edit replacing lines ``[position, end)`` by ``added``, with unique 1-2 line context."""
    first = rng.choice((1, 2))
    for context in range(first, 3):
        start = max(0, position - context)
        stop = min(len(file.lines), end + context)
        edit = BaseEdit(
            file,
            source,
            kind,
            start,
            file.lines[start:position],
            file.lines[position:end],
            added,
            file.lines[end:stop],
        )
        if edit.old != edit.new and _occurs_once(file.text, edit.old):
            return edit
    return None


# ---------------------------------------------------------------------------- real diffs


def _hunks(patch: str) -> Iterator[tuple[str, int, list[str]]]:
    """(path, 0-based old start line, body lines) of every hunk of a ``diff -ruN`` patch."""
    path = ""
    lines = patch.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("--- a/"):
            path = line[len("--- a/") :].split("\t", 1)[0]
        elif line.startswith("@@ -"):
            old_range, new_range = (part[1:].split(",", 1) for part in line.split()[1:3])
            old_start = int(old_range[0])
            old_left = int(old_range[1]) if len(old_range) > 1 else 1
            new_left = int(new_range[1]) if len(new_range) > 1 else 1
            body: list[str] = []
            index += 1
            while index < len(lines) and (old_left > 0 or new_left > 0 or lines[index].startswith("\\")):
                body.append(lines[index])
                kind = lines[index][:1]
                old_left -= kind in (" ", "-")
                new_left -= kind in (" ", "+")
                index += 1
            yield path, old_start - 1, body
            continue
        index += 1


def history_edits() -> list[BaseEdit]:
    """Every usable change run of every release diff in the real-history archives."""
    edits: list[BaseEdit] = []
    for archive_path in sorted(HISTORY.glob("*-history.tar.xz")):
        project = archive_path.name[: -len("-history.tar.xz")]
        with tarfile.open(archive_path) as archive:
            members = {member.name: member for member in archive.getmembers() if member.isfile()}
            patches = sorted(name for name in members if name.startswith("patches/"))
            for patch_name in patches:
                _, old_version, new_version = Path(patch_name).stem.split("-", 2)
                extracted = archive.extractfile(members[patch_name])
                assert extracted is not None
                patch = extracted.read().decode("utf-8")
                rng = random.Random(f"{project}-{patch_name}")
                files: dict[str, BaseFile | None] = {}
                for path, old_start, body in _hunks(patch):
                    if not path.endswith(TEXT_SUFFIXES) or ".egg-info/" in path:
                        continue
                    if any(line.startswith("\\") for line in body):
                        continue  # "\ No newline at end of file": the end of a file without one
                    if path not in files:
                        member = members.get(f"trees/{old_version}/{path}")
                        file = None
                        if member is not None:
                            handle = archive.extractfile(member)
                            assert handle is not None
                            try:
                                text = handle.read().decode("utf-8")
                            except UnicodeDecodeError:
                                text = ""
                            file = _base_file(f"history/{project}-{old_version}/{path}", text)
                        files[path] = file
                    file = files[path]
                    if file is None:
                        continue
                    source = f"{project} {old_version}->{new_version} {path}"
                    edits.extend(_runs(file, old_start, body, rng, source))
    return edits


def _runs(
    file: BaseFile, old_start: int, body: list[str], rng: random.Random, source: str
) -> Iterator[BaseEdit]:
    """One edit per run of removed/added lines of a hunk."""
    position = old_start
    index = 0
    while index < len(body):
        line = body[index]
        if line.startswith(" "):
            if position >= len(file.lines) or file.lines[position] != line[1:]:
                return  # the hunk does not fit the file it was made from: not a usable source
            position += 1
            index += 1
            continue
        removed: list[str] = []
        added: list[str] = []
        while index < len(body) and body[index][:1] in ("-", "+"):
            (removed if body[index].startswith("-") else added).append(body[index][1:])
            index += 1
        end = position + len(removed)
        if tuple(file.lines[position:end]) != tuple(removed):
            return
        if len(removed) <= MAX_CHANGED_LINES and len(added) <= MAX_CHANGED_LINES:
            edit = _with_context(file, position, end, tuple(added), rng, source, "real-diff")
            if edit is not None:
                yield edit
        position = end


# ---------------------------------------------------------------------------- stdlib edits


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _tokens(line: str) -> list[re.Match[str]]:
    return [m for m in _IDENTIFIER.finditer(line) if not keyword.iskeyword(m.group()) and len(m.group()) > 1]


def _simple_block(lines: tuple[str, ...], position: int, rng: random.Random) -> tuple[int, str] | None:
    """End of 1-4 simple statements at one indentation starting at ``position``, and that indentation."""
    indent = _indent(lines[position])
    length = rng.randint(1, 4)
    end = position
    while end < len(lines) and end - position < length:
        line = lines[end]
        stripped = line.strip()
        if not stripped or _indent(line) != indent:
            break
        if stripped.endswith((":", "\\", ",", "(", "[", "{")) or '"""' in line or "'''" in line:
            break
        if stripped.startswith(("@", "elif", "else", "except", "finally", "#")):
            break
        if any(line.count(a) != line.count(b) for a, b in ("()", "[]", "{}")):
            break
        end += 1
    if end == position:
        return None
    if end < len(lines) and lines[end].strip() and len(_indent(lines[end])) > len(indent):
        return None  # the block would be cut from its own continuation or body
    return end, indent


def _edit_token(
    lines: tuple[str, ...], position: int, rng: random.Random
) -> tuple[int, tuple[str, ...]] | None:
    tokens = _tokens(lines[position])
    if not tokens:
        return None
    token = rng.choice(tokens)
    name = token.group()
    replacement = rng.choice(
        (name + "_new", "new_" + name, name + "s", name.upper() if len(name) < 8 else name[:-1])
    )
    line = lines[position]
    return position + 1, (line[: token.start()] + replacement + line[token.end() :],)


def _edit_insert(
    lines: tuple[str, ...], position: int, rng: random.Random
) -> tuple[int, tuple[str, ...]] | None:
    line = lines[position]
    if not line.strip():
        return None
    indent = _indent(line) + ("    " if line.rstrip().endswith(":") else "")
    tokens = _tokens(line)
    name = rng.choice(tokens).group() if tokens else "value"
    return position, (indent + rng.choice(_INSERTED).format(name=name),)


def _stdlib_edit(file: BaseFile, position: int, kind: str, rng: random.Random) -> BaseEdit | None:
    lines = file.lines
    line = lines[position]
    source = f"stdlib {kind} {file.path}"
    if kind == "token":
        if not line.strip():
            return None
        result = _edit_token(lines, position, rng)
        return result and _with_context(file, position, result[0], result[1], rng, source, kind)
    if kind == "delete":
        if not line.strip():
            return None
        return _with_context(file, position, position + 1, (), rng, source, kind)
    if kind == "insert":
        inserted = _edit_insert(lines, position, rng)
        if inserted is None:
            return None
        return _with_context(file, position + 1, position + 1, inserted[1], rng, source, kind)
    if kind in ("wrap-with", "wrap-try", "dedent"):
        block = _simple_block(lines, position, rng)
        if block is None:
            return None
        end, indent = block
        body = lines[position:end]
        if kind == "wrap-with":
            added = (indent + "with ctx:", *("    " + row for row in body))
        elif kind == "wrap-try":
            added = (
                indent + "try:",
                *("    " + row for row in body),
                indent + "except Exception:",
                indent + "    pass",
            )
        else:
            if not indent.startswith("    ") or lines[position - 1].rstrip().endswith(":"):
                return None  # dedent the tail of a block out of it, never the head of a body
            added = tuple(row[4:] for row in body)
        return _with_context(file, position, end, added, rng, source, kind)
    if kind == "punctuation":
        # the next comment line within 40 lines, else this line: comments are where typography changes
        for place in range(position, min(position + 40, len(lines))):
            if "#" in lines[place]:
                position, line = place, lines[place]
                break
        changed = _punctuated(line, rng)
        if changed is None:
            return None
        return _with_context(file, position, position + 1, (changed,), rng, source, kind)
    if kind == "rename":
        if position + 1 >= len(lines):
            return None
        shared = sorted(
            {m.group() for m in _tokens(line)} & {m.group() for m in _tokens(lines[position + 1])}
        )
        if not shared:
            return None
        name = rng.choice(shared)
        pattern = re.compile(rf"\b{re.escape(name)}\b")
        renamed = name + "_renamed"
        added = (pattern.sub(renamed, line), pattern.sub(renamed, lines[position + 1]))
        return _with_context(file, position, position + 2, added, rng, source, kind)
    raise ValueError(kind)


def _punctuated(line: str, rng: random.Random) -> str | None:
    """The line with only its punctuation changed, or None when it has none to change.

    Typographic changes in prose (a hyphen in a comment made an en dash, an
    apostrophe made a curly one) are invisible to the Unicode-punctuation tier, so
    they test that a change is kept where the matcher looks past it.
    """
    changes: list[str] = []
    comment = line.find("#")
    if comment >= 0:
        prose = line[comment:]
        hyphen = re.search(r"(?<=\w)-(?=\w)| - ", prose)
        if hyphen:
            changes.append(
                line[: comment + hyphen.start()] + prose[hyphen.start() :].replace("-", "\u2013", 1)
            )
        apostrophe = re.search(r"(?<=\w)'(?=\w)", prose)
        if apostrophe:
            changes.append(
                line[: comment + apostrophe.start()] + "\u2019" + line[comment + apostrophe.end() :]
            )
    single = re.search(r"'([^'\"\\]*)'", line)
    if single and comment < 0:
        changes.append(line[: single.start()] + '"' + single.group(1) + '"' + line[single.end() :])
    double = re.search(r'"([^\'"\\]*)"', line)
    if double and comment < 0 and '"""' not in line:
        changes.append(line[: double.start()] + "'" + double.group(1) + "'" + line[double.end() :])
    return rng.choice(changes) if changes else None


STDLIB_KINDS = ("token", "delete", "insert", "wrap-with", "wrap-try", "dedent", "punctuation", "rename")


def stdlib_edits(per_module: int = STDLIB_EDITS_PER_MODULE) -> list[BaseEdit]:
    """Seeded edits of the fixed stdlib modules (a module missing in this Python is left out)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    edits: list[BaseEdit] = []
    for name in STDLIB_MODULES:
        path = root / name
        if not path.is_file():
            continue
        file = _base_file(f"stdlib/{name}", path.read_text(encoding="utf-8"))
        if file is None:
            continue
        rng = random.Random(zlib.crc32(name.encode()))
        made = 0
        attempts = 0
        while made < per_module and attempts < per_module * 6:
            attempts += 1
            kind = STDLIB_KINDS[attempts % len(STDLIB_KINDS)]
            edit = _stdlib_edit(file, rng.randrange(len(file.lines)), kind, rng)
            if edit is not None:
                edits.append(edit)
                made += 1
    return edits


def base_edits() -> list[BaseEdit]:
    """All base edits: real diffs first, then stdlib edits."""
    return history_edits() + stdlib_edits()
