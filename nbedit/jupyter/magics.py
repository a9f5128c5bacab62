"""The magics: ``%%edit``, ``%%patch`` and ``%nbedit``.

Each magic is thin: parse its arguments with IPython's ``magic_arguments``
(a bad option is a ``UsageError`` carrying the usage line, never a
traceback), make a ``Workspace`` for this kernel, call one workspace method and
return what to display. Planning failures (no match, ambiguous match, bad
patch syntax, ...) come back as an ``ErrorView`` panel rather than an
exception: the message is the useful part, and a traceback would bury it.
Unattended runs are the exception to that: with ``--yes`` nobody is looking at
the panel, so a failure to plan or to write is raised (shown as the message
alone, no traceback) and the cell fails; ``nbconvert --execute`` and papermill
then stop instead of running later cells on files that were never changed.

The cell bodies arrive byte-exact because ``transformer.raw_cell_magic`` hands
them over before IPython's prompt stripping runs.

Workspace facts per kernel: the session is the kernel id (``kernel.session_id``),
``origin="magic"``, the running notebook is guarded against overwrite, and
each entry records the cell's ``In[n]``. ``%nbedit config`` sets this
kernel's defaults (root, exact, threshold); a magic's own options win.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from nbedit._dataclass import dataclass, replace
from nbedit.engine.models import Plan
from nbedit.errors import NbeditError
from nbedit.jupyter import kernel
from nbedit.jupyter.arguments import _parse, usage  # noqa: F401 (moved; still importable from here)
from nbedit.jupyter.review import ErrorView, Proposal, ReviewWidget
from nbedit.workspace import Workspace

__all__ = ["KernelDefaults", "NbeditMagics"]

_SEARCH_REPLACE_EXAMPLE = """\
%%edit path/to/file.py
<<<<<<< SEARCH
old lines, exactly as they are in the file
=======
new lines
>>>>>>> REPLACE"""


@dataclass(frozen=True, slots=True)
class KernelDefaults:
    """Options every magic in this kernel starts from (``%nbedit config``)."""

    root: str | None = None  # None: the kernel's current directory at each call
    exact: bool = False
    threshold: float | None = None  # None: the workspace's default

    def describe(self) -> str:
        root = self.root if self.root is not None else f"(current directory: {os.getcwd()})"
        threshold = "default" if self.threshold is None else f"{self.threshold:g}"
        return f"nbedit defaults for this kernel: root={root}, exact={self.exact}, threshold={threshold}"


def _threshold(value: float | None) -> float | None:
    if value is not None and not 0.0 < value <= 1.0:
        raise UsageError(f"--threshold must be in (0, 1], got {value:g}")
    return value


def _unattended(error: BaseException) -> BaseException:
    """``error`` made to show as its message alone when IPython reports it (no traceback).

    IPython prints what ``_render_traceback_`` returns instead of a traceback; the
    hook is set on this one instance, so an nbedit error raised elsewhere keeps its
    traceback. Unexpected errors (bugs) keep theirs too.
    """
    if isinstance(error, NbeditError):
        lines = [f"{type(error).__name__}: {error.spelled('magic')}", "nbedit: nothing was written"]
        error._render_traceback_ = lambda: lines  # type: ignore[attr-defined]
    return error


class _TextView:
    """Plain text shown as text/plain and a <pre> block."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        import html

        from nbedit.render.html import wrap

        return {
            "text/plain": self.text,
            "text/html": wrap(f"<pre>{html.escape(self.text, quote=False)}</pre>"),
        }


