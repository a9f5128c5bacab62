"""What a hunk's own lines say about how it may be placed: ``context_free``.

The planner asks this of every hunk of a git diff (whose ``index`` line names the diff's base)
before it locates any. It is defined beside the hunk (``engine/models.py``), so that a diff whose
hunks all stand where they say never imports the matcher's package, let alone the search, the
tiers' evidence or the fuzzy scorer (start-up time of the ``nbedit apply`` of a small patch;
``tests/test_startup.py``); this module and ``evidence`` give it too.
"""

from __future__ import annotations

from nbedit.engine.models import context_free

__all__ = ["context_free"]
