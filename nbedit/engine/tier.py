"""``Tier``: how a hunk was located, in the order of the matcher's cascade.

Why a module of its own: ``Tier`` is an :class:`enum.Enum`, and importing :mod:`enum` and making
the class cost about 3 ms of every ``nbedit`` process (issue 27). A diff whose hunks all stand
where they say never needs the enum: the planner marks those matches with
``models.EXACT_WHEN_READ``, which ``Match.tier`` turns into ``Tier.EXACT`` the first time it is
read. ``nbedit.engine.models.Tier`` (and ``nbedit.Tier``) load this module on first use, so the
class is the same object under every name, and a pickle that names ``nbedit.engine.models.Tier``
still loads.
"""

from __future__ import annotations

import enum


class Tier(enum.Enum):
    """How a hunk was located; order is the matcher's cascade."""

    EXACT = "exact"
    LINE_ENDINGS = "line-endings"
    TRAILING_WHITESPACE = "trailing-whitespace"
    UNICODE = "unicode-punctuation"
    INDENTATION = "indentation"
    BLANK_LINES = "blank-lines"
    READING = "reading"
    FUZZY = "fuzzy"

    @property
    def explanation(self) -> str:
        return _EXPLANATIONS[self]


_EXPLANATIONS = {
    Tier.EXACT: "exact match",
    Tier.LINE_ENDINGS: "matched ignoring line endings",
    Tier.TRAILING_WHITESPACE: "matched ignoring trailing whitespace",
    Tier.UNICODE: "matched ignoring curly quotes, dashes and non-breaking spaces",
    Tier.INDENTATION: "matched at a different indentation; replacement re-indented",
    Tier.BLANK_LINES: "matched with a different number of blank lines between its lines",
    Tier.READING: (
        "matched once the reply was read as meant: an elision line expanded to the file's lines, "
        "pasted line numbers dropped, or one block given once for each place"
    ),
    Tier.FUZZY: "fuzzy match",
}