@magics_class
class NbeditMagics(Magics):
    """``%%edit``, ``%%patch`` and ``%nbedit``; one instance per loaded shell."""

    def __init__(self, shell: Any, *, tracker: kernel.CellTracker | None = None) -> None:
        super().__init__(shell)
        self.tracker = tracker or kernel.CellTracker(shell)
        self.defaults = KernelDefaults()

    # ------------------------------------------------------------------ shared

    def workspace(
        self, root: str | None = None, *, exact: bool | None = None, threshold: float | None = None
    ) -> Workspace:
        """A workspace for this kernel: its session, origin ``magic``, the running notebook guarded."""
        options: dict[str, Any] = {"exact": self.defaults.exact if exact is None else exact}
        chosen_threshold = threshold if threshold is not None else self.defaults.threshold
        if chosen_threshold is not None:
            options["threshold"] = chosen_threshold
        return Workspace(
            root if root is not None else (self.defaults.root or os.getcwd()),
            session=kernel.session_id(),
            origin="magic",
            running_notebook=kernel.running_notebook_path(self.shell),
            **options,
        )

    def review(
        self,
        make_plan: Callable[[Workspace], Plan | Proposal],
        *,
        root: str | None,
        yes: bool = False,
        dry_run: bool = False,
        force: bool = False,
        exact: bool | None = None,
        threshold: float | None = None,
        title: str | None = None,
        **apply_options: Any,
    ) -> ReviewWidget | ErrorView:
        """Plan with ``make_plan`` and return the review widget (applied at once with ``yes``)."""
        if yes and dry_run:
            raise UsageError("--yes and --dry-run contradict each other; pass one of them")
        try:
            workspace = self.workspace(root, exact=exact, threshold=threshold)
            proposed = make_plan(workspace)
        except NbeditError as error:
            if yes:
                raise _unattended(error) from None
            return ErrorView(error)
        options = {"execution_count": self.tracker.execution_count(), "force": force, **apply_options}
        if isinstance(proposed, Proposal):
            options.update(proposed.apply_options)
            proposed = proposed.plan
        widget = ReviewWidget(
            workspace,
            proposed,
            replan=lambda: make_plan(workspace),
            dry_run=dry_run,
            title=title,
            **options,
        )
        if yes:
            widget.apply()
            if widget.status in ("error", "stale") and widget.error is not None:
                raise _unattended(widget.error)
        return widget

    # ------------------------------------------------------------------ %%edit

    @magic_arguments(name="%edit")
    @argument("path", help="the file or notebook to edit, relative to the root")
    @argument("--root", help="workspace root (default: the kernel's current directory)")
    @argument("--yes", "-y", action="store_true", help="apply at once, without waiting for Apply")
    @argument("--dry-run", action="store_true", help="preview only; nothing can be applied")
    @argument("--exact", action="store_true", default=None, help="accept exact matches only")
    @argument("--threshold", type=float, help="fuzzy-match similarity threshold in (0, 1]")
    @argument("--replace-all", action="store_true", help="change every occurrence of each SEARCH text")
    @argument("--cell", help="limit the edit to one notebook cell: its id or 0-based index")
    @argument("--clear-outputs", action="store_true", help="clear the outputs of edited notebook cells")
    @argument("--encoding", help="the file's text encoding (e.g. cp1252, utf-16); default: detected")
    @argument("--force", action="store_true", help="write even to the notebook this kernel runs")
    @cell_magic
    def edit(self, line: str, cell: str) -> ReviewWidget | ErrorView:
        """Edit one file with SEARCH/REPLACE blocks; shows the diff with Apply/Reject.

        The body is one or more blocks::

            <<<<<<< SEARCH
            old lines, exactly as they are in the file
            =======
            new lines
            >>>>>>> REPLACE

        or the hunks of a unified diff (``@@ ... @@`` and ' ', '-', '+' lines, as models
        write them); blocks and hunks that name no file edit PATH. A whole model reply
        (prose and Markdown fences around the blocks) may be pasted as it is.
        """
        args = _parse(self.edit, line)
        threshold = _threshold(args.threshold)
        from nbedit.engine.formats import search_replace, unified

        if search_replace.marker_line(cell) is not None:
            dialect = "search_replace"
        elif unified.marker_line(cell) is not None or any(
            body_line.startswith("@@") for body_line in cell.split("\n")
        ):
            dialect = "unified"
        else:
            raise UsageError(
                "%%edit needs SEARCH/REPLACE blocks (or the @@ hunks of a diff) in the cell body, "
                f"for example:\n\n{_SEARCH_REPLACE_EXAMPLE}\n\n(use %%patch for apply_patch text)"
            )
        options: dict[str, Any] = {
            "dialect": dialect,
            "default_path": args.path,
            "cell": args.cell,
            "clear_outputs": args.clear_outputs or None,
            "replace_all": args.replace_all,
            "encoding": args.encoding,
        }
        return self.review(
            lambda workspace: workspace.plan_patch(cell, **options),
            root=args.root,
            yes=args.yes,
            dry_run=args.dry_run,
            force=args.force,
            exact=args.exact,
            threshold=threshold,
        )

    # ------------------------------------------------------------------ %%patch

    @magic_arguments(name="%patch")
    @argument("--root", help="workspace root (default: the kernel's current directory)")
    @argument("--yes", "-y", action="store_true", help="apply at once, without waiting for Apply")
    @argument("--dry-run", action="store_true", help="preview only; nothing can be applied")
    @argument("--exact", action="store_true", default=None, help="accept exact matches only")
    @argument("--threshold", type=float, help="fuzzy-match similarity threshold in (0, 1]")
    @argument("--overwrite", action="store_true", help="let added or moved files replace existing ones")
    @argument("--encoding", help="the files' text encoding (e.g. cp1252, utf-16); default: detected")
    @argument("--force", action="store_true", help="write even to the notebook this kernel runs")
    @cell_magic
    def patch(self, line: str, cell: str) -> ReviewWidget | ErrorView:
        """Apply a change in any dialect (unified/git diff, apply_patch, SEARCH/REPLACE) after review."""
        args = _parse(self.patch, line)
        threshold = _threshold(args.threshold)
        overwrite = True if args.overwrite else None
        return self.review(
            lambda workspace: workspace.plan_patch(cell, overwrite=overwrite, encoding=args.encoding),
            root=args.root,
            yes=args.yes,
            dry_run=args.dry_run,
            force=args.force,
            exact=args.exact,
            threshold=threshold,
        )

    # ------------------------------------------------------------------ %nbedit

    @line_magic
    def nbedit(self, line: str) -> Any:
        """nbedit commands::

            %nbedit history [--all] [--root DIR]
            %nbedit show ID
            %nbedit undo [ID] [--yes] [--force]
            %nbedit restore ID [--after] [--yes] [--force]
            %nbedit changes --since In[12]|ID|turn:ID|10min [--session S]
            %nbedit rewind In[12]|ID|turn:ID|last|10min [--yes] [--resolve keep|rewind] [--all-sessions]
            %nbedit view NOTEBOOK
            %nbedit config [--root DIR] [--exact|--no-exact] [--threshold F]

        ``undo`` and ``restore`` show the change for review first (Apply/Reject);
        ``--yes`` applies at once and, in an unattended run, a failure raises so the
        cell fails. ``--force`` overrides the check that the files are still as
        recorded (the replaced bytes are kept in the history). ``undo ID`` of an
        older entry takes its change out of the files as they are now (later
        edits stay), or says which later entries are in the way.
        """
        from nbedit.jupyter import rewind_magics

        name, _, rest = line.strip().partition(" ")
        commands: dict[str, Callable[[str], Any]] = {
            "history": self._history,
            "show": self._show,
            "undo": self._undo,
            "restore": self._restore,
            "changes": lambda rest: rewind_magics.changes(self, rest),
            "rewind": lambda rest: rewind_magics.rewind(self, rest),
            "view": self._view,
            "config": self._config,
        }
        if name not in commands:
            known = ", ".join(commands)
            what = f"unknown subcommand {name!r}" if name else "a subcommand is needed"
            raise UsageError(f"%nbedit: {what}; use one of: {known}")
        return commands[name](rest)

    @magic_arguments(name="nbedit history")
    @argument("--all", action="store_true", help="entries of every session, not just this kernel's")
    @argument("--root", help="workspace root")
    def _history_arguments(self) -> None:
        """List the edits recorded for this kernel, with Diff and Undo/Restore per entry."""

    def _history(self, rest: str) -> Any:
        from nbedit.jupyter.history_widget import HistoryWidget

        args = _parse(self._history_arguments, rest)
        try:
            return HistoryWidget(self.workspace(args.root), all_sessions=args.all, magics=self)
        except NbeditError as error:
            return ErrorView(error)

    @magic_arguments(name="nbedit show")
    @argument("id", help="history entry id (from %%nbedit history)")
    @argument("--root", help="workspace root")
    def _show_arguments(self) -> None:
        """Show what a history entry changed."""

    def _show(self, rest: str) -> Any:
        from nbedit.jupyter.history_widget import EntryDiffView, entry_diff

        args = _parse(self._show_arguments, rest)
        try:
            return EntryDiffView(*entry_diff(self.workspace(args.root), args.id))
        except NbeditError as error:
            return ErrorView(error)

    @magic_arguments(name="nbedit undo")
    @argument("id", nargs="?", help="history entry id (from %%nbedit history); default: the latest edit")
    @argument("--force", action="store_true", help="undo even if the files changed since")
    @argument("--yes", "-y", action="store_true", help="apply at once, without waiting for Apply")
    @argument("--root", help="workspace root")
    def _undo_arguments(self) -> None:
        """Undo this kernel's latest edit, or entry ID (shown for review first)."""

    def _undo(self, rest: str) -> Any:
        from nbedit.jupyter.history_widget import undo_request

        args = _parse(self._undo_arguments, rest)
        return self.history_review(undo_request(args.id, force=args.force), root=args.root, yes=args.yes)

    @magic_arguments(name="nbedit restore")
    @argument("id", help="history entry id (from %%nbedit history)")
    @argument("--after", action="store_true", help="restore the state after the entry instead of before")
    @argument("--force", action="store_true", help="restore even if the files changed since")
    @argument("--yes", "-y", action="store_true", help="apply at once, without waiting for Apply")
    @argument("--root", help="workspace root")
    def _restore_arguments(self) -> None:
        """Put files back as they were before (or after) a history entry (shown for review first)."""

    def _restore(self, rest: str) -> Any:
        from nbedit.jupyter.history_widget import restore_request

        args = _parse(self._restore_arguments, rest)
        request = restore_request(args.id, after=args.after, force=args.force)
        return self.history_review(request, root=args.root, yes=args.yes)

    def history_review(self, request: Any, *, root: str | None = None, yes: bool = False) -> Any:
        """Review an undo/restore like any other change (used by ``%nbedit`` and the history widget)."""
        return self.review(
            request.plan,
            root=root,
            yes=yes,
            title=request.title,
            **request.apply_options,
        )

    @magic_arguments(name="nbedit view")
    @argument("notebook", help="the notebook (or file) to show as nbedit sees it")
    @argument("--root", help="workspace root")
    def _view_arguments(self) -> None:
        """Show a notebook's editable cell view: the text SEARCH/REPLACE blocks are matched against."""

    def _view(self, rest: str) -> Any:
        args = _parse(self._view_arguments, rest)
        try:
            return _TextView(self.workspace(args.root).view(args.notebook))
        except NbeditError as error:
            return ErrorView(error)

    @magic_arguments(name="nbedit config")
    @argument("--root", help="workspace root for this kernel's magics ('' for the current directory)")
    @argument("--exact", dest="exact", action="store_true", default=None, help="accept exact matches only")
    @argument("--no-exact", dest="exact", action="store_false", help="allow normalised and fuzzy matches")
    @argument("--threshold", type=float, help="fuzzy-match similarity threshold in (0, 1]")
    def _config_arguments(self) -> None:
        """Set this kernel's defaults for the magics; without options, show them."""

    def _config(self, rest: str) -> Any:
        args = _parse(self._config_arguments, rest)
        changes: dict[str, Any] = {}
        if args.root is not None:
            if args.root and not os.path.isdir(args.root):
                raise UsageError(f"--root {args.root}: not a folder")
            changes["root"] = os.path.abspath(args.root) if args.root else None
        if args.exact is not None:
            changes["exact"] = args.exact
        if args.threshold is not None:
            changes["threshold"] = _threshold(args.threshold)
        self.defaults = replace(self.defaults, **changes)
        return _TextView(self.defaults.describe())
