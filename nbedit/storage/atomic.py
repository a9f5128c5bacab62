"""All-or-nothing writes of several files, each replaced atomically.

A change that touches three files must not leave one of them written when the
second fails (disk full, permission denied, a directory in the way). Each file is
first written completely to a temporary file in its own directory (same file
system, so the final ``os.replace`` is an atomic rename), flushed and fsynced;
only when every temporary file is ready are they renamed into place, and the
directories fsynced so the renames survive a power cut. Any failure before the
end rolls back what was already renamed: replaced files get their original bytes
and permission bits back, deleted files are renamed back from where they were
parked, created files and directories are removed, temporary files are removed.

A crash (SIGKILL, power cut) cannot run a rollback, so per file the guarantee is
that the target holds either the old or the new bytes, never a mix; across files a
crash in the rename phase can leave some renamed and some not, which the history's
pending entry records (see ``history.py``). The temporary files a crash leaves
behind carry the writer's pid in their name (``.<name>.nbedit-<pid>-<token>.tmp``),
so the next write into that directory removes those whose process is gone.

Symbolic links are written through: the file the link points to is replaced and
the link itself is kept, as editors do. Deleting a link removes the link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nbedit.errors import NotAFile, WriteError

__all__ = ["Fault", "Write", "apply_writes", "clean_stale_temp_files", "is_temp_file"]

Fault = Callable[[str, Path], None]
"""Test hook called at "write", "fsync", "replace" and "fsync-dir"; raising there simulates a failure."""

_TEMP_PATTERN = re.compile(r"^\..*\.nbedit-(?P<pid>\d+)-[0-9a-f]+\.(?:tmp|old)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Write:
    """One file operation: write ``data`` (or delete when None); ``original`` is what is there now.

    ``mode``: permission bits for the written file; None keeps the existing file's
    bits, or gives a new file the default (umask) mode. A move is a delete of the old
    path plus a write of the new one.
    """

    path: Path
    data: bytes | None
    original: bytes | None
    mode: int | None = None


@dataclass(slots=True)
class _Progress:
    """What has been done so far, so a failure can undo exactly that."""

    temp_files: dict[Path, Path] = field(default_factory=dict)  # target -> temp
    created_directories: list[Path] = field(default_factory=list)  # outermost first
    # (write, resolved target, status of the file it replaced)
    replaced: list[tuple[Write, Path, os.stat_result | None]] = field(default_factory=list)
    parked: list[tuple[Path, Path]] = field(default_factory=list)  # deleted target -> parked name
    touched_directories: set[Path] = field(default_factory=set)


def is_temp_file(name: str) -> bool:
    return _TEMP_PATTERN.match(name) is not None


def _temp_name(target: Path, suffix: str = "tmp") -> Path:
    return target.with_name(f".{target.name}.nbedit-{os.getpid()}-{secrets.token_hex(4)}.{suffix}")


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


def clean_stale_temp_files(directory: Path) -> int:
    """Remove temporary files left in ``directory`` by nbedit writers that no longer run."""
    removed = 0
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        found = _TEMP_PATTERN.match(name)
        if found is None or process_alive(int(found["pid"])):
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(directory, name))
            removed += 1
    return removed


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(descriptor)
    except OSError as error:
        # Some file systems (and some platforms) cannot fsync a directory; the rename is still atomic.
        if error.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(descriptor)


def _resolve_target(path: Path) -> Path:
    """The path to write: through symbolic links, so the link survives the replace."""
    path = Path(os.path.abspath(path))
    if path.is_symlink():
        return Path(os.path.realpath(path))
    return path


def _check_target(write: Write, target: Path) -> os.stat_result | None:
    """Refuse directories and special files; return the existing file's status (None: no file)."""
    try:
        info = os.stat(target) if write.data is not None else os.lstat(target)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise NotAFile(
            f"{write.path}: a parent of this path is a file, not a directory; choose another path",
            path=str(write.path),
        ) from None
    if stat.S_ISDIR(info.st_mode):
        action = "replace" if write.data is not None else "delete"
        raise NotAFile(
            f"{write.path}: is a directory; nbedit will not {action} a directory with a file operation; "
            "choose a file path",
            path=str(write.path),
        )
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        raise NotAFile(
            f"{write.path}: is not a regular file (device, pipe or socket); nbedit edits regular files only",
            path=str(write.path),
        )
    return info


def _make_parents(directory: Path, progress: _Progress) -> None:
    missing: list[Path] = []
    current = directory
    while not current.exists():
        missing.append(current)
        current = current.parent
    for created in reversed(missing):
        os.mkdir(created)
        progress.created_directories.append(created)
        progress.touched_directories.add(created.parent)


