"""All-or-nothing writes of several files, each replaced atomically, confined to a root.

A change that touches three files must not leave one of them written when the
second fails (disk full, permission denied, a directory in the way). Each file is
first written completely to a temporary file in its own directory (same file
system, so the final rename is atomic), flushed and fsynced; only when every
temporary file is ready are they renamed into place, and the directories fsynced
so the renames survive a power cut. Any failure before the end rolls back what was
already renamed: replaced files get their original bytes, permission bits and
owner back, deleted files are renamed back from where they were parked, created
files and directories are removed, temporary files are removed.

Every operation runs relative to a descriptor of the file's folder, reached from
the root with no link followed (``confine.py``), and each file is checked twice.
Before anything is written, a file whose ``identity`` (device, inode, size,
modification and change times, taken when ``original`` was read) is unchanged is
trusted for now, and any other is compared with ``original`` byte for byte, so a
changed file fails fast; a file the user could not write in place (a 0444 file,
another user's file in a shared folder) is refused unless forced, as editors do.
Then, once every temporary file is written and flushed and right before the first
rename, every file is compared with ``original`` in full (and with ``original_mode``, for
a change that sets the mode): that last compare is the guarantee (a rewrite within one
clock tick keeps size and times, never the bytes), and it also catches a file created,
deleted or swapped for a link while the temporary copies were written (a move's new name
is a write whose ``original`` is what the preview saw there: usually nothing). The written file keeps its owner and group where the
user may keep them (so a setgid file keeps its group).

``apply_writes(meanwhile=...)`` runs the caller's own step (the workspace records
the history entry) on the calling thread while the temporary files, written here,
are flushed (fsync) on another; both are finished before the verification, so what
the caller made durable there is durable before any file is replaced. Only the
flush moves: a thread that needs the interpreter's lock after each system call
waits up to a switch interval (5 ms) for it while this one computes.

A crash (SIGKILL, power cut) cannot run a rollback, so per file the guarantee is
that the target holds either the old or the new bytes, never a mix; across files a
crash in the rename phase can leave some renamed and some not, which the history's
pending entry records (see ``history.py``). The temporary files carry the writer's
pid and a token in their name (``.<name>.nbedit-<pid>-<token>.tmp``); the history
records the token, so recovery removes exactly the files that writer created
(``remove_leftovers``) and never a user file that merely looks like one.

The names of the temporary files live in ``temp_names``, the system calls that make one
temporary copy in ``temp_copies`` and the identity and byte compare of a file in
``content_identity``; this module is the write pipeline itself (prepare, write and flush the
temporary copies, verify, rename, roll back), whose steps share the rollback's progress record.

Symbolic links inside the root are written through: the file the link points to is
replaced and the link itself is kept, as editors do. Deleting a link removes the link.

A replaced file's old blocks are freed when its inode's last reference goes, which some file systems do
inside the rename: the last check keeps the old file open, another thread closes it (``beside.close_later``).
"""

from __future__ import annotations

import errno
import os
import stat

from nbedit._dataclass import dataclass, field
from nbedit.errors import NotAFile, StaleFile, WriteError
from nbedit.storage.beside import beside, close_later
from nbedit.storage.confine import Location, locate, open_directory
from nbedit.storage.content_identity import Identity, holds_bytes, holds_in_folder, identity_of
from nbedit.storage.temp_copies import (
    CLOEXEC,
    PROC_FD,
    Fault,
    NoAnonymousFiles,
    fill,
    flush,
    fsync_directory,
    open_temp,
    write_temp,
    written_temp,
)
from nbedit.storage.temp_names import is_temp_file, new_token, process_alive, remove_leftovers, temp_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = [
    "Fault",
    "Identity",
    "Write",
    "apply_writes",
    "holds_bytes",
    "identity_of",
    "is_temp_file",
    "new_token",
    "process_alive",
    "remove_leftovers",
    "temp_name",
]

WRITTEN_BESIDE = 8 << 20  # bytes from which the other thread also writes the temporary copy
HELD_OPEN = 256  # old files of one write kept open until it ends, so their blocks are freed later


