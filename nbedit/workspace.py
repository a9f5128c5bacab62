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
"""

from __future__ import annotations

import contextlib
import os
import stat
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from nbedit._dataclass import dataclass
from nbedit.engine import formats
from nbedit.engine.match import DEFAULT_THRESHOLD
from nbedit.engine.models import CellSelector, Change, FileChange, FilePlan, Hunk, Plan, is_notebook_path
from nbedit.engine.plan import DEFAULT_MAX_CELLS, DEFAULT_MAX_HUNKS, PlanOptions, plan_change, text_diff
from nbedit.engine.text import canonical_encoding, decode, fingerprint
from nbedit.errors import (
    FileTooLarge,
    LiveConflict,
    NbeditError,
    NotAFile,
    NotebookError,
    OptionError,
    OutsideWorkspace,
    PatchSyntaxError,
    StaleFile,
    option,
)
from nbedit.storage.records import DATABASE_NAME, default_home  # default_home re-exported
from nbedit.warnings import NbeditWarning

__all__ = ["ApplyResult", "Workspace", "default_home"]

DEFAULT_MAX_FILE_SIZE = 256 * 1024 * 1024
_IDENTIFIED_FROM = 64 << 10  # bytes; a smaller file is compared again at once, faster than kept
_IDENTITIES_KEPT = 16  # files whose read identity is remembered (with the bytes read) ...
_IDENTIFIED_BYTES = 256 << 20  # ... and their bytes at most (a plan dropped unapplied lets go of its bytes)
# bytes; a smaller file's flush costs the history's link little, and a flush the link turns out not
# to need (the history knew the file already) would compete with the temporary copy's own fsync
_SYNCED_FROM = 8 << 20
_UNSET = object()  # the live client is found on the first write

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from nbedit.live.client import LiveWrite as _LiveWrite


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """What ``Workspace.apply`` did."""

    plan: Plan
    entry_id: str | None  # history entry, None when history is off or nothing changed
    written: tuple[str, ...]  # paths created, replaced or deleted
    already_applied: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.written)

    def __repr__(self) -> str:
        if self.already_applied:
            return "<ApplyResult already applied: nothing written>"
        if not self.written:
            return "<ApplyResult nothing written>"
        entry = f"history entry {self.entry_id}" if self.entry_id else "no history entry"
        return f"<ApplyResult wrote {', '.join(self.written)} ({entry}): {self.plan.summary().replace(chr(10), '; ')}>"

    def __rich_repr__(self) -> Iterator[tuple[str, object]]:
        yield "written", self.written
        yield "entry_id", self.entry_id
        yield "files", tuple(file_plan.summary() for file_plan in self.plan.files)

    def _repr_html_(self) -> str:
        from html import escape

        from nbedit.render.html import plan_to_html, wrap

        note = escape(repr(self)[1:-1], quote=False)
        return wrap(f'<div class="nb-note"><b>nbedit</b>: {note}</div>') + plan_to_html(self.plan)


class _Background:
    """One call run on another thread; ``result`` joins it and returns its value or raises its
    error here. No thread to be had (a process at its limit): the call runs at once."""

    def __init__(self, call: Callable[[], object], name: str, *, daemon: bool = False) -> None:
        import threading

        self._outcome: list[object] = []
        self._failed = False

        def run() -> None:
            try:
                self._outcome.append(call())
            except BaseException as error:  # handed to the joining thread
                self._failed = True
                self._outcome.append(error)

        self._thread = threading.Thread(target=run, name=name, daemon=daemon)
        try:
            self._thread.start()
        except RuntimeError:
            run()

    def wait(self) -> None:
        if self._thread.ident is not None:
            self._thread.join()

    def result(self) -> object:
        """The call's value (None if it never ran here: a process forked meanwhile)."""
        self.wait()
        if not self._outcome:
            return None
        if self._failed:
            raise self._outcome[0]  # type: ignore[misc]
        return self._outcome[0]


class _OverlaySource:
    """The root, except that some files read as given bytes (an open tab's live document)."""

    def __init__(self, source: _RootSource, overlay: dict[str, bytes]) -> None:
        self.source = source
        self.overlay = overlay

    def normalise(self, path: str) -> str:
        return self.source.normalise(path)

    def read(self, path: str) -> bytes | None:
        return self.overlay[path] if path in self.overlay else self.source.read(path)

    def mode(self, path: str) -> int | None:
        return self.source.mode(path)


