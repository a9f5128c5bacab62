"""What a hunk's own lines say about how it may be placed: ``context_free``.

The planner asks this of every hunk of a git diff (whose ``index`` line names the diff's base)
before it locates any, so it lives in a module of its own: a diff whose hunks all stand where
they say never imports the search, the tiers' evidence or the fuzzy scorer (start-up time of the
``nbedit apply`` of a small patch; ``tests/test_startup.py``). ``evidence`` re-exports it.
"""

from __future__ import annotations

from nbedit.engine.models import Hunk

__all__ = ["context_free"]


def context_free(hunk: Hunk) -> bool:
    """A diff hunk with a line number and no context lines (``git diff -U0``, or a model's bare hunk).

    Its old text is only the lines it removes (none for a pure insertion), so nothing but
    those lines and the line number says where it goes. The number is the diff's base's:
    in any other file it is evidence only where the removed lines confirm it (issue 21,
    rule 5; see ``evidence.removed_lines_unique`` and the planner's use of git's ``index`` line).
    """
    if hunk.start_line is None or hunk.anchors or hunk.replace_all:
        return False
    if not hunk.old or not hunk.new:
        return True
    if hunk.old.partition("\n")[0] == hunk.new.partition("\n")[0]:
        return False  # leading context (the common case, decided without splitting the texts)
    old_lines, new_lines = hunk.old.removesuffix("\n").split("\n"), hunk.new.removesuffix("\n").split("\n")
    # context lines are shared at an edge (a blank one too)
    return old_lines[0] != new_lines[0] and old_lines[-1] != new_lines[-1]
