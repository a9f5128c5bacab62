"""The conveniences of the engine's values, delegated: ``plan.diff``, ``plan.stats()``,
``plan.explain()``, ``plan.without_hunks(...)``, a file plan's summary and a plan drawing
itself in a notebook.

Why a module of its own: a value type must not import what computes with it (the differ,
the explainer, the planner, ``render/``), not even inside a method, or the pure engine and
its renderers become one knot of imports (``tests/test_architecture.py`` checks that).
So ``nbedit.engine.models`` calls the functions held here, and the package's root,
``nbedit/__init__.py``, which Python runs before any nbedit module, fills them with
functions that import the module that computes on first use. The renderer knows the
value, never the reverse (rich's ``__rich_console__`` protocol is the same idea).

This module imports nothing, so the values use it at no start-up cost.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["diff_stats", "exclude_hunks", "explain_plan", "file_diff", "file_stats", "plan_to_html"]


def _not_wired(name: str) -> Callable[..., Any]:
    def missing(*arguments: object, **keywords: object) -> Any:
        raise NotImplementedError(
            f"nbedit._conveniences.{name} was never set; nbedit/__init__.py sets it when the package "
            "is imported, so import nbedit normally (not this module's file on its own)"
        )

    return missing


# the unified diff of one FilePlan (nbedit.engine.diff.file_diff)
file_diff: Callable[[Any], str] = _not_wired("file_diff")
# lines added and removed by a unified diff's text (nbedit.engine.diff.diff_stats)
diff_stats: Callable[[str], tuple[int, int]] = _not_wired("diff_stats")
# lines added and removed by one FilePlan, without writing its diff (nbedit.engine.diff.file_stats)
file_stats: Callable[[Any], tuple[int, int]] = _not_wired("file_stats")
# why each hunk of a Plan landed where it did (nbedit.engine.explain.explain_plan)
explain_plan: Callable[[Any], str] = _not_wired("explain_plan")
# a Plan with some hunks left out, keyed by (file index, hunk index) (nbedit.engine.plan.exclude_hunks)
exclude_hunks: Callable[[Any, set[tuple[int, int]]], Any] = _not_wired("exclude_hunks")
# a Plan as the static HTML a notebook shows (nbedit.render.html.plan_to_html)
plan_to_html: Callable[[Any], str] = _not_wired("plan_to_html")
