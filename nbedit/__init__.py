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