class _RootSource:
    """The planner's window onto the workspace root (implements FileSource)."""

    def __init__(self, root: Path, max_file_size: int) -> None:
        from nbedit.storage.confine import PinnedRoot

        self.root = root
        # the root's folder as opened now: every read and write checks it is still that folder
        self.pinned = PinnedRoot(root)
        self.real_root = self.pinned.path
        self.max_file_size = max_file_size
        # path -> (the bytes read, the file's identity then): lets the checks before the
        # write skip a second read of a file nobody touched (storage.atomic.identity_of)
        self._identities: dict[str, tuple[bytes, tuple[int, int, int, int, int]]] = {}
        # with the history on, a big file read for a plan is flushed to disk meanwhile: the
        # entry links it as its keyframe and must make it durable first (storage.blobs)
        self.sync_reads = False  # set by Workspace._plan while it plans
        self._syncing: dict[str, _Background] = {}
        self._prefetched: dict[str, _Background] = {}  # path -> its read, running on another thread

    def normalise(self, path: str) -> str:
        """The path relative to the real root: folders resolved, a final link kept as the link.

        The file a final link points to must be inside the root too; keeping the link's
        own name means a delete removes the link and a write goes through it.
        """
        from nbedit.storage.confine import check_path_text

        check_path_text(path)  # a newline or NUL never reaches a parser or the disk
        raw = path.strip()
        if not raw:
            raise OutsideWorkspace("empty path; name a file relative to the workspace root")
        candidate = Path(raw).expanduser()
        full = candidate if candidate.is_absolute() else self.root / candidate
        try:
            resolved = Path(os.path.realpath(full))
            kept = (
                Path(os.path.realpath(full.parent)) / full.name
                if full.name not in ("", ".", "..")
                else resolved
            )
        except OSError as error:
            raise NotAFile(f"{path}: cannot be resolved ({error.strerror or error})", path=path) from None
        try:
            resolved.relative_to(self.real_root)
            relative = kept.relative_to(self.real_root)
        except ValueError:
            raise OutsideWorkspace(
                f"{path}: resolves to {resolved}, outside the workspace root {self.real_root}; "
                "nbedit only edits files under the root (set root=... / --root to widen it)",
                path=path,
            ) from None
        if not relative.parts:
            raise NotAFile(f"{path}: is the workspace root itself, not a file", path=path)
        for part in relative.parts:
            if len(os.fsencode(part)) > 255:
                raise NotAFile(
                    f"{path}: the name {part[:40]}... is {len(os.fsencode(part))} bytes, over the 255-byte "
                    "limit of file names; choose a shorter name",
                    path=path,
                )
        return relative.as_posix()

    def absolute(self, path: str) -> Path:
        return self.real_root / path

    def read(self, path: str) -> bytes | None:
        prefetched = self._prefetched.pop(path, None)
        if prefetched is not None:
            return prefetched.result()  # type: ignore[no-any-return]
        return self._read(path)

    def prefetch(self, path: str) -> None:
        """Start reading ``path`` on another thread; the next ``read`` of it takes the result
        (its bytes, or the error the read raised). ``drop_prefetched`` forgets one not taken."""
        if path not in self._prefetched:
            self._prefetched[path] = _Background(lambda: self._read(path), "nbedit-read")

    def drop_prefetched(self) -> None:
        while self._prefetched:
            _path, reading = self._prefetched.popitem()
            reading.wait()

    def wait_synced(self, paths: Sequence[str]) -> None:
        """Wait for the flushes started when these files were read (an error there is left to
        the history's own fsync of the file, which raises it)."""
        for path in paths:
            syncing = self._syncing.pop(path, None)
            if syncing is not None:
                syncing.wait()

    def _read(self, path: str) -> bytes | None:
        from nbedit.storage.confine import open_file

        # reached from the pinned root with no link followed: a folder swapped for a link
        # since the path was resolved cannot show an outside file (storage.confine)
        descriptor = open_file(self.absolute(path), self.pinned, shown=path)
        if descriptor is None:
            return None
        info = os.fstat(descriptor)
        if info.st_size > self.max_file_size:
            os.close(descriptor)
            raise FileTooLarge(
                f"{path}: is {info.st_size:,} bytes, over the {self.max_file_size:,}-byte limit; "
                "raise max_file_size (Workspace(max_file_size=...)) if you really mean to edit it",
                path=path,
                size=info.st_size,
                limit=self.max_file_size,
            )
        try:
            with open(descriptor, "rb", buffering=0) as handle:
                opened = os.fstat(handle.fileno())
                data: bytes = handle.readall()
                read = os.fstat(handle.fileno())
                if self.sync_reads and len(data) >= _SYNCED_FROM:
                    self._sync_meanwhile(path, handle.fileno())
        except OSError as error:
            raise NotAFile(f"{path}: cannot be read ({error.strerror or error})", path=path) from None
        identity = _identity(read)
        if identity == _identity(opened) and read.st_size == len(data) and len(data) >= _IDENTIFIED_FROM:
            self._identities.pop(path, None)
            self._identities[path] = (data, identity)
            while len(self._identities) > _IDENTITIES_KEPT or (
                len(self._identities) > 1
                and sum(len(known[0]) for known in self._identities.values()) > _IDENTIFIED_BYTES
            ):
                self._identities.pop(next(iter(self._identities)))
        return data

    def _sync_meanwhile(self, path: str, descriptor: int) -> None:
        duplicate = os.dup(descriptor)

        def flush() -> None:
            try:
                os.fsync(duplicate)
            finally:
                os.close(duplicate)

        earlier = self._syncing.pop(path, None)
        if earlier is not None:
            earlier.wait()
        try:
            # a daemon: a plan never applied must not hold up the interpreter's exit for it
            self._syncing[path] = _Background(flush, "nbedit-flush", daemon=True)
        except BaseException:
            os.close(duplicate)
            raise

    def identity(self, path: str, data: bytes | None) -> tuple[int, int, int, int, int] | None:
        """The file's identity when exactly ``data`` (this very object) was read from it."""
        known = self._identities.get(path)
        return known[1] if known is not None and data is not None and known[0] is data else None

    def unchanged(self, path: str, data: bytes | None) -> bool:
        """True if the file is, by its identity, still the one ``data`` was read from (a cheap
        early check: the full compare before the replace is the guarantee)."""
        identity = self.identity(path, data)
        if identity is None:
            return False
        try:
            return _identity_now(self.absolute(path), self.pinned) == identity
        except (OSError, NbeditError):
            return False

    def forget(self, paths: Sequence[str]) -> None:
        for path in paths:
            self._identities.pop(path, None)

    def holds(self, path: str, expected: bytes, chunk: int = 1 << 20) -> bool:
        """True if the file's bytes are exactly ``expected``; never holds a second whole copy."""
        from nbedit.storage.atomic import holds_bytes
        from nbedit.storage.confine import open_file

        try:
            descriptor = open_file(self.absolute(path), self.pinned, shown=path)
            if descriptor is None:
                return False
            with open(descriptor, "rb", buffering=0) as handle:
                return holds_bytes(handle.fileno(), expected, chunk)
        except (OSError, NbeditError):
            return False

    def mode(self, path: str) -> int | None:
        from nbedit.storage.confine import stat_file

        try:
            info = stat_file(self.absolute(path), self.pinned, shown=path)
        except (OSError, NbeditError):
            return None
        return stat.S_IMODE(info.st_mode) if info is not None else None