@dataclass(frozen=True, slots=True)
class Write:
    """One file operation: write ``data`` (or delete when None); ``original`` is what is there now.

    ``data`` may also be new bytes not joined yet (``engine.spliced.Spliced``: ``len()`` and
    ``chunks()``), written into the temporary copy piece by piece.

    ``mode``: permission bits for the written file; None keeps the existing file's
    bits (as they are at write time), or gives a new file the default (umask) mode.
    A move is a delete of the old path plus a write of the new one. ``identity``: the
    file's ``identity_of`` when ``original`` was read from it (None: unknown), which lets
    the early check skip a second read of an unchanged file. ``original_mode``: the
    permission bits the file must still have (None: not checked), for a change that sets
    the mode: it was previewed as a change from these bits, and a chmod made since is
    not silently overwritten.
    """

    path: str | os.PathLike[str]
    data: bytes | None
    original: bytes | None
    mode: int | None = None
    identity: Identity | None = None
    original_mode: int | None = None


@dataclass(slots=True)
class _Target:
    write: Write
    location: Location
    directory: int  # descriptor of the file's folder
    name: str
    old: os.stat_result | None  # the file there now (lstat), None: no file
    kept: int | None = None  # the old file, from the last check: its bytes if not held; freed when closed


@dataclass(slots=True)
class _Progress:
    """What has been done so far, so a failure can undo exactly that."""

    temp_files: dict[int, str] = field(default_factory=dict)  # target index -> temp name
    created_directories: list[tuple[int, str]] = field(
        default_factory=list
    )  # (parent fd, name), outermost first
    replaced: list[_Target] = field(default_factory=list)
    parked: list[tuple[_Target, str]] = field(default_factory=list)  # deleted target -> parked name
    touched: set[int] = field(default_factory=set)  # folder descriptors to fsync
    current: str | os.PathLike[str] | None = None  # the file being worked on, for the error message
    meanwhile_failed: bool = False  # the caller's own step raised (apply_writes raises it as is)
    # temp descriptors to fsync, with the bytes still to write into them (None: written)
    unflushed: list[
        tuple[int, str | os.PathLike[str], tuple[bytes, int | None, tuple[int, int] | None] | None]
    ] = field(default_factory=list)
    anonymous: dict[int, int] = field(default_factory=dict)  # target index -> unnamed temp descriptor
    held: int = 0  # old files kept open only so that their blocks are freed later (``HELD_OPEN``)


def _stale(write: Write, message: str) -> StaleFile:
    return StaleFile(
        f"{write.path}: {message} since the preview; nothing was written. Re-plan the change and retry",
        path=str(write.path),
        expected=None,
        actual=None,
    )


def _writable(directory: int, name: str, follow: bool) -> bool:
    if os.geteuid() == 0:
        return True
    try:
        return os.access(name, os.W_OK, dir_fd=directory, effective_ids=True, follow_symlinks=follow)
    except (NotImplementedError, OSError):
        return os.access(name, os.W_OK, dir_fd=directory)


