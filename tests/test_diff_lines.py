"""The hand-written header readers (``engine.diff_lines``) against the regular expressions they replace.

Each reader must accept and refuse exactly what its pattern accepts and refuses, with the same
groups: over generated lines (every piece a header is made of, cut and doubled and misplaced),
over the lines of real diffs (``tests/data`` and difflib's diffs of this package's own files), and,
where a class decides (``\\d``, ``\\s``), over every Unicode character that class holds or lacks.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import random
import re
import sys
from pathlib import Path

import pytest

from nbedit.engine import diff_lines
from nbedit.engine.diff_lines import (
    HUNK_HEADER,
    RUN_END,
    decimal_hunk_counts,
    header_numbers,
    hunk_numbers,
    index_blob,
    is_mode,
    run_end,
)
from nbedit.engine.formats import unified, unified_runs
from nbedit.engine.formats.unified_sections import _octal_escape

DATA = Path(__file__).parent / "data"
PACKAGE = Path(unified.__file__).parents[3]

_HEADER = re.compile(HUNK_HEADER)
_RUN = re.compile(RUN_END)
_INDEX = re.compile(r"index ([0-9a-fA-F]{4,64})\.\.[0-9a-fA-F]{4,64}(?: [0-7]{6})?\s*$")
_COUNTS = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_EVERY_CHARACTER = "".join(map(chr, range(sys.maxunicode + 1)))
_DECIMALS = re.findall(r"\d", _EVERY_CHARACTER)
_SPACES = re.findall(r"\s", _EVERY_CHARACTER)


def _characters() -> list[str]:
    """Every character ``\\d`` or ``\\s`` takes, the ASCII ones, and a spread of the rest."""
    spread = _EVERY_CHARACTER[128::997]
    return sorted(set(_DECIMALS) | set(_SPACES) | set(map(chr, range(128))) | set(spread))


def _texts_of_data() -> list[str]:
    """The texts in tests/data, JSON strings included (model replies hold their diffs there)."""
    texts: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted(DATA.rglob("*")):
        if not path.is_file():
            continue
        try:
            text = path.read_text("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        texts.append(text)
        if path.suffix in (".json", ".ipynb"):
            with contextlib.suppress(ValueError):  # a file that is not JSON is read as text only
                walk(json.loads(text))
    return texts


def _package_diffs() -> list[str]:
    """Real unified diffs: difflib's of this package's own modules, each against a neighbour."""
    import difflib

    sources = sorted(PACKAGE.glob("nbedit/**/*.py"))[:30]
    diffs = []
    for first, second in itertools.pairwise(sources):
        old = first.read_text("utf-8").splitlines(keepends=True)
        new = second.read_text("utf-8").splitlines(keepends=True)
        diffs.append("".join(difflib.unified_diff(old, new, "a/" + first.name, "b/" + second.name, n=2)))
    return diffs


_REAL = _texts_of_data() + _package_diffs()
_REAL_LINES = sorted({line for text in _REAL for line in text.split("\n")})

_PIECES = ["@@", "@", " ", "-", "+", ",", "0", "7", "12", "123456789", "1234567890", "\u0663", "\uff11", "x"]


def _generated_headers(count: int, seed: int) -> list[str]:
    """Headers as a hand might garble them: valid ones, then pieces dropped, doubled, swapped."""
    rng = random.Random(seed)
    good = ["0", "1", "9", "10", "999999999", "000000001"]
    bad = ["1000000000", "00000000001", "\u0661", "1\u0662", "", "a"]

    def number() -> str:
        return rng.choice(good) if rng.random() < 0.8 else rng.choice(bad)

    lines = []
    for _ in range(count):
        parts = [
            "@@ -",
            number(),
            rng.choice(["", "," + number(), "," + number(), ","]),
            rng.choice([" +", " +", " +", "+", "  +", " -"]),
            number(),
            rng.choice(["", "," + number(), "," + number(), ","]),
            rng.choice([" @@", " @@", " @@ def f():", " @@\r", " @@@", "@@", " @", " @@ @", ""]),
        ]
        if rng.random() < 0.3:
            place = rng.randrange(len(parts))
            parts[place] = rng.choice(_PIECES)
        if rng.random() < 0.2:
            parts.append(rng.choice(["\n", "\n@@ -1 +1 @@", "\r\n"]))
        lines.append("".join(parts))
    lines += ["".join(rng.choice(_PIECES) for _ in range(rng.randrange(1, 12))) for _ in range(count)]
    return lines


def _groups(found: re.Match[str] | None) -> tuple[str | None, ...] | None:
    return None if found is None else found.groups()


def test_hunk_numbers_is_the_pattern() -> None:
    lines = _generated_headers(20_000, 1) + _REAL_LINES
    accepted = 0
    for line in lines:
        assert hunk_numbers(line) == _groups(_HEADER.match(line)), line
        accepted += hunk_numbers(line) is not None
    assert 1_000 < accepted < len(lines) - 1_000  # both outcomes are common


@pytest.mark.parametrize("place", range(7))
def test_hunk_numbers_every_character_in_every_place(place: int) -> None:
    parts = ["@@ -", "12", ",3", " +", "45", ",6", " @@"]
    for character in _characters():
        for replace in (True, False):
            changed = list(parts)
            changed[place] = character if replace else changed[place] + character
            line = "".join(changed)
            assert hunk_numbers(line) == _groups(_HEADER.match(line)), line


def test_decimal_hunk_counts_is_the_pattern_with_unicode_digits() -> None:
    assert re.findall(r"\d", _EVERY_CHARACTER) == [c for c in _EVERY_CHARACTER if c.isdecimal()]
    lines = _generated_headers(20_000, 2) + _REAL_LINES
    for character in _characters():
        templates = ("@@ -{0} +1 @@", "@@ -1,{0}{0} +1 @@", "@@ -1 +{0},7 @@", "@@ -1 +1,2{0} @@", "@@ -{0}")
        for template in templates:
            lines.append(template.format(character))
    unicode_accepted = 0
    for line in lines:
        assert decimal_hunk_counts(line) == _groups(_COUNTS.match(line)), line
        unicode_accepted += decimal_hunk_counts(line) is not None and not line.isascii()
    assert unicode_accepted > 100  # Arabic-Indic, fullwidth... digits are \d


def _generated_runs(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    line_kinds = [
        " context",
        "-old",
        "+new",
        "",
        "--- a/x",
        "---x",
        "-- ",
        "@@ -1,2 +1,2 @@",
        "@@ -1 +1 @@ def f",
        "@@@ -1 +1 @@@",
        "@@ -1 +1 @@@",
        "@@ -1,2 +1,",
        "@ x",
        "\\ No newline at end of file",
        "diff --git a/x b/x",
        "\r",
        "+++ b/x",
        "\u0663",
    ]
    texts = []
    for _ in range(count):
        lines = [rng.choice(line_kinds) for _ in range(rng.randrange(0, 14))]
        texts.append("\n".join(lines) + rng.choice(["", "\n"]))
    return texts


def test_run_end_is_the_pattern() -> None:
    texts = _generated_runs(3_000, 3) + _REAL
    rng = random.Random(4)
    found = 0
    for text in texts:
        size = len(text)
        places = {(0, size), (0, 0)}
        for _ in range(6):
            start, end = sorted((rng.randrange(size + 2), rng.randrange(size + 2)))
            places.add((start, end))
            places.add((max(start - 1, 0), min(end + 1, size)))
        for start, end in places:
            if end > size:
                continue
            expected = _RUN.search(text, start, end)
            got = run_end(text, start, end)
            assert got == (None if expected is None else expected.start()), (text, start, end)
            found += got is not None
    assert found > 1_000


def test_run_end_stops_where_told() -> None:
    """With ``stop``, only newlines before it are looked at; the pattern from ``stop`` finds the rest."""
    texts = _generated_runs(1_500, 12)
    rng = random.Random(13)
    for text in texts:
        for _ in range(4):
            start, stop = sorted((rng.randrange(len(text) + 1), rng.randrange(len(text) + 2)))
            expected = _RUN.search(text, start)
            by_hand = run_end(text, start, len(text), stop)
            if by_hand is None:
                rest = _RUN.search(text, stop)
                assert (rest and rest.start()) == (expected and expected.start()), (text, start, stop)
            else:
                assert expected is not None and by_hand == expected.start() < stop, (text, start, stop)


def test_run_end_cut_inside_a_header() -> None:
    """A header the search's end cuts off is not a header (the pattern sees the text cut there)."""
    text = "x\n@@ -1 +1 @@\n+a\n"
    for end in range(len(text) + 1):
        expected = _RUN.search(text, 1, end)
        assert run_end(text, 1, end) == (None if expected is None else expected.start()), end


