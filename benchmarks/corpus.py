"""Deterministic benchmark inputs: code-like files and spread-out edits to them.

Every input is generated from a seeded ``random.Random`` so two runs (and two
machines) measure the same bytes. The lines imitate Python source: nested
blocks, repeated idioms (``return result``, blank lines, ``else:``) next to
distinctive lines, because a matcher's cost and its ambiguity both depend on how
often lines repeat. Pure functions only; callers write files where they like.
"""

from __future__ import annotations

import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["EditedText", "code_lines", "edit_spread", "join_lines", "write_text"]

_NOUNS = [
    "account",
    "order",
    "item",
    "price",
    "total",
    "user",
    "record",
    "batch",
    "frame",
    "token",
    "buffer",
    "offset",
    "index",
    "path",
    "entry",
    "cache",
    "queue",
    "window",
    "column",
    "value",
    "result",
    "request",
    "response",
    "payload",
    "config",
    "handler",
    "session",
    "row",
    "table",
    "field",
    "stream",
    "chunk",
    "header",
    "digest",
    "message",
    "event",
    "signal",
    "metric",
    "sample",
    "vector",
    "matrix",
]
_VERBS = [
    "load",
    "save",
    "parse",
    "build",
    "render",
    "update",
    "compute",
    "merge",
    "split",
    "resolve",
    "fetch",
    "apply",
    "check",
    "collect",
    "normalise",
    "encode",
    "decode",
    "flush",
    "reset",
    "scan",
    "match",
    "filter",
    "group",
    "sort",
    "count",
    "format",
    "validate",
]


def _name(rng: random.Random) -> str:
    return f"{rng.choice(_NOUNS)}_{rng.choice(_NOUNS)}" if rng.random() < 0.5 else rng.choice(_NOUNS)


def _statement(rng: random.Random) -> str:
    kind = rng.random()
    a, b, c = _name(rng), _name(rng), _name(rng)
    if kind < 0.30:
        return f"{a} = {rng.choice(_VERBS)}_{b}({c}, {rng.randint(0, 999)})"
    if kind < 0.45:
        return f"{a}.{rng.choice(_VERBS)}({b}[{rng.randint(0, 64)}])"
    if kind < 0.55:
        return f'log.debug("{rng.choice(_VERBS)} %s for {b}", {c})'
    if kind < 0.65:
        return f"{a} += {b} * {rng.randint(2, 97)}"
    if kind < 0.72:
        return "result.append(value)"
    if kind < 0.80:
        return f'{a}["{b}"] = {c}'
    if kind < 0.88:
        return f"# {rng.choice(_VERBS)} the {b} before the {c} is {rng.choice(_VERBS)}d"
    return f"assert {a} is not None, '{b} missing'"


def code_lines(count: int, seed: int = 1) -> list[str]:
    """``count`` lines (without newlines) that look like a long Python module."""
    rng = random.Random(seed)
    lines: list[str] = []
    function_number = 0
    while len(lines) < count:
        function_number += 1
        if function_number % 25 == 1:
            lines += [
                "",
                "",
                f"class {rng.choice(_NOUNS).title()}{function_number}:",
                '    """Generated."""',
                "",
            ]
        arguments = ", ".join(_name(rng) for _ in range(rng.randint(1, 4)))
        lines.append(f"    def {rng.choice(_VERBS)}_{_name(rng)}_{function_number}(self, {arguments}):")
        lines.append("        result = []")
        for _ in range(rng.randint(4, 14)):
            if rng.random() < 0.15:
                lines.append(f"        if {_name(rng)} > {rng.randint(0, 99)}:")
                for _ in range(rng.randint(1, 3)):
                    lines.append("            " + _statement(rng))
                if rng.random() < 0.4:
                    lines.append("        else:")
                    lines.append("            " + _statement(rng))
            elif rng.random() < 0.1:
                lines.append(f"        for value in {_name(rng)}:")
                lines.append("            result.append(value)")
            else:
                lines.append("        " + _statement(rng))
        lines.append("        return result")
        lines.append("")
    return lines[:count]


@dataclass(frozen=True, slots=True)
class EditedText:
    before: str
    after: str
    edited_lines: tuple[int, ...]  # 0-based line numbers in ``before`` that were touched


def edit_spread(lines: list[str], edits: int, seed: int = 2) -> EditedText:
    """Edit ``edits`` places spread evenly over the file (one per stride, jittered).

    Each place gets one of: a token changed, a line inserted after it, the line
    deleted, or two lines rewritten, so the diff has every hunk shape. Places are
    at least 20 lines apart, so ``git diff`` keeps them as separate hunks.
    """
    rng = random.Random(seed)
    stride = len(lines) // edits
    if stride < 20:
        raise ValueError("too many edits for this file: places would run into each other")
    new_lines: list[str] = []
    touched: list[int] = []
    cursor = 0
    for number in range(edits):
        place = number * stride + rng.randint(5, stride - 10)
        new_lines.extend(lines[cursor:place])
        touched.append(place)
        line = lines[place]
        kind = rng.random()
        if kind < 0.4:
            new_lines.append(_change_token(line, rng))
            cursor = place + 1
        elif kind < 0.65:
            new_lines.append(line)
            indent = line[: len(line) - len(line.lstrip())] or "        "
            new_lines.append(indent + _statement(rng))
            cursor = place + 1
        elif kind < 0.8:
            cursor = place + 1  # deleted
        else:
            new_lines.append(_change_token(line, rng))
            new_lines.append(_change_token(lines[place + 1], rng))
            cursor = place + 2
    new_lines.extend(lines[cursor:])
    return EditedText(join_lines(lines), join_lines(new_lines), tuple(touched))


def _change_token(line: str, rng: random.Random) -> str:
    words = line.split(" ")
    candidates = [n for n, word in enumerate(words) if word.strip()]
    if not candidates:
        return line + "  # edited"
    position = rng.choice(candidates)
    words[position] = words[position] + "_v2" if not words[position].endswith(":") else words[position]
    edited = " ".join(words)
    return edited if edited != line else line + "  # edited"


def join_lines(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def write_text(path: str, text: str) -> None:
    """Write text with LF newlines exactly (no platform translation)."""
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def git(folder: Path, *arguments: str) -> str:
    """Run git in ``folder`` with a throwaway identity; its stdout."""
    return subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", *arguments],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def git_diff(repository: Path, name: str, before: str, after: str) -> str:
    """The patch git itself writes for ``before`` -> ``after`` of file ``name``.

    Makes a repository in ``repository`` (which must not exist), commits ``before``
    and leaves ``after`` in the work tree.
    """
    repository.mkdir()
    write_text(str(repository / name), before)
    git(repository, "init", "-q")
    git(repository, "add", name)
    git(repository, "commit", "-q", "-m", "before")
    write_text(str(repository / name), after)
    return git(repository, "diff", "--no-color")
