"""The apply pipeline: a reviewed plan written locked, stale-checked, recorded and atomic.

``Workspace.apply`` is the one write path of nbedit, and the longest story in it, so it has
its own room. In order: the files' folders are locked; each file is checked against the bytes
the plan was computed from (by its identity first, a cheap early refusal with a diff), and so
is every other target of the plan: the file at a rename's new name must still be what the
preview saw there (nothing, unless the move may overwrite a file), and a file whose mode the
change sets must still have the mode it was previewed from (forward plans and the plans of
undo, restore and rewind alike: they all come through here); open
JupyterLab tabs are asked about the change (``nbedit.live``), and the kernel's own notebook is
guarded; the history entry is recorded durably while the writer flushes the temporary copies
on another thread (``storage.atomic.apply_writes(meanwhile=...)``); only then is any file
replaced, all or nothing, and the entry committed. A failure anywhere aborts the entry and
leaves every file byte-identical.

It is a mixin of ``Workspace`` (the session holds the root source, the history store and the
live client this pipeline uses), so the steps stay methods a test or a subclass can reach.
"""

from __future__ import annotations

import os
import stat
import sys

from nbedit.apply_result import ApplyResult
from nbedit.engine.models import FilePlan, Plan, tier_values, unjoined_after, unjoined_before
from nbedit.engine.text import decode, fingerprint
from nbedit.errors import NbeditError, NotAFile, NotebookError, StaleFile, option
from nbedit.inputs import encodable

__all__ = ["UNSET_LIVE_CLIENT", "ApplyPipeline"]

UNSET_LIVE_CLIENT = object()  # the live client is found on the first write

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from nbedit.engine.spliced import Spliced
    from nbedit.live.client import LiveWrite as _LiveWrite
    from nbedit.storage.root_source import RootSource