def test_header_numbers_is_findall() -> None:
    lines = [line for line in _generated_headers(5_000, 5) + _REAL_LINES if "\n" not in line]
    headers = [line for line in lines if hunk_numbers(line) is not None]
    expected = _HEADER_LINE.findall("\n" + "\n".join(headers))
    assert [tuple(group or None for group in numbers) for numbers in expected] == header_numbers(headers)
    assert len(headers) > 200


_HEADER_LINE = re.compile(r"\n" + HUNK_HEADER + r"[^\n]*")


def test_is_mode_and_octal_escape_are_the_patterns() -> None:
    alphabet = ["0", "1", "3", "4", "7", "8", "9", "a", " ", "\n", "\u0663", "00"]
    for size in range(0, 8):
        for parts in itertools.product(alphabet, repeat=min(size, 3)):
            padding = "0" * (size - min(size, 3))
            for text in ("".join(parts) + padding, padding + "".join(parts)):
                assert is_mode(text) == (re.fullmatch("[0-7]{6}", text) is not None), text
                assert _octal_escape(text) == (re.fullmatch("[0-3][0-7][0-7]", text) is not None), text
    for character in _characters():
        for text in ("10064" + character, character + "00644", "100644" + character, "1" + character + "7"):
            assert is_mode(text) == (re.fullmatch("[0-7]{6}", text) is not None), text
            assert _octal_escape(text) == (re.fullmatch("[0-3][0-7][0-7]", text) is not None), text