class Workspace:
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
        running_notebook: str | None = None,
        keep_per_file: int | None = 1000,
        keep_bytes: int | None = None,
        encoding: str | None = None,
        live: object = "auto",
    ) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise NotAFile(f"workspace root {self.root} is not a folder; create it or pick another root")
        threshold = _valid_threshold(threshold)
        self.options = PlanOptions(
            exact=exact,
            threshold=threshold,
            overwrite=overwrite,
            clear_outputs=clear_outputs,
            encoding=_valid_encoding(encoding),
            max_cells=_valid_limit(max_cells, "max_cells"),
            max_hunks=_valid_limit(max_hunks, "max_hunks"),
        )
        self.home = Path(home) if home is not None else default_home()
        self.session = session or os.environ.get("NBEDIT_SESSION") or f"process-{os.getpid()}"
        self.origin = origin
        self.history_enabled = history
        self.running_notebook = running_notebook
        self._source = _RootSource(self.root, max_file_size)
        self._history = None
        self._opening: tuple[Path, _Background] | None = None  # (home, the store opening there meanwhile)
        self.keep_per_file = keep_per_file  # retention: entries kept per file (None: all)
        self.keep_bytes = keep_bytes  # retention: total stored bytes (None: no cap)
        # open JupyterLab tabs: "auto" finds the server this process runs under on the first
        # write (nbedit.live); None/False: off; any other object is the client (tests)
        self.live = live
        self._live_client: object = None if live in (None, False) else (live if live != "auto" else _UNSET)
        self._live_bases: dict[str, tuple[str, bytes]] = {}  # re-planned against a tab: path -> (disk, base)
        self._turn: str | None = None  # the agent turn of the change being applied

    def __repr__(self) -> str:
        return f"Workspace(root={str(self.root)!r}, session={self.session!r})"

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
            threshold=base.threshold if threshold is None else _valid_threshold(threshold),
            overwrite=base.overwrite if overwrite is None else overwrite,
            clear_outputs=base.clear_outputs if clear_outputs is None else clear_outputs,
            encoding=base.encoding if encoding is None else _valid_encoding(encoding),
            max_cells=base.max_cells,
            max_hunks=base.max_hunks,
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
        _check_text(text, "the change text")
        change = formats.parse(text, dialect=dialect, default_path=default_path)
        if cell is not None or replace_all:
            selector = _selector(cell) if cell is not None else None
            change = Change(
                tuple(_refine(file_change, selector, replace_all) for file_change in change.files),
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
        _check_text(old, "the old text")
        _check_text(new, "the new text")
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
            (FileChange(path=path, hunks=(hunk,), cell=_selector(cell) if cell is not None else None),),
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
            return plan_change(change, self._source, options, root=str(self.root))
        finally:
            self._source.sync_reads = False
            self._source.drop_prefetched()

    def _prefetch_notebook(self, change: Change) -> None:
        import sys

        if "nbedit.engine.notebook" in sys.modules:
            return
        for file_change in change.files:
            if is_notebook_path(file_change.path) and file_change.operation == "update":
                try:
                    self._source.prefetch(self._source.normalise(file_change.path))
                except NbeditError:
                    return  # the planner raises it again, where it always did
                import nbedit.engine.notebook  # noqa: F401 - imported while the file is read

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
        replanned = plan_change(
            change, _OverlaySource(self._source, bases), self.options, root=str(self.root)
        )
        files = []
        for file_plan in replanned.files:
            disk = next((f.before_bytes for f in plan.files if f.path == file_plan.path), None)
            if file_plan.path in bases and disk is not None:
                self._live_bases[file_plan.path] = (fingerprint(disk), bases[file_plan.path])
                file_plan = replace(file_plan, before_bytes=disk, fingerprint=fingerprint(disk))
            files.append(file_plan)
        return replace(replanned, files=tuple(files), _diff_cache=[])

    # ------------------------------------------------------------------ applying

    def apply(
        self,
        plan: Plan,
        *,
        origin: str | None = None,
        execution_count: int | None = None,
        force: bool = False,
        undoes: str | None = None,
        turn: str | None = None,
    ) -> ApplyResult:
        """Write a plan: locked, stale-checked, recorded, atomic, all-or-nothing.

        ``turn`` names the agent turn the change belongs to (``ToolSession.turn``): the history
        groups its entries into one checkpoint (``nbedit.checkpoints``).
        """
        self._turn = turn  # read by _record: every apply sets it, so it never leaks into the next
        from nbedit.storage.atomic import Write, apply_writes, new_token
        from nbedit.storage.locks import lock_paths

        files = [file_plan for file_plan in plan.files if file_plan.changed]
        if not files:
            return ApplyResult(plan, None, (), already_applied=plan.already_applied)
        self._open_store_meanwhile()
        running = self._running_notebook_plan(files)
        if running is not None and self._live_client is None:
            self._guard_running_notebook(running, force, None)  # no live tabs: refuse before locking
        source = self._source
        targets = sorted({source.absolute(p) for f in files for p in (f.path, f.new_path) if p})
        token = new_token()
        digests = self._digests_meanwhile(files)
        with lock_paths(targets, root=source.pinned):
            self._check_fresh(files)
            live = self._live_prepare(files)  # raises LiveConflict: every file untouched
            if running is not None:
                self._guard_running_notebook(running, force, live)
            modes = {file_plan.path: self._mode_now(file_plan) for file_plan in files}
            writes: list[Write] = []
            for file_plan in files:
                if live is None or file_plan.path not in live.in_rooms:
                    writes.extend(self._writes_for(file_plan, Write, modes[file_plan.path]))
            if live is not None and live.in_rooms:
                in_rooms = frozenset(live.in_rooms)
                entry_id = self._record(
                    plan, files, origin, execution_count, undoes, modes, token, in_rooms, digests
                )
                try:
                    files, entry_id = self._live_commit(live, plan, files, entry_id, modes, token, origin,
                                                        execution_count, undoes)  # fmt: skip
                    apply_writes(writes, root=source.pinned, token=token, force=force)
                except BaseException:
                    if entry_id is not None:
                        self._store().abort(entry_id)
                    raise
            else:
                # the entry is recorded (durably) here while the writer writes and flushes the
                # temporary copies on another thread; both are done before any file is replaced
                recorded: list[str | None] = []

                def record() -> None:
                    recorded.append(
                        self._record(
                            plan, files, origin, execution_count, undoes, modes, token, None, digests
                        )
                    )

                try:
                    apply_writes(
                        writes, root=source.pinned, token=token, force=force,
                        meanwhile=record if self.history_enabled else None,
                    )  # fmt: skip
                except BaseException:
                    if recorded and recorded[0] is not None:
                        self._store().abort(recorded[0])
                    raise
                entry_id = recorded[0] if recorded else None
            if entry_id is not None:
                self._store().commit(entry_id)
                self._store().seal_linked(entry_id)  # every file replaced: the old inodes are the history's
            for file_plan in files:
                self._live_bases.pop(file_plan.path, None)
            source.forget([p for f in files for p in (f.path, f.new_path) if p])
        if live is not None:
            live.notify()
        if entry_id is not None:
            self._retain(entry_id)
            self._store().compact_soon()
        written = tuple(dict.fromkeys(p for f in files for p in (f.path, f.new_path) if p))
        return ApplyResult(plan, entry_id, written, already_applied=False)

    def _digests_meanwhile(self, files: Sequence[FilePlan]) -> dict[str, tuple[bytes, Callable[[], str]]]:
        """The "after" fingerprints the history entry needs, hashed on another thread while
        the files are checked, locked and their old copies linked (``nbedit.engine.digest``)."""
        if not self.history_enabled:
            return {}
        from nbedit.engine.digest import fingerprint_meanwhile

        return {
            file_plan.path: (file_plan.after_bytes, fingerprint_meanwhile(file_plan.after_bytes))
            for file_plan in files
            if file_plan.after_bytes is not None
        }

    def _mode_now(self, file_plan: FilePlan) -> tuple[int | None, int | None]:
        """(mode the file has now, mode to write): the change's own mode if it sets one,
        else the file's mode at write time (a chmod made during review is kept)."""
        current = self._source.mode(file_plan.path) if file_plan.before_bytes is not None else None
        if file_plan.operation == "delete":
            return current, None
        if file_plan.before_bytes is not None and file_plan.before_mode is None:
            return current, current  # a planner that did not say what mode it saw: keep the file's
        sets_mode = file_plan.mode is not None and file_plan.mode != file_plan.before_mode
        return current, file_plan.mode if sets_mode else current

    def _running_notebook_plan(self, files: Sequence[FilePlan]) -> FilePlan | None:
        """The plan of the notebook this kernel runs in, if the change touches it."""
        if not self.running_notebook:
            return None
        running = os.path.realpath(self.running_notebook)
        for file_plan in files:
            if os.path.realpath(self._source.absolute(file_plan.path)) == running:
                return file_plan
        return None

    def _guard_running_notebook(self, file_plan: FilePlan, force: bool, live: _LiveWrite | None) -> None:
        """The kernel's own notebook is written only if its open tab takes the change in place
        (the nbedit extension is connected to it, or a collaboration room holds it), or with force."""
        if live is not None and live.state(file_plan.path) in ("open", "live"):
            return
        if not force:
            raise NotebookError(
                f"{file_plan.path}: is the notebook this kernel runs in; its open tab would not "
                f"show the change and saving the tab would overwrite it. Pass {option('force')} "
                "to write anyway, then reload the notebook from disk (with nbedit installed in "
                "the Jupyter server's environment, the tab takes the change in place instead)",
                path=file_plan.path,
            )
        warnings.warn(
            f"{file_plan.path} is open in this kernel's tab: reload it from disk before saving",
            NbeditWarning,
            stacklevel=4,
        )

    def _live_prepare(self, files: Sequence[FilePlan]) -> _LiveWrite | None:
        """Ask the open tabs about the change (None: no Jupyter server, or none of these files
        is served by it). Raises ``LiveConflict`` if a tab has unsaved typing where it lands."""
        if self._live_client is None:
            return None
        if self._live_client is _UNSET:
            from nbedit.live.discovery import find_server

            server = find_server()  # cheap, and imports nothing more when there is no server
            if server is None:
                self._live_client = None
                return None
            from nbedit.live.client import connect

            self._live_client = connect(server)
            if self._live_client is None:
                return None
        from nbedit.live.client import LiveWrite

        bases = {
            file_plan.path: self._live_bases[file_plan.path][1]
            for file_plan in files
            if file_plan.path in self._live_bases
            and self._live_bases[file_plan.path][0] == file_plan.fingerprint
        }
        return LiveWrite.prepare(self._live_client, files, self._source.absolute, bases)

    def _live_commit(
        self,
        live: _LiveWrite,
        plan: Plan,
        files: list[FilePlan],
        entry_id: str | None,
        modes: dict[str, tuple[int | None, int | None]],
        token: str,
        origin: str | None,
        execution_count: int | None,
        undoes: str | None,
    ) -> tuple[list[FilePlan], str | None]:
        """Apply the files collaboration rooms hold there (the server saves them); the history
        entry then records the bytes the server saved, which are the file's real "after"."""
        saved = live.commit()  # path -> bytes now on disk; raises LiveConflict (nothing applied)
        from nbedit._dataclass import replace

        updated = [
            replace(file_plan, after_bytes=saved[file_plan.path])
            if file_plan.path in saved and saved[file_plan.path] != file_plan.after_bytes
            else file_plan
            for file_plan in files
        ]
        # under collaboration the room saved what people typed elsewhere along with the change:
        # the entry starts from the live document as it was, so undo takes back the change only
        updated = [
            replace(file_plan, before_bytes=before, fingerprint=fingerprint(before))
            if (before := live.live_before.get(file_plan.path)) is not None
            and before != file_plan.before_bytes
            else file_plan
            for file_plan in updated
        ]
        if entry_id is not None and updated != files:
            self._store().abort(entry_id)
            entry_id = self._record(
                plan, updated, origin, execution_count, undoes, modes, token, frozenset(live.in_rooms)
            )
        return updated, entry_id

    def _check_fresh(self, files: Sequence[FilePlan]) -> None:
        """Raise StaleFile if any file is not what the plan was computed from.

        A file whose identity (inode, size, times) is the one it had when the plan read it
        is not read again here: this check only fails fast, with a diff of what changed;
        the writer compares every byte right before the replace (``storage.atomic``).
        """
        for file_plan in files:
            if file_plan.before_bytes is not None and (
                self._source.unchanged(file_plan.path, file_plan.before_bytes)
                or self._source.holds(file_plan.path, file_plan.before_bytes)
            ):
                continue  # the very bytes the plan was computed from, compared in chunks
            current = self._source.read(file_plan.path)
            actual = fingerprint(current) if current is not None else None
            if actual == file_plan.fingerprint:
                continue
            if file_plan.fingerprint is None:
                message = f"{file_plan.path}: was created since the preview"
            elif current is None:
                message = f"{file_plan.path}: was deleted since the preview"
            else:
                message = f"{file_plan.path}: changed on disk since the preview"
            raise StaleFile(
                message,
                path=file_plan.path,
                expected=file_plan.fingerprint,
                actual=actual,
                diff=_short_diff(file_plan, current),
            )

    def _writes_for(
        self, file_plan: FilePlan, write_type: type, modes: tuple[int | None, int | None]
    ) -> list:
        source = self._source
        mode = modes[1]
        path, before = file_plan.path, file_plan.before_bytes
        if file_plan.operation == "delete":
            return [write_type(source.absolute(path), None, before, None, source.identity(path, before))]
        if file_plan.new_path and file_plan.new_path != path:
            existing = source.read(file_plan.new_path)
            return [
                write_type(
                    source.absolute(file_plan.new_path), file_plan.after_bytes, existing, mode,
                    source.identity(file_plan.new_path, existing),
                ),
                write_type(source.absolute(path), None, before, None, source.identity(path, before)),
            ]  # fmt: skip
        return [
            write_type(
                source.absolute(path), file_plan.after_bytes, before, mode, source.identity(path, before)
            )
        ]

    # ------------------------------------------------------------------ history

    def _store(self):  # type: ignore[no-untyped-def]
        """The history store, opened once; a damaged one is moved aside (with a warning)
        and entries a crashed writer left pending are settled against the files."""
        if self._history is None:
            from nbedit.recovery import recover

            store = self._opened_store()
            if store.notice:
                warnings.warn(store.notice, NbeditWarning, stacklevel=3)
            self._history = store
            recover(store, self._source.pinned, self._source.read)
        return self._history

    def _open_store_meanwhile(self) -> None:
        """Start creating a new home's history store on another thread, once a write is in
        view: its database, schema, log and their fsyncs (some 10 ms, mostly waiting for the
        disk) happen while this thread plans. ``_store`` joins it; an error it met is raised
        there, as if opened there. The thread is the store's only user until that join hands
        it over. An existing store opens where it is used, as before (about 1 ms)."""
        if not self.history_enabled or self._history is not None or self._opening is not None:
            return
        home = self.home
        if (home / DATABASE_NAME).exists():
            return  # opening one is quick; on a thread it would only take turns with the planner

        def open_store() -> object:
            from nbedit.storage.history import HistoryStore

            return HistoryStore.open_or_recreate(home)

        self._opening = (home, _Background(open_store, "nbedit-history-open"))

    def _opened_store(self):  # type: ignore[no-untyped-def]
        opening, self._opening = self._opening, None
        if opening is not None:
            home, background = opening
            store = background.result()
            if home == self.home and store is not None:
                return store
            if store is not None:
                store.close()  # type: ignore[attr-defined]  # the home was changed meanwhile
        from nbedit.storage.history import HistoryStore

        return HistoryStore.open_or_recreate(self.home)

    def close(self) -> None:
        """Close the history store now (it opens again when the history is next used)."""
        opening, self._opening = self._opening, None
        if opening is not None:
            with contextlib.suppress(Exception):  # an error opening it is no error closing it
                opened = opening[1].result()
                if opened is not None:
                    opened.close()  # type: ignore[attr-defined]
        store, self._history = self._history, None
        if store is not None:
            store.close()

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

    def _record(
        self,
        plan: Plan,
        files: Sequence[FilePlan],
        origin: str | None,
        execution_count: int | None,
        undoes: str | None,
        modes: dict[str, tuple[int | None, int | None]] | None = None,
        token: str | None = None,
        in_rooms: frozenset[str] | None = None,
        digests: dict[str, tuple[bytes, Callable[[], str]]] | None = None,
    ) -> str | None:
        if not self.history_enabled:
            return None
        in_rooms = in_rooms or frozenset()
        modes = modes or {}
        digests = digests or {}
        from nbedit.engine.spans import byte_spans
        from nbedit.storage.history import EntryDraft, FileRecord

        stats = plan.stats()
        records = []
        tiers: list[str] = []
        for file_plan in files:
            added, removed = stats.get(file_plan.target_path, (0, 0))
            hashed, digest = digests.get(file_plan.path, (None, None))
            if hashed is not file_plan.after_bytes:  # the bytes a live room saved instead
                digest = None
            records.append(
                FileRecord(
                    # a file a collaboration room saves is written in place by the server:
                    # its inode is not detached, so it must never be the linked "before"
                    before_file=None if file_plan.path in in_rooms else self._replaced_file(file_plan),
                    spans=byte_spans(file_plan) if file_plan.after_bytes is not None else None,
                    path=file_plan.path,
                    new_path=file_plan.new_path,
                    before=file_plan.before_bytes,
                    after=file_plan.after_bytes,
                    before_fingerprint=file_plan.fingerprint,
                    after_fingerprint=fingerprint(file_plan.after_bytes)
                    if file_plan.after_bytes is not None and digest is None
                    else None,
                    after_digest=digest,
                    added=added,
                    removed=removed,
                    before_mode=modes.get(file_plan.path, (None, None))[0],
                    after_mode=modes.get(file_plan.path, (None, None))[1],
                )
            )
            tiers.extend(item.tier.value for item in file_plan.hunks)
        summary = ", ".join(f.target_path for f in files)
        draft = EntryDraft(
            root=str(self._source.real_root),
            session=self.session,
            origin=origin or self.origin,
            execution_count=execution_count,
            files=tuple(records),
            tiers=tuple(dict.fromkeys(tiers)),
            summary=summary,
            undoes=undoes,
            token=token,
            turn=self._turn,
        )
        for record in records:
            for name in (record.path, record.new_path):
                if name is not None and not _encodable(name):
                    raise NotAFile(
                        f"{name.encode('utf-8', 'backslashreplace').decode()}: this file name is not valid "
                        "UTF-8, and the history stores names as UTF-8; rename the file, or run with "
                        "history=False (--no-history) to edit it without a history (nothing was written)",
                        path=name,
                    )
        # the flushes of the old files started at read time: a linked keyframe needs its data on disk
        self._source.wait_synced([record.path for record in records if record.before_file is not None])
        try:
            return self._store().begin(draft)
        except NbeditError:
            raise
        except Exception as error:  # a broken store must never cost a file
            from nbedit.errors import HistoryError

            raise HistoryError(
                f"the history store at {self.home} could not record this change ({error}); nothing was "
                f"written. Fix or remove that folder, or run with {option('no_history')}"
            ) from error

    def _replaced_file(self, file_plan: FilePlan) -> str | None:
        """The file whose inode the write will detach from its name (so the history may link it):
        a regular file, not a symbolic link (deleting a link leaves its target in place)."""
        if file_plan.before_bytes is None:
            return None
        location = self._source.absolute(file_plan.path)
        try:
            if not stat.S_ISREG(os.lstat(location).st_mode):
                return None
        except OSError:
            return None
        return str(location)

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
        """Revert this session's latest edit not yet undone (or entry ``entry_id``); recorded as an entry."""
        from nbedit import history_ops

        return history_ops.undo(self, entry_id, force=force)

    def plan_undo(self, entry_id: str | None = None, *, force: bool = False) -> Plan:
        """The plan an ``undo`` would apply, for review (``apply`` it to undo)."""
        from nbedit import history_ops

        return history_ops.plan_undo(self, entry_id, force=force).plan

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


def _identity_now(path: Path, root: object) -> tuple[int, int, int, int, int] | None:
    from nbedit.storage.confine import stat_file

    info = stat_file(path, root, shown=str(path))  # type: ignore[arg-type]
    return _identity(info) if info is not None else None


def _identity(info: os.stat_result) -> tuple[int, int, int, int, int]:
    """``storage.atomic.identity_of`` without importing the writer for a plan."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _check_text(text: str, what: str) -> None:
    """Text with lone surrogates (bytes that were not UTF-8, e.g. from a Latin-1 terminal) cannot be written."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        piece = text[error.start : error.end]
        try:  # a byte that was not UTF-8, smuggled in as a surrogate (surrogateescape)
            shown = repr(piece.encode("utf-8", "surrogateescape"))
        except UnicodeEncodeError:  # a lone surrogate of another kind (e.g. half of a broken pair)
            shown = repr(piece)
        raise PatchSyntaxError(
            f"{what} contains bytes that are not UTF-8 ({shown} at character {error.start + 1}), "
            "probably typed in a terminal that does not use UTF-8",
            dialect="edit",
            hint="pass the text as UTF-8 (set LANG to a UTF-8 locale, or read it from a UTF-8 file "
            "with --old-file/--new-file)",
        ) from None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _valid_limit(limit: object, name: str) -> int:
    """A cell or hunk limit: a positive whole number, else an ``OptionError``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise OptionError(f"{name} must be a whole number of at least 1, not {limit!r}", option=name)
    return limit


def _valid_threshold(threshold: object) -> float:
    """The fuzzy threshold as a float in (0, 1]; anything else is an ``OptionError``."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise OptionError(
            f"threshold must be a number in (0, 1], not {threshold!r}; 0.9 is the default "
            "(lower accepts looser fuzzy matches, 1 accepts only identical lines)",
            option="threshold",
        )
    if not 0.0 < threshold <= 1.0:  # also false for NaN
        raise OptionError(
            f"threshold {threshold!r} is outside (0, 1]; pass a similarity such as 0.9 "
            "(lower accepts looser fuzzy matches, 1 accepts only identical lines)",
            option="threshold",
        )
    return float(threshold)


