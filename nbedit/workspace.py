"""The session: one root folder, its files, and the write path into them.

``Workspace`` is the one object front ends talk to. It confines every path to
the root (``..``, absolute paths and symlinks that leave it are refused, when
planned and again at write time; a newline or other control character in a name is
refused before anything parses it), pins the root when it opens it (a root renamed
away and replaced by a link since is refused), reads files for the pure planner
through the same no-follow walk from the root as the writes, and applies
plans through ``storage``: locks on the files' folders held across the stale check
and the replace, a history entry made durable before any file is replaced, then
an all-or-nothing atomic write in which each file is reached from the root without
following a link swapped in during the review (``storage.confine``).

What a first edit waits for is started early, on other threads, and joined where
it is needed: a new home's history store is created while the change is planned (joined
by ``_store``), a big file read with the history on is flushed meanwhile (joined before
the entry links it), a notebook is read while the notebook modules import (joined by
the planner's read), and the entry is recorded while the writer flushes the new
content (``storage.atomic.apply_writes(meanwhile=...)``). Every one of them is joined,
and its error raised, before any file is replaced; a file read for the plan keeps
its identity (inode, size, times), so the check before the lock need not read an
untouched file again.

The session's rooms: ``apply_pipeline`` (the write path, a mixin of ``Workspace``),
``storage.root_source`` (confined reads of the root), ``inputs`` (option and text checks),
``apply_result`` (the value ``apply`` returns) and ``background`` (the threads joined later).
"""

from __future__ import annotations

import os
import sys

from nbedit._path_text import expanduser, normal
from nbedit.apply_pipeline import UNSET_LIVE_CLIENT, ApplyPipeline
from nbedit.apply_result import ApplyResult  # re-exported: nbedit.workspace.ApplyResult
from nbedit.background import Background
from nbedit.engine import formats
from nbedit.engine.models import (
    DEFAULT_THRESHOLD,
    Change,
    FileChange,
    Hunk,
    Plan,
    is_notebook_path,
    unjoined_after,
)
from nbedit.engine.plan import plan_change
from nbedit.engine.text import decode, fingerprint
from nbedit.engine.text_edit import (
    DEFAULT_MAX_CELLS,
    DEFAULT_MAX_HUNKS,
    DEFAULT_MAX_SEQUENTIAL_WORK,
    PlanOptions,
)
from nbedit.errors import FileTooLarge, LiveConflict, NbeditError, NotAFile, PatchSyntaxError
from nbedit.inputs import cell_selector, check_text, refine, valid_encoding, valid_limit, valid_threshold
from nbedit.storage.records import DATABASE_NAME, default_home, default_home_text  # default_home re-exported
from nbedit.storage.root_source import OverlaySource, RootSource

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["ApplyResult", "Workspace", "default_home"]

DEFAULT_MAX_FILE_SIZE = 256 * 1024 * 1024


