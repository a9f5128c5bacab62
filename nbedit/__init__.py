"""nbedit: review and apply edits to files and notebooks, safely and visibly.

The public surface is small and curated (see ``__all__``)::

    import nbedit
    ws = nbedit.Workspace(root=".")
    plan = ws.plan_patch(text)          # any dialect, auto-detected; nothing written
    print(plan.diff)
    ws.apply(plan)                      # locked, stale-checked, atomic, recorded

``%load_ext nbedit`` registers the ``%%edit`` / ``%%patch`` / ``%nbedit`` magics;
IPython is imported only then.
"""

from __future__ import annotations

from nbedit import _conveniences  # the values' conveniences, wired at the end of this file

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)


__version__ = "0.1.0"

__all__ = [
    "AmbiguousMatch",
    "ApplyResult",
    "BinaryFile",
    "Candidate",
    "Change",
    "FileChange",
    "FileExists",
    "FileMissing",
    "FilePlan",
    "FileTooLarge",
    "HistoryError",
    "Hunk",
    "LiveConflict",
    "LocatedHunk",
    "Match",
    "MatchError",
    "NbeditError",
    "NoMatch",
    "NotAFile",
    "NotebookError",
    "NothingToUndo",
    "OptionError",
    "OutsideWorkspace",
    "OverlappingHunks",
    "PartlyApplied",
    "PatchSyntaxError",
    "PathError",
    "Plan",
    "RewindConflict",
    "StaleFile",
    "Tier",
    "UnsafeChange",
    "UnsupportedFile",
    "Workspace",
    "WriteError",
    "__version__",
    "edit",
    "load_ipython_extension",
    "patch",
    "unload_ipython_extension",
]


_ERRORS = (
    "AmbiguousMatch",
    "BinaryFile",
    "Candidate",
    "FileExists",
    "FileMissing",
    "FileTooLarge",
    "HistoryError",
    "LiveConflict",
    "MatchError",
    "NbeditError",
    "NoMatch",
    "NotAFile",
    "NotebookError",
    "NothingToUndo",
    "OptionError",
    "OutsideWorkspace",
    "OverlappingHunks",
    "PartlyApplied",
    "PatchSyntaxError",
    "PathError",
    "RewindConflict",
    "StaleFile",
    "UnsafeChange",
    "UnsupportedFile",
    "WriteError",
)
_MODELS = ("Change", "FileChange", "FilePlan", "Hunk", "LocatedHunk", "Match", "Plan", "Tier")


def __dir__() -> list[str]:
    # the lazily loaded names too, for tab completion
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str) -> Any:
    # the workspace (and the matcher, planner and storage behind it) and the engine's models
    # load on first use: ``nbedit --help`` and ``import nbedit`` do not pay for them
    if name in ("Workspace", "ApplyResult"):
        from nbedit import workspace

        return getattr(workspace, name)
    if name in _MODELS:
        from nbedit.engine import models

        return getattr(models, name)
    if name in _ERRORS:
        from nbedit import errors

        return getattr(errors, name)
    raise AttributeError(f"module 'nbedit' has no attribute {name!r}")


if TYPE_CHECKING:
    from typing import Any

    from nbedit.engine.models import Change, FileChange, FilePlan, Hunk, LocatedHunk, Match, Plan, Tier
    from nbedit.errors import (
        AmbiguousMatch,
        BinaryFile,
        Candidate,
        FileExists,
        FileMissing,
        FileTooLarge,
        HistoryError,
        LiveConflict,
        MatchError,
        NbeditError,
        NoMatch,
        NotAFile,
        NotebookError,
        NothingToUndo,
        OptionError,
        OutsideWorkspace,
        OverlappingHunks,
        PartlyApplied,
        PatchSyntaxError,
        PathError,
        RewindConflict,
        StaleFile,
        UnsafeChange,
        UnsupportedFile,
        WriteError,
    )
    from nbedit.workspace import ApplyResult, Workspace


def patch(text: str, root: str = ".", **options: Any) -> ApplyResult:
    """Plan and apply a change in any dialect. Options as for ``Workspace.plan_patch``."""
    from nbedit.workspace import Workspace

    workspace_options = {k: options.pop(k) for k in ("history", "home", "session") if k in options}
    workspace = Workspace(root, **workspace_options)
    return workspace.apply(workspace.plan_patch(text, **options))


def edit(
    path: str, old: str, new: str, root: str = ".", *, replace_all: bool = False, **options: Any
) -> ApplyResult:
    """Replace ``old`` with ``new`` in one file and apply it."""
    from nbedit.workspace import Workspace

    workspace_options = {k: options.pop(k) for k in ("history", "home", "session") if k in options}
    workspace = Workspace(root, **workspace_options)
    return workspace.apply(workspace.plan_edit(path, old, new, replace_all=replace_all, **options))


def load_ipython_extension(ipython: Any) -> None:
    from nbedit.jupyter.extension import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from nbedit.jupyter.extension import unload

    unload(ipython)


# -- the values' conveniences ----------------------------------------------------------------------
# ``plan.diff``, ``plan.explain()``, ``plan.without_hunks()`` and a plan's ``_repr_html_`` are
# computed by modules that import the values; the values reach them through ``nbedit._conveniences``
# (see its docstring), wired here because Python runs this file before any nbedit module. Each
# function imports its module on first use (``import nbedit`` and ``nbedit --help`` stay light),
# then puts the real function in its place.


def _file_diff(file_plan: Any) -> str:
    from nbedit.engine.diff import file_diff

    _conveniences.file_diff = file_diff
    return file_diff(file_plan)


def _diff_stats(diff: str) -> tuple[int, int]:
    from nbedit.engine.diff import diff_stats

    _conveniences.diff_stats = diff_stats
    return diff_stats(diff)


def _file_stats(file_plan: Any) -> tuple[int, int]:
    from nbedit.engine.diff_counts import lone_exact_stats

    counted = lone_exact_stats(file_plan)  # the usual diff, applied where it says: no diff module
    if counted is not None:
        return counted
    from nbedit.engine.diff import file_stats

    _conveniences.file_stats = file_stats
    return file_stats(file_plan)


def _explain_plan(plan: Any) -> str:
    from nbedit.engine.explain import explain_plan

    _conveniences.explain_plan = explain_plan
    return explain_plan(plan)


def _exclude_hunks(plan: Any, excluded: set[tuple[int, int]]) -> Any:
    from nbedit.engine.plan import exclude_hunks

    _conveniences.exclude_hunks = exclude_hunks
    return exclude_hunks(plan, excluded)


def _plan_to_html(plan: Any) -> str:
    from nbedit.render.html import plan_to_html

    _conveniences.plan_to_html = plan_to_html
    return plan_to_html(plan)


_conveniences.file_diff = _file_diff
_conveniences.diff_stats = _diff_stats
_conveniences.file_stats = _file_stats
_conveniences.explain_plan = _explain_plan
_conveniences.exclude_hunks = _exclude_hunks
_conveniences.plan_to_html = _plan_to_html
