"""A diff made from a file's bytes shows its byte-order mark as part of line 1; the planner's text does not.

``engine.text.decode`` reads a leading BOM into the codec (``Codec.bom``) and the text starts
after it, so writing the text back puts the same BOM in front. ``diff -u`` and ``git diff``
compare bytes: the BOM is the start of the file's first line, and a hunk that shows line 1
(removed, or as context) starts its old text with U+FEFF, which is then in no place of the
decoded text; such a diff of a BOM file whose first line changed was refused (``NoMatch``),
and a deletion of a BOM file was refused as "differs from what the patch expects", where
``git apply`` and GNU ``patch`` apply both (found by ``tests/test_forced_paths_real.py``,
whose real release steps are also run with every file given a BOM).

``as_decoded`` reads such a hunk in the text's terms: the U+FEFF is taken off its old text
(only the first hunk can show line 1, hunks are in order; and only a hunk of whole lines
whose header names line 1: a U+FEFF elsewhere is a zero-width no-break space of the text,
and an old/new pair or a SEARCH block that starts with one still looks for it) and, when
its new line 1 keeps one, off its new text too, so the codec writes the BOM back as before.
A new line 1 without it means the diff takes the BOM away: the codec then writes none.
Nothing else changes: the hunk still has to be found, at line 1, by the same search.
"""

from __future__ import annotations

from collections.abc import Sequence

from nbedit._dataclass import replace
from nbedit.engine.models import Hunk
from nbedit.engine.text import Codec

__all__ = ["as_decoded", "without_bom"]

_BOM = "\ufeff"


def as_decoded(hunks: Sequence[Hunk], codec: Codec) -> tuple[Sequence[Hunk], Codec]:
    """``hunks`` and ``codec`` with a first hunk's U+FEFF read as the file's BOM (module docstring)."""
    if not codec.bom or not hunks:
        return hunks, codec
    first = hunks[0]
    if first.start_line != 1 or not first.whole_lines or not first.old.startswith(_BOM):
        return hunks, codec  # not line 1 of a diff: a U+FEFF inside the text (a zero-width no-break space)
    kept = first.new.startswith(_BOM)
    read = replace(
        first,
        old=first.old[1:],
        new=first.new[1:] if kept else first.new,
        changed_lines=None,  # a copy that changes old or new leaves this unknown (``models.Hunk``)
    )
    return [read, *list(hunks)[1:]], codec if kept else replace(codec, bom=False)


def without_bom(old_text: str, codec: Codec) -> str:
    """The old text of a deletion, compared with the decoded text: a BOM file's U+FEFF taken off."""
    return old_text[1:] if codec.bom and old_text.startswith(_BOM) else old_text