def _valid_encoding(encoding: object) -> str | None:
    """A declared encoding by Python's canonical name (None: detect); ``OptionError`` if unknown."""
    if encoding is None:
        return None
    if not isinstance(encoding, str):
        raise OptionError(f"encoding must be a name such as 'cp1252', not {encoding!r}", option="encoding")
    return canonical_encoding(encoding)


def _selector(cell: str | int) -> CellSelector:
    if isinstance(cell, int):
        return CellSelector(index=cell)
    text = str(cell).strip()
    if text.lstrip("-").isdigit():
        return CellSelector(index=int(text))
    return CellSelector(id=text)


def _refine(file_change: FileChange, selector: CellSelector | None, replace_all: bool) -> FileChange:
    from nbedit._dataclass import replace

    if selector is not None:
        file_change = replace(file_change, cell=selector)
    if replace_all:
        file_change = replace(
            file_change, hunks=tuple(replace(h, replace_all=True) for h in file_change.hunks)
        )
    return file_change


def _short_diff(file_plan: FilePlan, current: bytes | None, limit: int = 40) -> str:
    if current is None or file_plan.before is None:
        return ""
    try:
        text, _ = decode(current, file_plan.path)
    except NbeditError:
        return "(the file is now binary)"
    lines = text_diff(file_plan.before, text, file_plan.path).splitlines()
    if len(lines) > limit:
        lines = [*lines[:limit], f"... {len(lines) - limit} more diff lines"]
    return "\n".join(lines)
