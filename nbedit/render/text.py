"""A plan as plain text: the terminal rendering without colour.

For places that take only text (logs, an LLM tool result, a test failure
message). It is the rich rendering's plain form, so it says exactly what the
coloured preview says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbedit.engine.models import Plan

__all__ = ["plan_to_text"]


def plan_to_text(plan: Plan) -> str:
    """Header, then each file's numbered rows with ``-``/``+`` markers."""
    from nbedit.render.terminal import plan_text

    return "\n".join(line.plain.rstrip() for line in plan_text(plan)) + "\n"