def test_index_blob_is_the_pattern() -> None:
    assert re.findall(r"\s", _EVERY_CHARACTER) == [c for c in _EVERY_CHARACTER if c.isspace()]
    rng = random.Random(6)
    hexes = ["", "abc", "abcd", "0000", "1a2B", "f" * 40, "F" * 64, "e" * 65, "0" * 63 + "g", "12\u0663"]
    tails = ["", " ", "  ", "\t", "\n", " \n", "\r", " 100644", " 100644 ", " 100644\n", " 10064", " 1006444"]
    tails.append("x")
    lines = []
    for first, second, tail in itertools.product(hexes, hexes, tails):
        lines.append(f"index {first}..{second}{tail}")
    for _ in range(500):
        lines.append(f"index {rng.choice(hexes)}{rng.choice(['..', '.', '...', ' '])}{rng.choice(hexes)}")
    for character in _characters():
        lines += [f"index abcd..ef01{character}", f"index abcd..ef01 100644{character}"]
        lines.append(f"index abcd{character}..ef01")
        lines.append(f"index abcd..ef01 100644 {character} ")
    lines += [line for line in _REAL_LINES if line.startswith("index")]
    taken = 0
    for line in lines:
        found = _INDEX.match(line)
        assert index_blob(line) == (None if found is None else found.group(1)), line
        taken += found is not None
    assert 100 < taken < len(lines) - 100