class Workspace(ApplyPipeline):
    """Plan, review and apply changes to the files under ``root``.

    Options given here are defaults; every ``plan_*`` call may override them.
    ``history=False`` turns the snapshot history off; ``home`` is where the history
    lives (default ``$NBEDIT_HOME`` or ``~/.nbedit``; locks need no home, see ``storage.locks``).
    ``encoding`` declares the files' text encoding (default: UTF-8, UTF-16 by its BOM, or a
    detected Western 8-bit one). A bad option value is an ``OptionError``.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        *,
        exact: bool = False,
        threshold: float = DEFAULT_THRESHOLD,
        overwrite: bool = False,
        clear_outputs: bool = False,
        history: bool = True,
        home: str | os.PathLike[str] | None = None,
        session: str | None = None,
        origin: str = "api",
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
        max_cells: int = DEFAULT_MAX_CELLS,
        max_hunks: int = DEFAULT_MAX_HUNKS,
        max_sequential_work: int = DEFAULT_MAX_SEQUENTIAL_WORK,
        running_notebook: str | None = None,
        keep_per_file: int | None = 1000,
        keep_bytes: int | None = None,
        encoding: str | None = None,
        live: object = "auto",
    ) -> None:
        # strings inside, so a one-shot command never imports pathlib; ``root`` and ``home`` are Paths
        self._root_text = normal(root)
        if not os.path.isdir(self._root_text):
            raise NotAFile(
                f"workspace root {self._root_text} is not a folder; create it or pick another root"
            )
        threshold = valid_threshold(threshold)
        self.options = PlanOptions(
            exact=exact,
            threshold=threshold,
            overwrite=overwrite,
            clear_outputs=clear_outputs,
            encoding=valid_encoding(encoding),
            max_cells=valid_limit(max_cells, "max_cells"),
            max_hunks=valid_limit(max_hunks, "max_hunks"),
            max_sequential_work=valid_limit(max_sequential_work, "max_sequential_work"),
        )
        self._home_text = normal(home) if home is not None else default_home_text()
        self.session = session or os.environ.get("NBEDIT_SESSION") or f"process-{os.getpid()}"
        self.origin = origin
        self.history_enabled = history
        self.running_notebook = running_notebook
        self._source = RootSource(self._root_text, max_file_size)
        self._history = None
        self._opening: tuple[str, Background, bool] | None = None  # (home, its store opening, existed)
        self.keep_per_file = keep_per_file  # retention: entries kept per file (None: all)
        self.keep_bytes = keep_bytes  # retention: total stored bytes (None: no cap)
        # open JupyterLab tabs: "auto" finds the server this process runs under on the first
        # write (nbedit.live); None/False: off; any other object is the client (tests)
        self.live = live
        self._live_client: object = (
            None if live in (None, False) else (live if live != "auto" else UNSET_LIVE_CLIENT)
        )
        self._live_bases: dict[str, tuple[str, bytes]] = {}  # re-planned against a tab: path -> (disk, base)
        self._turn: str | None = None  # the agent turn of the change being applied

    @property
    def root(self) -> Path:
        """The workspace root as given (a ``Path``)."""
        from pathlib import Path

        return Path(self._root_text)

    @property
    def home(self) -> Path:
        """The history's home folder (a ``Path``); set it to use another one."""
        from pathlib import Path

        return Path(self._home_text)

    @home.setter
    def home(self, home: str | os.PathLike[str]) -> None:
        text = normal(home)
        if text != self._home_text:
            self._home_text = text
            self._close(keep_log=False)  # the store of the old home: the next use opens the new one

    def __repr__(self) -> str:
        return f"Workspace(root={self._root_text!r}, session={self.session!r})"

    # ------------------------------------------------------------------ planning

    def _options(
        self,
        exact: bool | None,
        threshold: float | None,
        overwrite: bool | None,
        clear_outputs: bool | None = None,
        encoding: str | None = None,
    ) -> PlanOptions:
        base = self.options
        return PlanOptions(
            exact=base.exact if exact is None else exact,
            threshold=base.threshold if threshold is None else valid_threshold(threshold),
            overwrite=base.overwrite if overwrite is None else overwrite,
            clear_outputs=base.clear_outputs if clear_outputs is None else clear_outputs,
            encoding=base.encoding if encoding is None else valid_encoding(encoding),
            max_cells=base.max_cells,
            max_hunks=base.max_hunks,
            max_sequential_work=base.max_sequential_work,
        )

    def plan_patch(
        self,
        text: str,
        *,
        dialect: str | None = None,
        default_path: str | None = None,
        cell: str | int | None = None,
        replace_all: bool = False,
        exact: bool | None = None,
        threshold: float | None = None,
        overwrite: bool | None = None,
        clear_outputs: bool | None = None,
        encoding: str | None = None,
    ) -> Plan:
        """Parse a change in any dialect (auto-detected) and plan it; writes nothing.

        ``cell`` limits every hunk to one notebook cell; ``replace_all`` lets each
        hunk change every place its old text occurs (instead of requiring one).
        ``encoding`` declares the files' text encoding (``"cp1252"``, ``"utf-16"``).
        """
        self._check_size(text, "the change text")
        check_text(text, "the change text")
        change = formats.parse(text, dialect=dialect, default_path=default_path)
        if cell is not None or replace_all:
            selector = cell_selector(cell) if cell is not None else None
            change = Change(
                tuple(refine(file_change, selector, replace_all) for file_change in change.files),
                change.dialect,
            )
        options = self._options(exact, threshold, overwrite, clear_outputs, encoding)
        return self._plan(change, options)

    def plan_edit(
        self,
        path: str,
        old: str,
        new: str,
        *,
        replace_all: bool = False,
        cell: str | int | None = None,
        exact: bool | None = None,
        threshold: float | None = None,
        overwrite: bool | None = None,
        clear_outputs: bool | None = None,
        encoding: str | None = None,
    ) -> Plan:
        """Plan replacing ``old`` with ``new`` in one file (a plain old/new pair)."""
        self._check_size(old, "the old text")
        self._check_size(new, "the new text")
        check_text(old, "the old text")
        check_text(new, "the new text")
        if old == new:
            raise PatchSyntaxError(
                "old and new text are identical, so there is nothing to change",
                dialect="edit",
                hint="pass the text as it is now as old, and what it should become as new",
            )
        if not old:
            normalised = self._source.normalise(path)
            existing = self._source.read(normalised)
            if existing:
                raise PatchSyntaxError(
                    f"{path}: old text is empty but the file has content",
                    dialect="edit",
                    hint="give the text to replace; an empty old text only creates a new (or empty) file",
                )
        hunk = Hunk(old=old, new=new, whole_lines=False, replace_all=replace_all, at_end=not old)
        change = Change(
            (FileChange(path=path, hunks=(hunk,), cell=cell_selector(cell) if cell is not None else None),),
            "edit",
        )
        options = self._options(exact, threshold, overwrite, clear_outputs, encoding)
        return self._plan(change, options)

    def _check_size(self, text: str, what: str) -> None:
        """A change text longer than the largest file nbedit edits is refused before it is parsed."""
        limit = self._source.max_file_size
        if len(text) > limit:
            raise FileTooLarge(
                f"{what} is {len(text):,} characters, over the {limit:,}-character limit (the largest file "
                "nbedit edits); nothing was parsed or written. Split the change, or raise max_file_size "
                "(Workspace(max_file_size=...)) if you really mean it",
                path=None,
                size=len(text),
                limit=limit,
            )

    def _plan(self, change: Change, options: PlanOptions) -> Plan:
        """``plan_change`` with the slow parts of a first edit started meanwhile on other threads:
        a new home's history store is created, a big file is flushed, and a notebook is read
        while its modules import (their first import costs some 20 ms)."""
        self._open_store_meanwhile()
        self._source.sync_reads = self.history_enabled
        try:
            self._prefetch_notebook(change)
            plan = plan_change(change, self._source, options, root=self._root_text)
            if self.history_enabled:
                _hash_notebooks_meanwhile(plan)
            return plan
        finally:
            self._source.sync_reads = False
            self._source.drop_prefetched()

    def _prefetch_notebook(self, change: Change) -> None:
        if "nbedit.engine.notebook" in sys.modules:
            return
        for file_change in change.files:
            if is_notebook_path(file_change.path) and file_change.operation == "update":
                try:
                    path = self._source.normalise(file_change.path)
                    # the reading thread starts the notebook's SHA-256 (which the plan asks for and
                    # the history names the file by) the moment the bytes are there
                    self._source.prefetch(path, then=_fingerprint_meanwhile)
                except NbeditError:
                    return  # the planner raises it again, where it always did
                import nbedit.engine.notebook  # noqa: F401 - imported while the file is read
                from nbedit.engine.notebook.fast import preload

                try:
                    size = os.stat(self._source.absolute(path)).st_size
                except OSError:
                    return  # the read says why, where it always did
                preload(size)  # msgspec for a big notebook, imported while the file is read too
                return

    def view(self, path: str) -> str:
        """The editable cell view of a notebook (a plain-text file is returned as is)."""
        normalised = self._source.normalise(path)
        data = self._source.read(normalised)
        if data is None:
            raise NotAFile(f"{path}: does not exist", path=path)
        if is_notebook_path(normalised):
            from nbedit.engine.notebook import cell_view

            return cell_view(data, normalised)
        text, _ = decode(data, normalised, self.options.encoding)
        return text

    def replan_live(self, plan: Plan, conflict: LiveConflict) -> Plan:
        """``plan``'s change located again against the open tab's live document.

        After a ``LiveConflict`` (unsaved typing in the edited cells or lines): the
        edited cells' live sources (a text file: the tab's whole text) become the base,
        the plan's edits are placed on it by the matcher as a zero-context diff, and
        applying the result writes the edit on top of the typing; the tab takes it in
        place. Raises ``LiveConflict`` again if the tab did not send its document.
        """
        from nbedit._dataclass import replace
        from nbedit.live.rebase import combined_diff, live_base

        bases: dict[str, bytes] = {}
        for file_plan in plan.files:
            document = conflict.documents.get(file_plan.path)
            if document is None or file_plan.before_bytes is None or file_plan.after_bytes is None:
                continue
            base = live_base(
                file_plan.notebook,
                file_plan.before_bytes,
                file_plan.after_bytes,
                document,
                file_plan.encoding,
            )
            if base is not None:
                bases[file_plan.path] = base
        if not bases:
            raise conflict
        texts = []
        for file_plan in plan.files:
            if file_plan.operation != "update" or file_plan.new_path is not None:
                raise conflict  # creating, deleting or renaming files is not re-planned on a tab
            before = file_plan.display_before if file_plan.notebook else file_plan.before
            after = file_plan.display_after if file_plan.notebook else file_plan.after
            texts.append((file_plan.path, before or "", after or ""))
        change = formats.parse(combined_diff(texts), dialect="unified")
        overlay = OverlaySource(self._source, bases)
        replanned = plan_change(change, overlay, self.options, root=self._root_text)
        files = []
        for file_plan in replanned.files:
            disk = next((f.before_bytes for f in plan.files if f.path == file_plan.path), None)
            if file_plan.path in bases and disk is not None:
                self._live_bases[file_plan.path] = (fingerprint(disk), bases[file_plan.path])
                file_plan = replace(file_plan, before_bytes=disk, fingerprint=fingerprint(disk))
            files.append(file_plan)
        return replace(replanned, files=tuple(files), _diff_cache=[])

    # ------------------------------------------------------------------ history

    def _store(self):  # type: ignore[no-untyped-def]
        """The history store, opened once; a damaged one is moved aside (with a warning)
        and entries a crashed writer left pending are settled against the files."""
        if self._history is None:
            store = self._opened_store()
            if store.notice:
                import warnings  # a damaged history only (start-up)

                from nbedit.warnings import NbeditWarning

                warnings.warn(store.notice, NbeditWarning, stacklevel=3)
            self._history = store
            if store.pending():  # a writer died mid-apply (rare): nbedit.recovery settles it
                from nbedit.recovery import recover

                recover(store, self._source.pinned, self._source.read)
        return self._history

    def _open_store_meanwhile(self, *, writing: bool = False) -> None:
        """Start opening the history store on another thread, once a write is in view: a new
        home's database, schema, log and their fsyncs (some 10 ms, mostly waiting for the disk),
        or an existing one's connection, settings and schema check (1-3 ms, nearly all of it in
        SQLite, which lets the planner run meanwhile), happen while this thread plans. ``_store``
        joins it; an error a new home met is raised there, as if opened there. An existing
        database is only opened on the thread, never set aside: one that is damaged or emptied
        (or any error opening it) is opened again by ``_store`` on this thread, which moves it
        aside and warns as it always did, so a preview alone never replaces a history. The
        thread is the store's only user until that join hands it over.

        An existing home is opened on the thread only in a process that has loaded the history's
        modules already (a kernel, an agent's session, a second workspace). In a process that has
        not (one ``nbedit apply``), the thread would import them, and SQLite's opening gives up and
        takes back the interpreter's lock at every call: the two threads hand the lock to each other
        some 250 times, which cost more than the opening saved (31 interleaved runs of a small
        ``nbedit apply``: 3 ms of wall and 5 ms of CPU more with the thread). There the store is
        opened where it is first used, and ``writing`` (the call of ``apply``) imports its modules
        here, before the write starts its threads: sqlite's C module then loads without
        ``functools`` (``storage/sqlite.py``), which only a process with one thread may do."""
        if not self.history_enabled or self._history is not None or self._opening is not None:
            return
        home = self._home_text
        try:  # the store expands ``~`` in the home (``HistoryStore``): look where it will
            existing = os.stat(os.path.join(expanduser(home), DATABASE_NAME)).st_size > 0
        except (OSError, RuntimeError):  # (RuntimeError: ``~user`` of no user; the store says so)
            existing = False
        else:
            if not existing:
                return  # an emptied database: opened, and reported, where it is used
            if "nbedit.storage.history" not in sys.modules:
                if writing:
                    import nbedit.storage.history  # noqa: F401 - here: no thread of the write runs yet
                return

        def open_store() -> object:
            from nbedit.storage.history import HistoryStore

            return HistoryStore(home) if existing else HistoryStore.open_or_recreate(home)

        self._opening = (home, Background(open_store, "nbedit-history-open"), existing)

    def _opened_store(self):  # type: ignore[no-untyped-def]
        opening, self._opening = self._opening, None
        if opening is not None:
            home, background, existing = opening
            try:
                store = background.result()
            except Exception:
                if not existing:
                    raise
                store = None  # opened again below, where a damaged one is set aside with a warning
            if home == self._home_text and store is not None:
                return store
            if store is not None:
                store.close()  # type: ignore[attr-defined]  # the home was changed meanwhile
        from nbedit.storage.history import HistoryStore

        return HistoryStore.open_or_recreate(self._home_text)

    def close(self) -> None:
        """Close the history store now (it opens again when the history is next used)."""
        self._close(keep_log=False)

    def _close_before_exit(self) -> None:
        """``close``, in a process that ends right after (the ``nbedit`` program, before
        ``os._exit``): the history's write-ahead log is left for the next process instead of
        folded into the database (``storage.database.Database.close``: three syncs fewer)."""
        self._close(keep_log=True)

    def _close(self, *, keep_log: bool) -> None:
        opening, self._opening = self._opening, None
        if opening is not None:
            try:
                opened = opening[1].result()
                if opened is not None:
                    opened.close(keep_log=keep_log)  # type: ignore[attr-defined]
            except Exception:  # an error opening it is no error closing it
                pass
        store, self._history = self._history, None
        if store is not None:
            store.close(keep_log=keep_log)

    def _retain(self, entry_id: str) -> None:
        """Apply the retention caps now and then: after every 25th entry of the store.

        Counted by the store's entry ids, not per process: a CLI call records one entry
        per process, and pruning a long history on each call cost it tens of ms.
        """
        if self.keep_per_file is None and self.keep_bytes is None:
            return
        if int(entry_id.removeprefix("e"), 16) % 25 != 0:
            return
        self._store().prune(max_entries_per_file=self.keep_per_file, max_total_bytes=self.keep_bytes)

    # ------------------------------------------------------------------ history operations (nbedit.history_ops)

    def history(
        self, *, all_sessions: bool = False, path: str | None = None, all: bool | None = None
    ) -> list:
        """Recorded entries, newest first: this session's, or every session's (``all_sessions``)."""
        from nbedit import history_ops

        return history_ops.history(self, all_sessions=all_sessions if all is None else all, path=path)

    def show(self, entry_id: str) -> str:
        """The unified diff of a history entry."""
        from nbedit import history_ops

        return history_ops.show(self, entry_id)

    def undo(self, entry_id: str | None = None, *, force: bool = False) -> ApplyResult:
        """Revert this session's latest edit not yet undone (or entry ``entry_id``); recorded as an entry.

        An older entry whose files later entries changed is undone by its reverse, located in the files
        as they are now (later changes stay); ``StaleFile`` when they are in its way, nothing written."""
        from nbedit.history_reverse import plan_entry_undo

        return plan_entry_undo(self, entry_id, force=force).apply(self)

    def plan_undo(self, entry_id: str | None = None, *, force: bool = False) -> Plan:
        """The plan an ``undo`` would apply, for review (``apply`` it with ``undoes=entry_id`` to undo)."""
        from nbedit.history_reverse import plan_entry_undo

        return plan_entry_undo(self, entry_id, force=force).plan

    def restore(
        self, entry_id: str, *, which: str = "before", after: bool | None = None, force: bool = False
    ) -> ApplyResult:
        """Put an entry's files back as they were before it (``which="after"``: after it)."""
        from nbedit import history_ops

        chosen = which if after is None else ("after" if after else "before")
        return history_ops.restore(self, entry_id, which=chosen, force=force)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ checkpoints (nbedit.rewind)

    def checkpoints(self, *, all_sessions: bool = False) -> list:
        """This root's cell runs and agent turns that changed files, oldest first, entries inside."""
        from nbedit import rewind

        return rewind.checkpoints(self, all_sessions=all_sessions)

    def changes(self, since: object, *, session: str | None = None):  # type: ignore[no-untyped-def]
        """Everything nbedit wrote since ``since`` (``"In[12]"``, an entry id, ``"10min"``): per
        file one diff, who wrote it, and whether the file changed outside nbedit since."""
        from nbedit import rewind

        return rewind.changes_since(self, since, session=session)  # type: ignore[arg-type]

    def plan_rewind(self, to: object, *, all_sessions: bool = False):  # type: ignore[no-untyped-def]
        """The rewind to before checkpoint ``to``, for review (``RewindPlan.apply`` writes it)."""
        from nbedit import rewind

        return rewind.plan_rewind(self, to, all_sessions=all_sessions)  # type: ignore[arg-type]

    def rewind(self, to: object, *, all_sessions: bool = False, resolve: object = None) -> ApplyResult:
        """Take every file back to before checkpoint ``to``, keeping others' later edits where they
        do not overlap; one history entry (undo it to come back). ``resolve``: ``"keep"`` or
        ``"rewind"`` (or a dict per path) for files where they overlap (else ``RewindConflict``)."""
        from nbedit import rewind

        return rewind.rewind(self, to, all_sessions=all_sessions, resolve=resolve)  # type: ignore[arg-type]


def _fingerprint_meanwhile(data: bytes) -> None:
    """Start hashing a notebook's bytes on another thread (``engine.digest``; the plan joins it)."""
    from nbedit.engine.digest import IN_BACKGROUND, fingerprint_meanwhile

    if len(data) >= IN_BACKGROUND:
        try:  # noqa: SIM105 - not contextlib (start-up)
            fingerprint_meanwhile(data)
        except Exception:  # the plan hashes the bytes again and hears the error itself
            pass


def _hash_notebooks_meanwhile(plan: Plan) -> None:
    """Start the SHA-256 of each big notebook's new bytes now: the history entry ``apply`` records
    names them by it (``apply`` joins this hashing; a plan never applied only spent a core on it)."""
    if "nbedit.engine.digest" not in sys.modules:
        return  # no big notebook was planned (its plan hashed its old bytes with it)
    from nbedit.engine.digest import IN_BACKGROUND, fingerprint_meanwhile

    for file_plan in plan.files:
        after = unjoined_after(file_plan) if file_plan.notebook and file_plan.changed else None
        if isinstance(after, bytes) and len(after) >= IN_BACKGROUND:
            fingerprint_meanwhile(after)
