"""``text_opcodes.TextOpcodes`` gives ``ResyncMatcher``'s opcodes without splitting the texts.

Each case is compared with ``ResyncMatcher`` run on the split lines: the opcodes, and the
lines of every opcode (whole and cut at either end as ``get_grouped_opcodes`` cuts them).
"""

from __future__ import annotations

import difflib
import random

import pytest

from nbedit.engine.resync import RESYNC_WINDOW, ResyncMatcher
from nbedit.engine.text import split_lines
from nbedit.engine.text_opcodes import TextOpcodes, grouped
from nbedit.engine.whole_diff import text_diff


def check(old: str, new: str) -> None:
    old_lines, new_lines = split_lines(old), split_lines(new)
    expected = ResyncMatcher(old_lines, new_lines).get_opcodes()
    found = TextOpcodes(old, new)
    assert found.opcodes == expected
    for _, i1, i2, j1, j2 in expected:
        assert found.lines(i1, i2, j1, j2) == (old_lines[i1:i2], new_lines[j1:j2])
        for cut in (1, 3):
            if i2 - i1 > cut and j2 - j1 > cut:
                assert found.lines(i1, i1 + cut, j1, j1 + cut) == (
                    old_lines[i1 : i1 + cut],
                    new_lines[j1 : j1 + cut],
                )
                assert found.lines(i2 - cut, i2, j2 - cut, j2) == (
                    old_lines[i2 - cut : i2],
                    new_lines[j2 - cut : j2],
                )
        if i2 - i1 > 4 and j2 - j1 > 4:  # inside, nearer one end then the other
            for a0, a1, b0, b1 in ((i1 + 1, i2 - 3, j1 + 1, j2 - 3), (i1 + 3, i2 - 1, j1 + 3, j2 - 1)):
                assert found.lines(a0, a1, b0, b1) == (old_lines[a0:a1], new_lines[b0:b1])
    head, tail = "shared head\nmore\n", "\nshared tail"  # the same parts read in place
    spanned = TextOpcodes(
        head + old + tail, "x" + head + new + tail, (len(head), len(head) + len(old)),
        (len(head) + 1, len(head) + 1 + len(new)),
    )  # fmt: skip
    assert spanned.opcodes == expected
    for _, i1, i2, j1, j2 in expected:
        assert spanned.lines(i1, i2, j1, j2) == (old_lines[i1:i2], new_lines[j1:j2])
    reference = ResyncMatcher(old_lines, new_lines)
    assert grouped(found.opcodes, 3) == list(reference.get_grouped_opcodes(3))


def mutate(lines: list[str], rng: random.Random, edits: int) -> list[str]:
    result = list(lines)
    for _ in range(edits):
        at = rng.randrange(len(result) + 1)
        kind = rng.randrange(4)
        if kind == 0:
            result.insert(at, f"inserted {rng.random()}\n")
        elif kind == 1 and result:
            del result[at : at + rng.randint(1, 4)]
        elif kind == 2 and at < len(result):
            result[at] = result[at].rstrip("\n") + " changed\n"
        else:
            result[at:at] = [f"block {n}\n" for n in range(rng.randint(1, 6))]
    return result


@pytest.mark.parametrize("seed", range(60))
def test_opcodes_and_lines_match_the_resync_matcher(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = ["a\n", "b\n", "c\n", "", "\r\n", "x\u2028y\n", "long line of text\n"]
    count = rng.choice([0, 1, 2, 5, 40, 700])
    lines = [
        f"line {n} {rng.choice(alphabet)}" if rng.random() < 0.8 else rng.choice(alphabet)
        for n in range(count)
    ]
    old = "".join(lines)
    new = "".join(mutate(lines, rng, rng.randint(0, 12)))
    for ending in ("", "tail without newline", "\n"):
        check(old + ending, new + (ending if rng.random() < 0.7 else "other end"))


def test_far_apart_edits_of_a_long_text_and_a_rewrite_past_the_window() -> None:
    lines = [f"value_{n} = compute({n})\n" for n in range(20_000)]
    edited = list(lines)
    for at in range(150, 20_000, 1_999):
        edited[at] = "changed\n"
    edited[7_000:7_000] = [f"new {n}\n" for n in range(RESYNC_WINDOW * 2)]  # past one resync window
    del edited[12_000:12_000 + RESYNC_WINDOW + 10]
    check("".join(lines), "".join(edited))
    check("".join(lines), "".join(f"other {n}\n" for n in range(500)) + "".join(lines[600:]))
    check("same\n" * 10 + "a\n", "same\n" * 10 + "b\n")  # repeated lines around the change
    # the only place the sides agree again is the last line of the resync window: its
    # confirming lines lie past the window, so the window must hold them too
    # (difflib, taking the rest when none is found, would align the longer run instead)
    agree, longer = ["A\n", "B\n", "C\n"], [f"P{n}\n" for n in range(10)]
    check(
        "".join([f"o{n}\n" for n in range(RESYNC_WINDOW - 1)] + agree + longer),
        "".join(["n0\n", *longer, *agree]),
    )
    # differences every few lines: after some resyncs the rest is walked as lists, same opcodes
    dense = [f"row {n}\n" for n in range(6_000)]
    edited = list(dense)
    for at in range(3, 6_000, 7):
        edited[at] = f"row {at} edited\n"
    edited[4_000:4_000] = ["inserted\n"] * 5
    check("".join(dense), "".join(edited))
    check("".join(dense) + "last", "".join(edited[:3_000]) + "".join(dense[3_000:]) + "other last")
    check("", "new\n")
    check("old\n", "")


def test_text_diff_of_spread_edits_is_the_unified_diff_of_the_lines() -> None:
    lines = [f"row {n}\n" for n in range(5_000)]
    edited = list(lines)
    for at in (3, 1_000, 1_001, 2_500, 4_998):
        edited[at] = f"row {at} edited\n"
    diff = text_diff("".join(lines), "".join(edited), "f.txt")
    expected = "".join(difflib.unified_diff(lines, edited, "a/f.txt", "b/f.txt"))
    assert diff == expected


@pytest.mark.parametrize("seed", range(40))
def test_whole_stats_of_texts_and_of_their_utf8_bytes_count_the_diff(seed: int) -> None:
    from nbedit.engine.diff_counts import diff_stats
    from nbedit.engine.whole_diff import whole_stats

    rng = random.Random(seed)
    words = ["é\n", "©\n", "plain\n", "ü ö\n", "\u2028\n", "x\r\n", "日本\n"]
    lines = [rng.choice(words) for _ in range(rng.choice([0, 3, 50, 400]))]
    old = "".join(lines) + rng.choice(["", "end"])
    new = "".join(mutate(lines, rng, rng.randint(0, 8))) + rng.choice(["", "end", "énd"])
    expected = diff_stats(text_diff(old, new, "f.txt"))
    assert whole_stats(old, new) == expected
    assert whole_stats(old.encode(), new.encode()) == expected
    assert whole_stats(None, new.encode()) == diff_stats(text_diff(None, new, "f.txt"))