@pytest.mark.parametrize("hand_read", [-1, 1 << 30])
def test_marker_line_is_the_pattern(monkeypatch: pytest.MonkeyPatch, hand_read: int) -> None:
    """``marker_line`` reads a small text a line at a time by hand: the same answer as the patterns."""
    monkeypatch.setattr(unified, "HAND_READ", hand_read)
    marker = re.compile(unified._MARKER)
    after_newline = re.compile(unified._MARKER_AFTER_NEWLINE)

    def by_pattern(text: str) -> int | None:
        if "\n+++ " not in text and "@@" not in text and "diff --git " not in text:
            return None
        if text.startswith("diff --git ") or marker.match(text):
            return 0
        found = after_newline.search(text)
        return None if found is None else text.count("\n", 0, found.start() + 1)

    texts = _REAL + _generated_runs(3_000, 7) + [line + "\n+x" for line in _generated_headers(3_000, 8)]
    texts += ["--- a\n+++ b", "--- a", "--- a\n++ b", "--- \n+++ ", "---a\n+++ b\n@@ -1 +1 @@\n-x"]
    rng = random.Random(10)
    prose = ["Here is the fix:", "", "```diff", "```", "From 1234 Mon Sep 17", "Subject: [PATCH] x", "-- "]
    prose.append("@@")
    aider = ["@@ ... @@", "@@ @@", "@@ a@@", "@@ a @@ b", "@@ a @@ b@", "@@ @@@", "@@ x @@\r", "@@@ x @@"]
    aider.append("@@ -1 +1 @@@")
    body = [" same", "+came", "-gone", "", "x", "\r", "+++ b/x", "--- a/x", "diff --git a/x b/x", "diff --gi"]
    for _ in range(4_000):
        lines = [rng.choice(prose + aider + body) for _ in range(rng.randrange(0, 9))]
        texts.append("\n".join(lines) + rng.choice(["", "\n"]))
    marked = 0
    for text in texts:
        assert unified.marker_line(text) == by_pattern(text), text
        marked += unified.marker_line(text) not in (None, 0)
    assert marked > 500  # a marker after other lines (prose, a mail's header) is common here


def _generated_diffs(count: int, seed: int, garbled: bool = True) -> list[str]:
    """Diffs of runs of hunks, most counted right, some lines garbled (a run then ends early)."""
    rng = random.Random(seed)
    diffs = []
    for _ in range(count):
        lines = ["--- a/x.py", "+++ b/x.py"]
        line = 1
        for _ in range(rng.randrange(1, 8)):
            kinds = [" same", " same", "-gone", "+came", " \u0663"]
            body = [rng.choice(kinds) for _ in range(rng.randrange(1, 7))]
            old = sum(1 for item in body if item[0] != "+")
            new = sum(1 for item in body if item[0] != "-")
            lines.append(f"@@ -{line},{old} +{line},{new} @@ def f():")
            lines += body
            line += old + rng.randrange(1, 5)
        for _ in range(rng.randrange(0, 3) if garbled else 0):
            place = rng.randrange(len(lines))
            lines[place] = rng.choice(["", "@@ -1 +1 @@@", "--- a/y", "\\ No newline at end of file", "x"])
        diffs.append("\n".join(lines) + "\n")
    return diffs


@pytest.mark.parametrize("hand_read", [-1, 1 << 30])
def test_runs_read_alike_by_hand_and_by_pattern(monkeypatch: pytest.MonkeyPatch, hand_read: int) -> None:
    """The run reader gives the same hunks whichever reader finds the run's end and its headers."""
    from nbedit.engine.formats.unified import parse
    from nbedit.errors import PatchSyntaxError

    diffs = [text for text in _REAL if "\n@@ -" in text or text.startswith("@@ -")] + _generated_diffs(400, 9)
    # past HAND_READ: a run's end looked for by hand first, then by the pattern; its headers by the pattern
    header = "--- a/x.py\n+++ b/x.py\n"
    long_runs = ["".join(_generated_diffs(300, seed, garbled=False)).replace(header, "") for seed in (14, 15)]
    diffs += [header + text for text in long_runs]
    assert len(diffs) > 400 and max(map(len, diffs)) > 3 * diff_lines.HAND_READ

    def outcomes() -> list[object]:
        results: list[object] = []
        for text in diffs:
            try:
                results.append(parse(text, default_path="x.py"))
            except PatchSyntaxError as error:
                results.append(("error", str(error), error.line))
        return results

    monkeypatch.setattr(unified_runs, "_hand_read", lambda: unified_runs.HAND_READ)  # as in a fresh process
    expected = outcomes()
    monkeypatch.setattr(unified_runs, "_hand_read", lambda: hand_read)
    assert outcomes() == expected
    assert diff_lines.HAND_READ == 1 << 14
