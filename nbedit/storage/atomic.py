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
the root with no link followed (``confine.py``), and each file is checked at that
moment: it must still hold ``original`` (read through the same descriptor), and a
file the user could not write in place (a 0444 file, another user's file in a
shared folder) is refused unless forced, as editors do. The written file keeps its
owner and group where the user may keep them (so a setgid file keeps its group).

A crash (SIGKILL, power cut) cannot run a rollback, so per file the guarantee is
that the target holds either the old or the new bytes, never a mix; across files a
crash in the rename phase can leave some renamed and some not, which the history's
pending entry records (see ``history.py``). The temporary files carry the writer's
pid and a token in their name (``.<name>.nbedit-<pid>-<token>.tmp``); the history
records the token, so recovery removes exactly the files that writer created
(``remove_leftovers``) and never a user file that merely looks like one.

Symbolic links inside the root are written through: the file the link points to is
replaced and the link itself is kept, as editors do. Deleting a link removes the link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from nbedit import _hashing as hashlib  # sha256 without loading OpenSSL for small data
from nbedit._dataclass import dataclass, field
from nbedit.errors import NotAFile, StaleFile, WriteError
from nbedit.storage.confine import Location, locate, open_directory

__all__ = ["Fault", "Write", "apply_writes", "is_temp_file", "new_token", "remove_leftovers", "temp_name"]

Fault = Callable[[str, Path], None]
"""Test hook called at "write", "fsync", "replace" and "fsync-dir"; raising there simulates a failure."""

_TEMP_PATTERN = re.compile(r"^\..*\.nbedit-(?P<pid>\d+)-[0-9a-f]+\.(?:tmp|old|back)$", re.DOTALL)
_SUFFIXES = ("tmp", "old", "back")


@dataclass(frozen=True, slots=True)
class Write:
    """One file operation: write ``data`` (or delete when None); ``original`` is what is there now.

    ``mode``: permission bits for the written file; None keeps the existing file's
    bits (as they are at write time), or gives a new file the default (umask) mode.
    A move is a delete of the old path plus a write of the new one.
    """

    path: Path
    data: bytes | None
    original: bytes | None
    mode: int | None = None


@dataclass(slots=True)
class _Target:
    write: Write
    location: Location
    directory: int  # descriptor of the file's folder
    name: str
    old: os.stat_result | None  # the file there now (lstat), None: no file


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


def is_temp_file(name: str) -> bool:
    return _TEMP_PATTERN.match(name) is not None


def process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def new_token() -> str:
    return os.urandom(4).hex()  # not secrets.token_hex: the secrets module costs 2 ms to import


def temp_name(name: str, token: str, suffix: str = "tmp", pid: int | None = None) -> str:
    """The temporary name nbedit uses next to ``name``; short enough for any file system.

    A long name is cut and tagged with a hash of the whole, so ``.<name>...`` never
    exceeds the 255-byte limit a file name already close to it would break.
    """
    base = name
    if len(os.fsencode(base)) > 180:
        digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:12]
        cut = os.fsencode(name)[:120].decode("utf-8", "ignore") if name.isascii() else name[:40]
        base = f"{cut}~{digest}"
    return f".{base}.nbedit-{os.getpid() if pid is None else pid}-{token}.{suffix}"


def remove_leftovers(root: Path, paths: Sequence[str], *, pid: int, token: str) -> list[str]:
    """Remove the temporary and parked files a writer (``pid``, ``token``) left next to ``paths``.

    Only names that writer provably used are considered, and only regular files are
    removed (never a link or folder). Returns the names removed, relative to the root.
    """
    removed = []
    for path in paths:
        relative = Path(path)
        for suffix in _SUFFIXES:
            candidate = relative.with_name(temp_name(relative.name, token, suffix, pid))
            try:
                location = locate(Path(root) / candidate, root, follow=False)
                directory = open_directory(location, create=False)
            except (OSError, NotAFile, WriteError, ValueError):
                continue
            except Exception:  # OutsideWorkspace: the folder became a link; leave it alone
                continue
            try:
                info = os.stat(location.name, dir_fd=directory, follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    os.unlink(location.name, dir_fd=directory)
                    removed.append(candidate.as_posix())
            except OSError:
                pass
            finally:
                os.close(directory)
    return removed


def _stale(write: Write, message: str) -> StaleFile:
    return StaleFile(
        f"{write.path}: {message} since the preview; nothing was written. Re-plan the change and retry",
        path=str(write.path),
        expected=None,
        actual=None,
    )


def _holds(directory: int, name: str, expected: bytes) -> bool:
    try:
        descriptor = os.open(name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0), dir_fd=directory)
    except OSError:
        return False
    try:
        return holds_bytes(descriptor, expected)
    finally:
        os.close(descriptor)


def holds_bytes(descriptor: int, expected: bytes, chunk: int = 1 << 20) -> bool:
    """True if the open file holds exactly ``expected``, read in chunks into one reused buffer.

    Each chunk is compared in place (``startswith`` at an offset: a C memcmp, no slice
    of ``expected`` copied), so checking a 50 MB file costs its read and one compare.
    Not ``mmap``: a file truncated by another program while mapped would kill this
    process with SIGBUS.
    """
    if os.fstat(descriptor).st_size != len(expected):
        return False
    buffer = bytearray(min(chunk, max(len(expected), 1)))
    view = memoryview(buffer)
    position = 0
    while True:
        count = (
            os.preadv(descriptor, [buffer], position)
            if hasattr(os, "preadv")
            else _pread_into(descriptor, view, position)
        )
        if not count:
            return position == len(expected)
        if not expected.startswith(view[:count], position):
            return False
        position += count


def _pread_into(descriptor: int, view: memoryview, position: int) -> int:  # pragma: no cover - no preadv
    block = os.pread(descriptor, len(view), position)
    view[: len(block)] = block
    return len(block)