def _write_temp(
    data: bytes,
    temp: Path,
    mode: int | None,
    target: Path,
    fault: Fault | None,
    owner: tuple[int, int] | None,
) -> None:
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        if fault:
            fault("write", target)
        view = memoryview(data)
        while view:
            written = os.write(descriptor, view)
            view = view[written:]
        if owner is not None and owner != (os.geteuid(), os.getegid()):
            # Keep the file's owner when we may (root editing a user's file); otherwise it becomes ours.
            with contextlib.suppress(PermissionError):
                os.fchown(descriptor, *owner)
        if mode is not None:
            os.fchmod(descriptor, mode)
        if fault:
            fault("fsync", target)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _restore(write: Write, target: Path, old: os.stat_result | None) -> None:
    """Put a replaced target back to its original bytes, atomically."""
    if write.original is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
        return
    temp = _temp_name(target)
    try:
        _write_temp(write.original, temp, _mode_of(old), target, None, _owner_of(old))
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _mode_of(info: os.stat_result | None) -> int | None:
    return stat.S_IMODE(info.st_mode) if info is not None else None


def _owner_of(info: os.stat_result | None) -> tuple[int, int] | None:
    return (info.st_uid, info.st_gid) if info is not None else None


def _roll_back(progress: _Progress) -> list[str]:
    """Undo everything in ``progress``; return what could not be undone."""
    problems: list[str] = []
    for write, target, old in reversed(progress.replaced):
        try:
            _restore(write, target, old)
        except OSError as error:
            problems.append(f"{write.path}: could not restore the original ({error})")
    for target, parked in reversed(progress.parked):
        try:
            os.replace(parked, target)
        except OSError as error:
            problems.append(f"{target}: could not restore it from {parked.name} ({error})")
    for temp in progress.temp_files.values():
        with contextlib.suppress(FileNotFoundError, OSError):
            os.unlink(temp)
    for directory in reversed(progress.created_directories):
        with contextlib.suppress(OSError):
            os.rmdir(directory)
    for directory in progress.touched_directories:
        with contextlib.suppress(OSError):
            _fsync_directory(directory)
    return problems


def apply_writes(writes: Sequence[Write], *, fault: Fault | None = None) -> None:
    """Write, replace and delete files all-or-nothing; raise ``WriteError`` after rolling back.

    ``NotAFile`` is raised before anything is touched when a target is a directory
    or a special file. The caller holds the locks (``locks.lock_paths``) and has
    checked that the files still hold ``original``.
    """
    targets = [
        _resolve_target(write.path) if write.data is not None else Path(os.path.abspath(write.path))
        for write in writes
    ]
    if len(set(targets)) != len(targets):
        raise WriteError(
            "the same file appears twice in one write; merge the changes to it into one and retry"
        )
    existing = [_check_target(write, target) for write, target in zip(writes, targets, strict=True)]
    for directory in {target.parent for target in targets}:
        clean_stale_temp_files(directory)

    progress = _Progress()
    step = "prepare"
    current: Path | None = None
    try:
        step = "write"
        for write, target, old in zip(writes, targets, existing, strict=True):
            if write.data is None:
                continue
            current = write.path
            _make_parents(target.parent, progress)
            temp = _temp_name(target)
            progress.temp_files[target] = temp
            mode = write.mode if write.mode is not None else _mode_of(old)
            _write_temp(write.data, temp, mode, target, fault, _owner_of(old))
            progress.touched_directories.add(target.parent)

        step = "replace"
        for write, target, old in zip(writes, targets, existing, strict=True):
            current = write.path
            if fault:
                fault("replace", target)
            if write.data is not None:
                os.replace(progress.temp_files[target], target)
                del progress.temp_files[target]
                progress.replaced.append((write, target, old))
            elif old is not None:
                # Parked, not unlinked: renaming back is atomic and keeps bytes, mode and links.
                parked = _temp_name(target, "old")
                os.replace(target, parked)
                progress.parked.append((target, parked))
                progress.touched_directories.add(target.parent)

        step = "fsync-dir"
        for directory in sorted(progress.touched_directories):
            current = directory
            if fault:
                fault("fsync-dir", directory)
            _fsync_directory(directory)
    except BaseException as error:
        problems = _roll_back(progress)
        if not isinstance(error, Exception):
            raise  # KeyboardInterrupt and friends: rolled back, now let them through
        what = {
            "write": "writing a temporary copy of",
            "replace": "replacing",
            "fsync-dir": "flushing the directory of",
        }.get(step, "preparing")
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

    for _target, parked in progress.parked:
        with contextlib.suppress(OSError):
            os.unlink(parked)
