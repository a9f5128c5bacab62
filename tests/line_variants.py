"""A real ``diff -ruN`` release step turned CRLF or given a UTF-8 byte-order mark, tree and patch alike.

The release trees of ``tests/data/real-history`` are LF files without a BOM; users also edit
CRLF files and files that start with a BOM. ``crlf`` and ``bom`` make such a step from a real
one, as GNU diff would print it for the turned trees: a CRLF file's hunk lines end in
``\\r\\n`` (except a last line without a newline, which the ``\\ No newline`` marker follows,
as it had none before), and a BOM is part of the first line of a file (so a hunk that starts
at line 1 carries it on the side whose line 1 it shows).
"""

from __future__ import annotations

import hashlib

__all__ = ["bom", "crlf"]

BOM = b"\xef\xbb\xbf"


def _turned(files: dict[str, bytes]) -> dict[str, bytes]:
    return {path: BOM + data if data else data for path, data in files.items()}


def _starts_at_line_1(numbers: str) -> bool:
    """Whether a hunk side ("-1,4", "+1", "-1,0") shows line 1: it starts there and has lines."""
    start, _, count = numbers[1:].partition(",")
    return start == "1" and count != "0"


def _blob(data: bytes | None, width: int) -> str:
    if data is None:
        return "0" * width
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:width]


def _index_line(line: str, old: bytes | None, new: bytes | None) -> str:
    hashes, _, rest = line[len("index ") :].partition(" ")
    before, after = hashes.rstrip("\n").split("..")
    old_hash = before if set(before) == {"0"} else _blob(old, len(before))
    new_hash = after if set(after) == {"0"} else _blob(new, len(after))
    return f"index {old_hash}..{new_hash}" + (f" {rest}" if rest else "\n")


def crlf(files: dict[str, bytes], patch: str) -> tuple[dict[str, bytes], str]:
    """Every file and every hunk line with CRLF line ends."""
    turned = {path: data.replace(b"\n", b"\r\n") for path, data in files.items()}
    lines = patch.splitlines(keepends=True)
    out = []
    in_hunk = False
    for index, line in enumerate(lines):
        if line.startswith("@@ "):
            in_hunk = True
        elif line.startswith("diff "):  # ``diff -ruN`` starts every file's section so
            in_hunk = False
        elif in_hunk and line[:1] in " -+" and line.endswith("\n"):
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if not following.startswith("\\"):
                line = line[:-1] + "\r\n"
        out.append(line)
    return turned, "".join(out)


def bom(
    files: dict[str, bytes], patch: str, new_files: dict[str, bytes] | None = None
) -> tuple[dict[str, bytes], str]:
    """Every non-empty file with a UTF-8 BOM, and line 1 of each side of a hunk that shows it too.

    A context line that is line 1 of one side only (lines were added or removed above it) is
    no longer the same on both sides: it becomes a removed and an added line. With the files the
    patch makes (``new_files``), a git ``index`` line names the blobs of the files with a BOM.
    (A CRLF step keeps its ``index`` lines: the blobs of a checkout with ``core.autocrlf``.)"""
    turned = _turned(files)
    paths = ["", ""]
    out = []
    old_first = new_first = False  # the next ' '/'-' line is old line 1; the next ' '/'+' new line 1
    for line in patch.splitlines(keepends=True):
        if line.startswith("@@ "):
            old_first, new_first = map(_starts_at_line_1, line.split(" ")[1:3])
        elif line.startswith("diff "):
            old_first = new_first = False
            paths = line.split()[-2:]  # git: "a/<old path>", "b/<new path>"
        elif line.startswith("index ") and new_files is not None:  # git names each side by its blob hash
            line = _index_line(line, turned.get(paths[0][2:]), _turned(new_files).get(paths[1][2:]))
        elif line[:1] == " " and old_first and new_first:
            line = " \ufeff" + line[1:]
            old_first = new_first = False
        elif line[:1] == " " and (old_first or new_first):  # line 1 of one side only: no longer alike
            body = line[1:]
            removed = ("\ufeff" if old_first else "") + body
            added = ("\ufeff" if new_first else "") + body
            end = "" if body.endswith("\n") else "\n\\ No newline at end of file\n"
            line = f"-{removed}{end}+{added}"
            old_first = new_first = False
        elif line[:1] == "-" and old_first:
            line = "-\ufeff" + line[1:]
            old_first = False
        elif line[:1] == "+" and new_first:
            line = "+\ufeff" + line[1:]
            new_first = False
        out.append(line)
    return turned, "".join(out)
