"""A real ``diff -ruN`` release step turned CRLF or given a UTF-8 byte-order mark, tree and patch alike.

The release trees of ``tests/data/real-history`` are LF files without a BOM; users also edit
CRLF files and files that start with a BOM. ``crlf`` and ``bom`` make such a step from a real
one, as GNU diff would print it for the turned trees: a CRLF file's hunk lines end in
``\\r\\n`` (except a last line without a newline, which the ``\\ No newline`` marker follows,
as it had none before), and a BOM is part of the first line of a file (so a hunk that starts
at line 1 carries it on the side whose line 1 it shows).
"""

from __future__ import annotations

__all__ = ["bom", "crlf"]

BOM = b"\xef\xbb\xbf"


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


def bom(files: dict[str, bytes], patch: str) -> tuple[dict[str, bytes], str]:
    """Every non-empty file with a UTF-8 BOM, and line 1 of each side of a hunk that shows it too."""
    turned = {path: BOM + data if data else data for path, data in files.items()}
    out = []
    old_first = new_first = False  # the next ' '/'-' line is old line 1; the next ' '/'+' new line 1
    for line in patch.splitlines(keepends=True):
        if line.startswith("@@ "):
            old_range, new_range = line.split(" ")[1:3]
            old_first = old_range[1:].split(",")[0] == "1"
            new_first = new_range[1:].split(",")[0] == "1"
        elif line.startswith("diff "):
            old_first = new_first = False
        elif line[:1] == " " and (old_first or new_first):
            line = " \ufeff" + line[1:]
            old_first = new_first = False
        elif line[:1] == "-" and old_first:
            line = "-\ufeff" + line[1:]
            old_first = False
        elif line[:1] == "+" and new_first:
            line = "+\ufeff" + line[1:]
            new_first = False
        out.append(line)
    return turned, "".join(out)