class ApplyPipeline:
    """``Workspace.apply`` and its steps; the session's state it reads is named below."""

    if TYPE_CHECKING:
        _source: RootSource
        _live_client: object
        _live_bases: dict[str, tuple[str, bytes]]
        _turn: str | None
        history_enabled: bool
        home: Path
        session: str
        origin: str
        running_notebook: str | None

        def _store(self): ...  # type: ignore[no-untyped-def]
        def _open_store_meanwhile(self, *, writing: bool = False) -> None: ...
        def _retain(self, entry_id: str) -> None: ...

    def apply(
        self,
        plan: Plan,
        *,
        origin: str | None = None,
        execution_count: int | None = None,
        force: bool = False,
        undoes: str | None = None,
        turn: str | None = None,
        verified: dict[str, tuple[bytes, str]] | None = None,
    ) -> ApplyResult:
        """Write a plan: locked, stale-checked, recorded, atomic, all-or-nothing.

        ``turn`` names the agent turn the change belongs to (``ToolSession.turn``): the history
        groups its entries into one checkpoint (``nbedit.checkpoints``). ``verified``: path ->
        (bytes, SHA-256) the caller has already checked (an undo or restore: the history
        checked the bytes it handed out); the entry takes the fingerprint instead of hashing
        the file again, and only for the very bytes object the plan writes.
        """
        self._turn = turn  # read by _record: every apply sets it, so it never leaks into the next
        from nbedit.storage.atomic import Write, apply_writes, new_token
        from nbedit.storage.locks import lock_paths

        files = [file_plan for file_plan in plan.files if file_plan.changed]
        if not files:
            return ApplyResult(plan, None, (), already_applied=plan.already_applied)
        self._open_store_meanwhile(writing=True)
        running = self._running_notebook_plan(files)
        if running is not None and self._live_client is None:
            self._guard_running_notebook(running, force, None)  # no live tabs: refuse before locking
        source = self._source
        targets = sorted({source.absolute(p) for f in files for p in (f.path, f.new_path) if p})
        token = new_token()
        digests = self._digests_meanwhile(files, verified or {})
        with lock_paths(targets, root=source.pinned):
            move_targets = self._check_fresh(files, plan.dialect)
            live = self._live_prepare(files)  # raises LiveConflict: every file untouched
            if running is not None:
                self._guard_running_notebook(running, force, live)
            modes = {file_plan.path: self._mode_now(file_plan) for file_plan in files}
            writes: list[Write] = []
            for file_plan in files:
                if live is None or file_plan.path not in live.in_rooms:
                    writes.extend(self._writes_for(file_plan, Write, modes[file_plan.path], move_targets))
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
        elif "nbedit.engine.digest" in sys.modules:
            # no history: no "after" was hashed from the old bytes' checkpoints, so keeping the old
            # bytes for that (``engine.digest``) would only hold a copy of a file that is gone
            from nbedit.engine.digest import forget

            for file_plan in files:
                if isinstance(before := unjoined_before(file_plan), bytes):
                    forget(before)
        written = tuple(dict.fromkeys(p for f in files for p in (f.path, f.new_path) if p))
        return ApplyResult(plan, entry_id, written, already_applied=False)

    def _digests_meanwhile(
        self, files: Sequence[FilePlan], verified: dict[str, tuple[bytes, str]]
    ) -> dict[str, tuple[bytes | Spliced, Callable[[], str]]]:
        """The "after" fingerprints the history entry needs, hashed on another thread while
        the files are checked, locked and their old copies linked (``nbedit.engine.digest``);
        a fingerprint in ``verified`` for the very bytes object written is taken as it is."""
        if not self.history_enabled:
            return {}
        from nbedit.engine.digest import fingerprint_meanwhile

        digests: dict[str, tuple[bytes | Spliced, Callable[[], str]]] = {}
        for file_plan in files:
            data = unjoined_after(file_plan)  # a big file's new bytes may be unjoined (engine.spliced)
            if data is None:
                continue
            known = verified.get(file_plan.target_path)
            if known is not None and known[0] is data:
                digests[file_plan.path] = (data, _constant(known[1]))
            else:
                digests[file_plan.path] = (data, fingerprint_meanwhile(data))
        return digests

    def _mode_now(self, file_plan: FilePlan) -> tuple[int | None, int | None]:
        """(mode the file has now, mode to write): the change's own mode if it sets one,
        else the file's mode at write time (a chmod made during review is kept)."""
        # a big file not held stands in for its bytes (``storage.streamed_file``): not read here
        exists = unjoined_before(file_plan) is not None
        current = self._source.mode(file_plan.path) if exists else None
        if file_plan.operation == "delete":
            return current, None
        if exists and file_plan.before_mode is None:
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
        import warnings  # a kernel's own notebook only (start-up: a command never gets here)

        from nbedit.warnings import NbeditWarning

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
        if self._live_client is UNSET_LIVE_CLIENT:
            from nbedit.live import could_be_served

            if not could_be_served():  # no server to find: discovery is not even imported
                self._live_client = None
                return None
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

    def _check_fresh(self, files: Sequence[FilePlan], dialect: str = "") -> dict[str, bytes | None]:
        """Raise StaleFile if any file is not what the plan was computed from.

        Every target is checked: the file itself (created, deleted or changed since), the
        file at a rename's new name (``_check_move_target``) and, for a change that sets the
        mode, its permission bits. A file whose identity (inode, size, times) is the one it
        had when the plan read it is not read again here: this check only fails fast, with a
        diff of what changed; the writer compares every byte (and a mode the change sets)
        right before the replace (``storage.atomic``). Returns the bytes now at each
        rename's new name, which the writer is then told to find there. ``dialect``: the
        plan's, so the advice names what to plan again (an undo, a restore, a rewind).
        """
        self._check_contents(files)
        noun = dialect if dialect in ("undo", "restore", "rewind") else "change"
        move_targets: dict[str, bytes | None] = {}
        for file_plan in files:
            if file_plan.new_path and file_plan.new_path != file_plan.path:
                move_targets[file_plan.new_path] = self._check_move_target(file_plan, noun)
            self._check_mode(file_plan, noun)
        return move_targets

    def _check_contents(self, files: Sequence[FilePlan]) -> None:
        """StaleFile if a file was created, deleted or changed since the plan read it."""
        for file_plan in files:
            before = unjoined_before(file_plan)  # a big file's stand-in is compared by its SHA-256
            if before is not None and (
                self._source.unchanged(file_plan.path, before) or self._source.holds(file_plan.path, before)
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

    def _check_move_target(self, file_plan: FilePlan, noun: str) -> bytes | None:
        """The bytes at a rename's new name now, if they are what the plan saw there (nothing,
        unless it may overwrite a file); else StaleFile: the move never lands on a file the
        preview did not show it replacing."""
        target = file_plan.new_path
        assert target is not None
        current = self._source.read(target)
        actual = fingerprint(current) if current is not None else None
        if actual == file_plan.target_fingerprint:
            return current
        moving = f"this {noun} moves {file_plan.path} to {target}"
        if file_plan.target_fingerprint is None:
            message = f"{target}: a file was created there since the preview; {moving} and would overwrite it"
            advice = (
                f"nothing was written. Move {target} out of the way and apply again, or plan the {noun} "
                "again to review it against the files as they are now"
            )
        else:
            what = "was deleted" if current is None else "changed on disk"
            message = f"{target}: {what} since the preview; {moving}, replacing the file the preview showed"
            advice = (
                f"nothing was written. Plan the {noun} again to review it against the files as they are now"
            )
        expected = file_plan.target_fingerprint
        raise StaleFile(message, path=target, expected=expected, actual=actual, advice=advice)

    def _check_mode(self, file_plan: FilePlan, noun: str) -> None:
        """StaleFile if the change sets the file's mode and the mode is not the one it was
        previewed from (a chmod made since would be silently overwritten)."""
        expected = _mode_from(file_plan)
        if expected is None:
            return
        now = self._source.mode(file_plan.path)
        if now is None or now == expected:
            return  # a deleted file is the content check's to report
        raise StaleFile(
            f"{file_plan.path}: its permissions changed since the preview (from {expected:04o} to "
            f"{now:04o}); this {noun} sets them to {file_plan.mode:04o}",
            path=file_plan.path,
            expected=file_plan.fingerprint,
            actual=file_plan.fingerprint,
            advice=f"nothing was written. Plan the {noun} again to review it against the file as it is now",
        )

    def _writes_for(
        self,
        file_plan: FilePlan,
        write_type: type,
        modes: tuple[int | None, int | None],
        move_targets: dict[str, bytes | None],
    ) -> list:
        source = self._source
        mode = modes[1]
        path, before = file_plan.path, unjoined_before(file_plan)  # or a big file's stand-in
        original_mode = _mode_from(file_plan)
        after = unjoined_after(file_plan)  # unjoined new bytes are written piece by piece (engine.spliced)
        if file_plan.operation == "delete":
            return [write_type(source.absolute(path), None, before, None, source.identity(path, before))]
        if file_plan.new_path and file_plan.new_path != path:
            # the bytes checked against the plan (nothing, unless it may overwrite a file):
            # the writer replaces the new name only while it still holds exactly these
            existing = move_targets[file_plan.new_path]
            return [
                write_type(
                    source.absolute(file_plan.new_path), after, existing, mode,
                    source.identity(file_plan.new_path, existing),
                ),
                write_type(
                    source.absolute(path), None, before, None, source.identity(path, before), original_mode
                ),
            ]  # fmt: skip
        return [
            write_type(
                source.absolute(path), after, before, mode, source.identity(path, before), original_mode,
            )
        ]  # fmt: skip

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
            after = unjoined_after(file_plan)  # the bytes, or their pieces (engine.spliced)
            if hashed is not after:  # the bytes a live room saved instead
                digest = None
            records.append(
                FileRecord(
                    # a file a collaboration room saves is written in place by the server:
                    # its inode is not detached, so it must never be the linked "before"
                    before_file=None if file_plan.path in in_rooms else self._replaced_file(file_plan),
                    spans=byte_spans(file_plan) if after is not None else None,
                    path=file_plan.path,
                    new_path=file_plan.new_path,
                    before=unjoined_before(file_plan),  # or a big file's stand-in (storage.streamed_file)
                    after=after,
                    before_fingerprint=file_plan.fingerprint,
                    after_fingerprint=(
                        fingerprint(after) if isinstance(after, bytes) else after.fingerprint()
                    )
                    if after is not None and digest is None
                    else None,
                    after_digest=digest,
                    added=added,
                    removed=removed,
                    before_mode=modes.get(file_plan.path, (None, None))[0],
                    after_mode=modes.get(file_plan.path, (None, None))[1],
                )
            )
            names = getattr(file_plan.hunks, "tier_names", None)  # a big file's table: without making each
            if names is not None:
                tiers.extend(names())
            else:
                tiers.extend(tier_values(file_plan.hunks))
        summary = ", ".join(f.target_path for f in files)
        draft = EntryDraft(
            root=self._source.real_root_text,
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
                if name is not None and not encodable(name):
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
        if unjoined_before(file_plan) is None:
            return None
        location = self._source.absolute(file_plan.path)
        try:
            if not stat.S_ISREG(os.lstat(location).st_mode):
                return None
        except OSError:
            return None
        return str(location)


def _mode_from(file_plan: FilePlan) -> int | None:
    """The mode a change that sets the file's mode was previewed from (None: it sets none)."""
    if unjoined_before(file_plan) is None or file_plan.operation == "delete":
        return None
    if file_plan.mode is None or file_plan.before_mode is None or file_plan.mode == file_plan.before_mode:
        return None
    return file_plan.before_mode


def _constant(value: str) -> Callable[[], str]:
    return lambda: value


def _short_diff(file_plan: FilePlan, current: bytes | None, limit: int = 40) -> str:
    if current is None or not isinstance(unjoined_before(file_plan), bytes) or file_plan.before is None:
        return ""  # a big file not held has no old text to diff against (storage.streamed_file)
    try:
        text, _ = decode(current, file_plan.path)
    except NbeditError:
        return "(the file is now binary)"
    from nbedit.engine.whole_diff import text_diff

    lines = text_diff(file_plan.before, text, file_plan.path).splitlines()
    if len(lines) > limit:
        lines = [*lines[:limit], f"... {len(lines) - limit} more diff lines"]
    return "\n".join(lines)
