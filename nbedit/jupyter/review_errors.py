"""What a review shows when something went wrong: the error panel, the note of a re-plan, and
the view a magic returns when the change could not even be planned.

An nbedit error is drawn by the render package's panel (what happened, what to do next);
anything else is a bug and is shown with its traceback, so it is never swallowed
(ipywidgets#2949 hides exceptions raised in a widget's handlers).
"""

from __future__ import annotations

import html
import traceback
from typing import Any

from nbedit.errors import NbeditError
from nbedit.render.errors import error_to_html
from nbedit.render.html import wrap

__all__ = ["ErrorView", "error_html", "error_text", "replanned_html"]


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


def error_html(error: BaseException) -> str:
    """An nbedit error as the render package's panel; anything else with its traceback."""
    if isinstance(error, NbeditError):
        return error_to_html(error)
    trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return wrap(
        '<div class="nb-error"><div class="nb-error-title">✖ unexpected error (a bug in nbedit; '
        "please report it)</div>"
        f'<div class="nb-error-message">{_escape(f"{type(error).__name__}: {error}")}</div>'
        f"<details><summary>traceback</summary><pre>{_escape(trace)}</pre></details></div>"
    )


def replanned_html(replanned: Any) -> str:
    """What changed on disk under a re-planned preview, one diff per file."""
    from nbedit.render.html import unified_diff_html

    parts = [
        f'<div class="nb-note">changed on disk since the preview: {_escape(path)}</div>{unified_diff_html(diff)}'
        for path, diff in replanned.disk_changes
    ]
    return wrap("".join(parts))


def error_text(error: BaseException) -> str:
    if isinstance(error, NbeditError):
        return f"{type(error).__name__}: {error.spelled('magic')}"
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


class ErrorView:
    """What a magic shows when the change could not even be planned: the error, readable, no traceback."""

    status = "error"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __repr__(self) -> str:
        return error_text(self.error)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": error_text(self.error), "text/html": error_html(self.error)}