def _prepare(write: Write, root: str | os.PathLike[str], progress: _Progress, force: bool) -> _Target:
    writing = write.data is not None
    location = locate(write.path, root, follow=writing)
    try:
        directory = open_directory(location, create=writing, created=progress.created_directories)
    except FileNotFoundError:
        if write.original is not None:
            raise _stale(write, "was deleted (its folder is gone)") from None
        raise
    target = _Target(write, location, directory, location.name, None)
    try:
        info = os.stat(location.name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    target.old = info
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            action = "replace" if writing else "delete"
            raise NotAFile(
                f"{write.path}: is a directory; nbedit will not {action} a directory with a file operation; "
                "choose a file path",
                path=str(write.path),
            )
        if stat.S_ISLNK(info.st_mode) and writing:
            raise _stale(write, "became a symbolic link")
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
            raise NotAFile(
                f"{write.path}: is not a regular file (device, pipe or socket); nbedit edits regular files only",
                path=str(write.path),
            )
    if write.original is None and info is not None:
        raise _stale(write, "was created")
    if write.original is not None:
        if info is None:
            raise _stale(write, "was deleted")
        # fail fast; the full compare right before the replace is the guarantee (_verify)
        if write.identity != identity_of(info) and not holds_in_folder(
            directory, location.name, write.original
        ):
            raise _stale(write, "changed on disk")
        _check_mode(write, info)
        if not force and not _writable(directory, location.name, follow=False):
            owner = info.st_uid
            raise WriteError(
                f"{write.path}: you could not write this file in place (mode {stat.S_IMODE(info.st_mode):04o}, "
                f"owner uid {owner}); nbedit will not replace or delete it behind its permissions. "
                "Make it writable (chmod u+w) or pass force=True (--force) to replace it anyway; "
                "nothing was written",
                path=str(write.path),
            )
    return target


def _check_mode(write: Write, info: os.stat_result) -> None:
    """``StaleFile`` if the file's permission bits are no longer ``write.original_mode``."""
    if write.original_mode is None or not stat.S_ISREG(info.st_mode):
        return
    now = stat.S_IMODE(info.st_mode)
    if now != write.original_mode:
        raise _stale(write, f"had its permissions changed (from {write.original_mode:04o} to {now:04o})")


def _mode_of(info: os.stat_result | None) -> int | None:
    return stat.S_IMODE(info.st_mode) if info is not None else None


def _owner_of(info: os.stat_result | None) -> tuple[int, int] | None:
    return (info.st_uid, info.st_gid) if info is not None else None


def _restore(target: _Target, token: str) -> None:
    """Put a replaced target back to its original bytes, mode and owner, atomically."""
    if target.write.original is None:
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.unlink(target.name, dir_fd=target.directory)
        except FileNotFoundError:
            pass
        return
    temp = temp_name(target.name, token, "back")
    original: object = target.write.original
    if not isinstance(original, (bytes, bytearray, memoryview)):
        if target.kept is None:
            raise OSError(errno.EBADF, "the old file was not kept open")
        original = _OldInode(target.kept, original)  # checked by its SHA-256 as it is copied back
    try:
        write_temp(
            original, target.directory, temp, _mode_of(target.old), target.write.path, None,
            _owner_of(target.old),
        )  # fmt: skip
        os.replace(temp, target.name, src_dir_fd=target.directory, dst_dir_fd=target.directory)
    except BaseException:
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.unlink(temp, dir_fd=target.directory)
        except OSError:
            pass
        raise


def _roll_back(progress: _Progress, targets: Sequence[_Target], token: str) -> list[str]:
    """Undo everything in ``progress``; return what could not be undone."""
    problems: list[str] = []
    _close_unflushed(progress)
    for target in targets:  # held only to be freed later: let go before restoring (descriptors)
        if target.kept is not None and isinstance(target.write.original, (bytes, bytearray, memoryview)):
            os.close(target.kept)
            target.kept = None
    for target in reversed(progress.replaced):
        try:
            _restore(target, token)
        except OSError as error:
            problems.append(f"{target.write.path}: could not restore the original ({error})")
    for target, parked in reversed(progress.parked):
        try:
            os.replace(parked, target.name, src_dir_fd=target.directory, dst_dir_fd=target.directory)
        except OSError as error:
            problems.append(f"{target.write.path}: could not restore it from {parked} ({error})")
    for index, temp in progress.temp_files.items():
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.unlink(temp, dir_fd=targets[index].directory)
        except OSError:
            pass
    for parent, name in reversed(progress.created_directories):
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.rmdir(name, dir_fd=parent)
        except OSError:
            pass
    for directory in progress.touched:
        try:  # noqa: SIM105 - not contextlib (start-up)
            fsync_directory(directory)
        except OSError:
            pass
    return problems


def apply_writes(
    writes: Sequence[Write],
    *,
    root: str | os.PathLike[str] | None = None,
    fault: Fault | None = None,
    token: str | None = None,
    force: bool = False,
    meanwhile: Callable[[], object] | None = None,
) -> None:
    """Write, replace and delete files all-or-nothing; raise ``WriteError`` after rolling back.

    ``root``: every path must stay inside it at the moment of the write
    (``OutsideWorkspace`` otherwise); None trusts each path's folder. ``token``
    names the temporary files (see ``remove_leftovers``). ``force``: replace files
    the user could not write in place. Before anything is touched, each file is
    checked: ``NotAFile`` for a directory or special file, ``StaleFile`` when it no
    longer holds ``original``; and again in full right before the replace. The caller
    holds the locks (``locks.lock_paths``). ``meanwhile``: called on this thread once
    the files are checked, while the temporary copies are written and flushed on
    another; what it raises is raised as is, after the rollback.
    """
    token = token or new_token()
    progress = _Progress()
    targets: list[_Target] = []
    step = "prepare"
    try:
        seen: set[tuple[int, int, str]] = set()
        for write in writes:
            progress.current = write.path
            target = _prepare(write, root if root is not None else _trusted_root(write.path), progress, force)
            targets.append(target)
            info = os.fstat(target.directory)
            key = (info.st_dev, info.st_ino, target.name)
            if key in seen:
                raise WriteError(
                    "the same file appears twice in one write; merge the changes to it into one and retry"
                )
            seen.add(key)

        step = "write"
        if meanwhile is not None and _write_temps(targets, progress, token, fault, anonymous=True):
            # unnamed until meanwhile is done: a crash in between leaves no file behind
            beside(lambda: _flush_temps(progress, fault), meanwhile, progress)
            _name_temps(targets, progress, token)
        else:
            if meanwhile is not None:  # no unnamed files here: the caller's step first, as it always was
                step = "meanwhile"
                meanwhile()
                step = "write"
            _write_temps(targets, progress, token, fault)
            _flush_temps(progress, fault)

        step = "verify"
        for target in targets:
            progress.current = target.write.path
            if fault:
                fault("verify", target.write.path)
            _verify(target, progress)

        step = "replace"
        for index, target in enumerate(targets):
            write = target.write
            progress.current = write.path
            if fault:
                fault("replace", write.path)
            if write.data is not None:
                os.replace(
                    progress.temp_files[index], target.name,
                    src_dir_fd=target.directory, dst_dir_fd=target.directory,
                )  # fmt: skip
                del progress.temp_files[index]
                progress.replaced.append(target)
            elif target.old is not None:
                # Parked, not unlinked: renaming back is atomic and keeps bytes, mode and links.
                parked = temp_name(target.name, token, "old")
                os.replace(target.name, parked, src_dir_fd=target.directory, dst_dir_fd=target.directory)
                progress.parked.append((target, parked))
                progress.touched.add(target.directory)

        step = "fsync-dir"
        for target in targets:
            if target.directory in progress.touched:
                progress.current = target.write.path
                if fault:
                    from pathlib import Path  # a test's hook (the path's folder)

                    fault("fsync-dir", Path(target.write.path).parent)
                fsync_directory(target.directory)
    except BaseException as error:
        problems = _roll_back(progress, targets, token)
        _close(progress, targets)
        current = progress.current
        if not isinstance(error, Exception):
            raise  # KeyboardInterrupt and friends: rolled back, now let them through
        if (
            step == "meanwhile"
            or progress.meanwhile_failed
            or (step in ("prepare", "verify") and not isinstance(error, OSError))
            or (step == "write" and isinstance(error, StaleFile))  # a big file's copy read it changed
        ):
            raise  # refused before any file was replaced (NotAFile, StaleFile, OutsideWorkspace, ...)
        what = {
            "prepare": "preparing",
            "write": "writing a temporary copy of",
            "verify": "checking",
            "replace": "replacing",
            "fsync-dir": "flushing the directory of",
        }[step]
        if problems:
            message = (
                f"failed while {what} {current}: {error}; the rollback was INCOMPLETE:\n  "
                + "\n  ".join(problems)
                + "\ncheck these files by hand (the history has their original bytes)"
            )
        else:
            message = (
                f"failed while {what} {current}: {error}; nothing was changed (every file was rolled back); "
                "check permissions and free disk space, then retry"
            )
        raise WriteError(message, path=str(current) if current else None) from error

    for target, parked in progress.parked:
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.unlink(parked, dir_fd=target.directory)
        except OSError:
            pass
    close_later([target.kept for target in targets if target.kept is not None])
    for target in targets:
        target.kept = None
    _close(progress, targets)


def _write_temps(
    targets: Sequence[_Target],
    progress: _Progress,
    token: str,
    fault: Fault | None,
    *,
    anonymous: bool = False,
) -> bool:
    """Write every temporary file (not yet flushed). ``anonymous``: as unnamed files of their
    folders (``O_TMPFILE``), named later by ``_name_temps``, the big ones written by the flush
    (``_flush_temps``, on the other thread); False if the system or the file system cannot
    make unnamed files (nothing was written then)."""
    for index, target in enumerate(targets):
        write = target.write
        data = write.data
        if data is None:
            continue
        progress.current = write.path
        mode = write.mode if write.mode is not None else _mode_of(target.old)
        owner = _owner_of(target.old)
        if anonymous:
            try:
                descriptor = open_temp(target.directory, None)
            except NoAnonymousFiles:
                _close_unflushed(progress)
                return False
            progress.anonymous[index] = descriptor
            if len(data) >= WRITTEN_BESIDE:
                progress.unflushed.append((descriptor, write.path, (data, mode, owner)))
                progress.touched.add(target.directory)
                continue
            fill(descriptor, data, mode, write.path, fault, owner)
        else:
            temp = temp_name(target.name, token)
            progress.temp_files[index] = temp
            descriptor = written_temp(data, target.directory, temp, mode, write.path, fault, owner)
        progress.unflushed.append((descriptor, write.path, None))
        progress.touched.add(target.directory)
    return True


def _name_temps(targets: Sequence[_Target], progress: _Progress, token: str) -> None:
    """Give the flushed unnamed files their temporary names (now that a crash leaves a name the
    caller's record knows): a link through ``/proc/self/fd``, then the descriptor is closed."""
    while progress.anonymous:
        index, descriptor = next(iter(progress.anonymous.items()))
        target = targets[index]
        progress.current = target.write.path
        temp = temp_name(target.name, token)
        os.link(f"{PROC_FD}/{descriptor}", temp, dst_dir_fd=target.directory, follow_symlinks=True)
        progress.temp_files[index] = temp
        del progress.anonymous[index]
        os.close(descriptor)


def _flush_temps(progress: _Progress, fault: Fault | None) -> None:
    """Write what was left to write (a big file's bytes) and fsync the temporary files: few
    blocking calls per file, so on another thread it seldom waits for the interpreter's lock
    (each wait can cost a switch interval, 5 ms, while the other thread computes)."""
    unnamed = set(progress.anonymous.values())  # stay open: closing would delete them
    while progress.unflushed:
        descriptor, shown, pending = progress.unflushed[0]
        progress.current = shown
        if pending is not None:
            data, mode, owner = pending
            fill(descriptor, data, mode, shown, fault, owner)
        del progress.unflushed[0]
        flush(descriptor, shown, fault, close=descriptor not in unnamed)


def _close_unflushed(progress: _Progress) -> None:
    """Close every temporary file still open (an unnamed one vanishes with its descriptor)."""
    open_descriptors = {item[0] for item in progress.unflushed} | set(progress.anonymous.values())
    progress.unflushed.clear()
    progress.anonymous.clear()
    for descriptor in open_descriptors:
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.close(descriptor)
        except OSError:
            pass


def _verify(target: _Target, progress: _Progress) -> None:
    """The last check before the replace: the file holds ``original`` byte for byte and has
    ``original_mode`` when one is given (a file to be created is still absent, a regular file
    has not become a link)."""
    write = target.write
    if write.original is None:
        try:
            os.stat(target.name, dir_fd=target.directory, follow_symlinks=False)
        except FileNotFoundError:
            return
        raise _stale(write, "was created")
    regular = target.old is not None and stat.S_ISREG(target.old.st_mode)
    flags = os.O_RDONLY | os.O_NONBLOCK | CLOEXEC | (os.O_NOFOLLOW if regular else 0)
    try:
        descriptor = os.open(target.name, flags, dir_fd=target.directory)
    except FileNotFoundError:
        raise _stale(write, "was deleted") from None
    except OSError as error:
        raise _stale(
            write, "became a symbolic link" if error.errno == errno.ELOOP else "changed on disk"
        ) from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or not holds_bytes(descriptor, write.original):
            raise _stale(write, "changed on disk")
        _check_mode(write, info)
        if not isinstance(write.original, (bytes, bytearray, memoryview)) and write.data is not None:
            target.kept, descriptor = descriptor, None  # the old bytes are not held: the rollback's copy
        elif info.st_nlink == 1 and info.st_size and progress.held < HELD_OPEN:
            # its last name goes in the replace (or the delete): freeing its blocks waits for this
            target.kept, descriptor = descriptor, None
            progress.held += 1
    finally:
        if descriptor is not None:
            os.close(descriptor)


class _OldInode:
    """The bytes of a replaced file not held in memory, read back from its old inode (kept open)."""

    __slots__ = ("descriptor", "original")

    def __init__(self, descriptor: int, original: object) -> None:
        self.descriptor, self.original = descriptor, original

    def chunks(self) -> object:
        return self.original.read_from(self.descriptor)  # type: ignore[attr-defined]


def _trusted_root(path: str | os.PathLike[str]) -> str:
    current = os.path.dirname(os.path.abspath(path))
    while not os.path.isdir(current) and current != os.path.dirname(current):
        current = os.path.dirname(current)
    return os.path.realpath(current)


def _close(progress: _Progress, targets: Sequence[_Target]) -> None:
    for target in targets:
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.close(target.directory)
        except OSError:
            pass
        if target.kept is not None:
            try:  # noqa: SIM105 - not contextlib (start-up)
                os.close(target.kept)
            except OSError:
                pass
            target.kept = None
    for parent, _name in progress.created_directories:
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.close(parent)
        except OSError:
            pass
    progress.created_directories.clear()
