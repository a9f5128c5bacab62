"""Small shapes of a diff through every size-dependent path: the ordinary path's outcome, byte for byte.

The real release steps (``tests/test_forced_paths_real.py``) bring real files; these are the
shapes where a path that reads in chunks, splices arrays or reads a patch by hand could go
wrong, each as small as it gets: insertions with no context at the start, middle and end,
no final newline added, kept or taken away, CRLF (split by one- and three-byte chunks), a
lone CR, mixed line ends, a NUL, multi-byte characters, hunks out of order, overlapping,
beyond the end, repeated lines, the same file twice in one patch, a BOM, Latin-1 and UTF-16
files. Each is applied with the ordinary path and with each forced path
(``tests/forced_paths.py``); the outcome (the bytes, or the refusal's class with the file
untouched) must be the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from forced_paths import PATHS, REFERENCE, streamed
from test_forced_paths_real import run

H = "--- a/f.txt\n+++ b/f.txt\n"
CASES: dict[str, tuple[dict[str, bytes], str]] = {
    "empty-file-insert": ({"f.txt": b""}, H + "@@ -0,0 +1,2 @@\n+a\n+b\n"),
    "insert-at-start-U0": ({"f.txt": b"x\ny\n"}, H + "@@ -0,0 +1 @@\n+a\n"),
    "insert-after-1-U0": ({"f.txt": b"x\ny\n"}, H + "@@ -1,0 +2 @@\n+a\n"),
    "insert-at-end-U0": ({"f.txt": b"x\ny\n"}, H + "@@ -2,0 +3 @@\n+a\n"),
    "insert-at-end-nofinal": (
        {"f.txt": b"x\ny"},
        H + "@@ -2 +2,2 @@\n-y\n\\ No newline at end of file\n+y\n+z\n\\ No newline at end of file\n",
    ),
    "add-final-newline": (
        {"f.txt": b"x\ny"},
        H + "@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+y\n",
    ),
    "drop-final-newline": (
        {"f.txt": b"x\ny\n"},
        H + "@@ -1,2 +1,2 @@\n x\n-y\n+y\n\\ No newline at end of file\n",
    ),
    "delete-all": ({"f.txt": b"x\ny\n"}, H + "@@ -1,2 +0,0 @@\n-x\n-y\n"),
    "delete-middle-U0": ({"f.txt": b"x\ny\nz\n"}, H + "@@ -2 +1,0 @@\n-y\n"),
    "crlf-cut": ({"f.txt": b"x\r\ny\r\nz\r\n"}, H + "@@ -2 +2 @@\n-y\r\n+Y\r\n"),
    "crlf-lf-patch": ({"f.txt": b"x\r\ny\r\nz\r\n"}, H + "@@ -2 +2 @@\n-y\n+Y\n"),
    "mixed-endings": ({"f.txt": b"x\r\ny\nz\r\n"}, H + "@@ -1,3 +1,3 @@\n x\r\n-y\n+Y\n z\r\n"),
    "lone-cr": ({"f.txt": b"x\ry\nz\n"}, H + "@@ -1,2 +1,2 @@\n x\ry\n-z\n+Z\n"),
    "nul-byte": ({"f.txt": b"x\x00\ny\n"}, H + "@@ -2 +2 @@\n-y\n+Y\n"),
    "utf8-multi": ({"f.txt": "é\nü\nz\n".encode()}, H + "@@ -2 +2 @@\n-ü\n+Ü\n"),
    "no-change-hunk": ({"f.txt": b"x\ny\n"}, H + "@@ -1,2 +1,2 @@\n x\n y\n"),
    "two-hunks-same-line": ({"f.txt": b"a\nb\nc\nd\n"}, H + "@@ -1 +1 @@\n-a\n+A\n@@ -2 +2 @@\n-b\n+B\n"),
    "overlap": ({"f.txt": b"a\nb\nc\nd\n"}, H + "@@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n"),
    "out-of-order": ({"f.txt": b"a\nb\nc\nd\n"}, H + "@@ -3 +3 @@\n-c\n+C\n@@ -1 +1 @@\n-a\n+A\n"),
    "repeated-lines": ({"f.txt": b"a\na\na\na\n"}, H + "@@ -3 +3 @@\n-a\n+A\n"),
    "repeated-lines-wrong-number": ({"f.txt": b"a\na\na\na\nb\n"}, H + "@@ -3 +3 @@\n-b\n+B\n"),
    "beyond-end": ({"f.txt": b"a\nb\n"}, H + "@@ -9 +9 @@\n-b\n+B\n"),
    "same-file-twice": ({"f.txt": b"a\nb\nc\n"}, H + "@@ -1 +1 @@\n-a\n+A\n" + H + "@@ -3 +3 @@\n-c\n+C\n"),
    "trailing-space": ({"f.txt": b"a \nb\n"}, H + "@@ -1,2 +1,2 @@\n-a \n+A \n b\n"),
    "tab-vs-space": ({"f.txt": b"\ta\nb\n"}, H + "@@ -1,2 +1,2 @@\n-    a\n+    A\n b\n"),
    "big-line": (
        {"f.txt": b"x" * 1000 + b"\ny\n"},
        H + "@@ -1,2 +1,2 @@\n-" + "x" * 1000 + "\n+" + "X" * 1000 + "\n y\n",
    ),
    "bom-streamed": ({"f.txt": b"\xef\xbb\xbfa\nb\n"}, H + "@@ -2 +2 @@\n-b\n+B\n"),
    "latin1": ({"f.txt": "café\nb\n".encode("latin-1")}, H + "@@ -2 +2 @@\n-b\n+B\n"),
    "utf16": ({"f.txt": "a\nb\n".encode("utf-16")}, H + "@@ -2 +2 @@\n-b\n+B\n"),
}

PATHS.setdefault("streamed-3", {**REFERENCE, **streamed(3)})
FORCED = ("by-hand", "arrays", "streamed-1", "streamed-3", "all")


@pytest.mark.parametrize("name", list(CASES))
def test_a_small_shape_has_the_ordinary_outcome_on_every_path(name: str, tmp_path: Path) -> None:
    files, patch = CASES[name]
    reference, _ = run(files, patch, tmp_path / "reference", "reference")
    for index, path_name in enumerate(FORCED):
        home = tmp_path / "home" if path_name == "all" else None
        outcome, _ = run(files, patch, tmp_path / f"w{index}", path_name, home=home)
        assert outcome == reference, path_name
