"""A plan as plain text, for places that take only text.

Two forms. ``plan_to_text`` is the terminal rendering without colour (numbered
rows), for logs, an LLM tool result or a test failure message: it says exactly
what the coloured preview says. ``plan_to_plain_diff`` is what ``nbedit apply``
writes when stdout is not a terminal: the header's facts (counts, every hunk
not found verbatim or found away from where the diff said) and then the plan's
unified diff, which the plan already holds. It builds no rows and loads no rich,
so piping a 1,000-hunk change costs milliseconds instead of seconds, and it is
still a diff a person or a tool can read.
"""

from __future__ import annotations

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from nbedit.engine.models import Plan

__all__ = ["plan_to_plain_diff", "plan_to_text"]


def plan_to_text(plan: Plan) -> str:
    """Header, then each file's numbered rows with ``-``/``+`` markers."""
    from nbedit.render.terminal import plan_plain_lines

    return "\n".join(line.rstrip() for line in plan_plain_lines(plan)) + "\n"


def plan_to_plain_diff(plan: Plan) -> str:
    """Header lines, file notes, a blank line, then the unified diff (ends with a newline).

    Made by ``render.summary.plain_diff`` (the ``nbedit`` program imports that module alone)."""
    from nbedit.render.summary import plain_diff

    return plain_diff(plan)
