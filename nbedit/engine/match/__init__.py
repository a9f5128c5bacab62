"""The matcher: find where a hunk's old text is, or refuse.

One cascade serves every dialect. Tiers run from strict to lenient and the first
tier that finds the hunk decides::

    exact -> line endings -> trailing whitespace -> unicode punctuation
          -> indentation (uniform offset) -> blank lines -> fuzzy (rapidfuzz over line windows)

Uniqueness is checked at every tier: two places and nothing to decide between them
is an ``AmbiguousMatch``, never a guess. "Already applied" (an empty list from
``locate``) needs strong evidence. Leniency decides where, never what: the
replacement keeps every byte outside what the hunk really changes.

One module per idea, in the order a hunk meets them:

    tiers.py        what each tier sees (normalised text) and the per-file index
    search.py       where the old text occurs at one tier, mapped back to file lines
    cascade.py      ``locate``: the tiers in order, the choice among places
    anchors.py      apply_patch ``@@`` anchors: the cascade after each anchor line
    blank_lines.py  the blank-lines tier: the old text's lines with other blank runs between
    fuzzy.py        the fuzzy tier: scored line windows and the rules that keep it from guessing
    evidence.py     "already applied", and when a line number may place a context-free hunk
    context.py      whether a hunk has context lines (the planner asks it before locating any)
    replacement.py  what is written at the place found (through ``engine/transport.py``)
    candidates.py   the explanation a match carries and the near misses a refusal lists

Imports go one way down that list's dependencies (``cascade`` imports the others; none
imports ``cascade``), and nothing here imports the planner: planning calls the matcher,
never the reverse.

The names below are imported from their modules when first read (a module ``__getattr__``):
importing one module of the package (``tiers`` for the options, ``context`` for the planner's
first question) does not import the cascade, which a diff whose hunks all stand where they say
never runs.
"""

from __future__ import annotations

import sys as _sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from nbedit.engine.match.cascade import locate
    from nbedit.engine.match.context import context_free
    from nbedit.engine.match.evidence import new_text_present, removed_lines_unique
    from nbedit.engine.match.options import DEFAULT_THRESHOLD, MatchOptions
    from nbedit.engine.match.tiers import FileIndex

_HOMES = {
    "DEFAULT_THRESHOLD": "options",
    "FileIndex": "tiers",
    "MatchOptions": "options",
    "context_free": "context",
    "locate": "cascade",
    "new_text_present": "evidence",
    "removed_lines_unique": "evidence",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = f"{__name__}.{home}"
    __import__(module)  # importlib.import_module, for an absolute name (importlib imports warnings)
    value = getattr(_sys.modules[module], name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_THRESHOLD",
    "FileIndex",
    "MatchOptions",
    "context_free",
    "locate",
    "new_text_present",
    "removed_lines_unique",
]
