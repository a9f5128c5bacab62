"""``syntax._statement_end`` reads by hand what ``re.compile(r"\\n(?=[^\\s#)\\]}])")`` found (with the
continuation check after it): the same offsets over real sources, generated lines and every
character ``\\s`` takes (Unicode's spaces)."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

from nbedit.engine import syntax

_TOP_LEVEL = re.compile(r"\n(?=[^\s#)\]}])")
_EVERY_CHARACTER = "".join(map(chr, range(sys.maxunicode + 1)))


def _by_pattern(text: str, offset: int) -> int:
    position = offset
    while True:
        found = _TOP_LEVEL.search(text, position)
        if found is None:
            return len(text)
        start = found.start() + 1
        if not text.startswith(syntax._CONTINUATION, start):
            return start
        position = start


def test_statement_end_is_the_pattern() -> None:
    assert re.findall(r"\s", _EVERY_CHARACTER) == [c for c in _EVERY_CHARACTER if c.isspace()]
    spaces = re.findall(r"\s", _EVERY_CHARACTER)
    rng = random.Random(11)
    pieces = ["def f():", "    x = 1", "", "# c", ")", "]", "}", "else:", "elif x:", "except E:"]
    pieces.append("finally:")
    pieces += ["case 1:", "@decorator", "class A:", "\r", "\t\tdeep", "x", "é = 1", "\u3000x", "\x0bx", "\x1cx"]
    pieces += [space + "y" for space in spaces]
    texts = ["\n".join(rng.choice(pieces) for _ in range(rng.randrange(0, 20))) for _ in range(3_000)]
    package = Path(syntax.__file__).parents[1]
    texts += [path.read_text("utf-8") for path in sorted(package.rglob("*.py"))[:40]]
    checked = 0
    for text in texts:
        offsets = {0, len(text)} | {rng.randrange(len(text) + 1) for _ in range(8)}
        for offset in offsets:
            assert syntax._statement_end(text, offset) == _by_pattern(text, offset), (text, offset)
            checked += 1
    assert checked > 20_000