def _writable(directory: int, name: str, follow: bool) -> bool:
    if os.geteuid() == 0:
        return True
    try:
        return os.access(name, os.W_OK, dir_fd=directory, effective_ids=True, follow_symlinks=follow)
    except (NotImplementedError, OSError):
        return os.access(name, os.W_OK, dir_fd=directory)


def _prepare(write: Write, root: Path, progress: _Progress, force: bool) -> _Target:
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
        if not _holds(directory, location.name, write.original):
            raise _stale(write, "changed on disk")
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


def _write_temp(
    data: bytes,
    directory: int,
    temp: str,
    mode: int | None,
    shown: Path,
    fault: Fault | None,
    owner: tuple[int, int] | None,
) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(temp, flags, 0o666, dir_fd=directory)
    try:
        if fault:
            fault("write", shown)
        view = memoryview(data)
        while view:
            written = os.write(descriptor, view)
            view = view[written:]
        if owner is not None and owner != (os.geteuid(), os.getegid()):
            _keep_owner(descriptor, owner)
        if mode is not None:
            os.fchmod(descriptor, mode)  # after chown, which clears setuid/setgid bits
        if fault:
            fault("fsync", shown)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _keep_owner(descriptor: int, owner: tuple[int, int]) -> None:
    """The file's owner and group when we may (root); else at least its group (a member may)."""
    try:
        os.fchown(descriptor, *owner)
    except PermissionError:
        with contextlib.suppress(PermissionError):
            os.fchown(descriptor, -1, owner[1])


def _mode_of(info: os.stat_result | None) -> int | None:
    return stat.S_IMODE(info.st_mode) if info is not None else None


def _owner_of(info: os.stat_result | None) -> tuple[int, int] | None:
    return (info.st_uid, info.st_gid) if info is not None else None


def _restore(target: _Target, token: str) -> None:
    """Put a replaced target back to its original bytes, mode and owner, atomically."""
    if target.write.original is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target.name, dir_fd=target.directory)
        return
    temp = temp_name(target.name, token, "back")
    try:
        _write_temp(
            target.write.original, target.directory, temp, _mode_of(target.old), target.write.path, None,
            _owner_of(target.old),
        )  # fmt: skip
        os.replace(temp, target.name, src_dir_fd=target.directory, dst_dir_fd=target.directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=target.directory)
        raise


def _fsync_directory(directory: int) -> None:
    try:
        os.fsync(directory)
    except OSError as error:
        # Some file systems (and some platforms) cannot fsync a directory; the rename is still atomic.
        if error.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise


def _roll_back(progress: _Progress, targets: Sequence[_Target], token: str) -> list[str]:
    """Undo everything in ``progress``; return what could not be undone."""
    problems: list[str] = []
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
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=targets[index].directory)
    for parent, name in reversed(progress.created_directories):
        with contextlib.suppress(OSError):
            os.rmdir(name, dir_fd=parent)
    for directory in progress.touched:
        with contextlib.suppress(OSError):
            _fsync_directory(directory)
    return problems


def apply_writes(
    writes: Sequence[Write],
    *,
    root: Path | None = None,
    fault: Fault | None = None,
    token: str | None = None,
    force: bool = False,
) -> None:
    """Write, replace and delete files all-or-nothing; raise ``WriteError`` after rolling back.

    ``root``: every path must stay inside it at the moment of the write
    (``OutsideWorkspace`` otherwise); None trusts each path's folder. ``token``
    names the temporary files (see ``remove_leftovers``). ``force``: replace files
    the user could not write in place. Before anything is touched, each file is
    checked: ``NotAFile`` for a directory or special file, ``StaleFile`` when it no
    longer holds ``original``. The caller holds the locks (``locks.lock_paths``).
    """
    token = token or new_token()
    progress = _Progress()
    targets: list[_Target] = []
    step = "prepare"
    current: Path | None = None
    try:
        seen: set[tuple[int, int, str]] = set()
        for write in writes:
            current = write.path
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
        for index, target in enumerate(targets):
            write = target.write
            if write.data is None:
                continue
            current = write.path
            temp = temp_name(target.name, token)
            progress.temp_files[index] = temp
            mode = write.mode if write.mode is not None else _mode_of(target.old)
            _write_temp(write.data, target.directory, temp, mode, write.path, fault, _owner_of(target.old))
            progress.touched.add(target.directory)

        step = "replace"
        for index, target in enumerate(targets):
            write = target.write
            current = write.path
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
                current = target.write.path
                if fault:
                    fault("fsync-dir", target.write.path.parent)
                _fsync_directory(target.directory)
    except BaseException as error:
        problems = _roll_back(progress, targets, token)
        _close(progress, targets)
        if not isinstance(error, Exception):
            raise  # KeyboardInterrupt and friends: rolled back, now let them through
        if step == "prepare" and not isinstance(error, OSError):
            raise  # refused before anything was touched (NotAFile, StaleFile, OutsideWorkspace, ...)
        what = {
            "prepare": "preparing",
            "write": "writing a temporary copy of",
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
        with contextlib.suppress(OSError):
            os.unlink(parked, dir_fd=target.directory)
    _close(progress, targets)


def _trusted_root(path: Path) -> Path:
    current = Path(os.path.abspath(path)).parent
    while not current.is_dir() and current != current.parent:
        current = current.parent
    return Path(os.path.realpath(current))


def _close(progress: _Progress, targets: Sequence[_Target]) -> None:
    for target in targets:
        with contextlib.suppress(OSError):
            os.close(target.directory)
    for parent, _name in progress.created_directories:
        with contextlib.suppress(OSError):
            os.close(parent)
    progress.created_directories.clear()
