"""Reach a file under the workspace root without ever leaving it, at the moment of the write.

Confinement checked at plan time is not enough: between the preview and the write
(the whole review) a folder on the path can become a symbolic link to somewhere
else, or the file itself a link to an outside file holding the same bytes. So every
write re-resolves its path under the lock and then walks to the file's folder one
component at a time from a descriptor of the root, opening each folder with
``O_NOFOLLOW``: a component that is a link now (it was not when resolved a moment
ago) is refused instead of followed. The final rename, unlink or create then runs
relative to that folder's descriptor, and a rename or unlink acts on the name
itself, never on what a link there points to. Whatever is swapped in after the
walk can only redirect the write to inside that folder.

A symbolic link inside the root that points to a file inside the root is still
written through (the target is replaced, the link kept), as editors do; deleting a
link removes the link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from nbedit._dataclass import dataclass
from nbedit.errors import NotAFile, OutsideWorkspace, WriteError

__all__ = ["Location", "close_directories", "locate", "open_directory"]

_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True, slots=True)
class Location:
    """A file as reached from the root: its folder (relative parts) and its name in it."""

    root: Path  # real path of the root
    folder: tuple[str, ...]  # components from the root to the file's folder, no links among them
    name: str
    shown: str  # the path as the caller named it, for messages

    @property
    def path(self) -> Path:
        return self.root.joinpath(*self.folder, self.name)


def locate(path: Path, root: Path, *, follow: bool) -> Location:
    """Resolve ``path`` now and check it stays inside ``root``.

    ``follow``: a final symbolic link is followed (a write goes to its target);
    otherwise the link itself is the file (a delete removes the link).
    """
    shown = str(path)
    if "\0" in shown:
        raise OutsideWorkspace(f"{shown!r}: a path cannot contain a NUL character", path=shown)
    try:
        real_root = Path(os.path.realpath(root))
        absolute = Path(os.path.abspath(path))
        if follow and absolute.is_symlink():
            resolved = Path(os.path.realpath(absolute))
        else:
            resolved = Path(os.path.realpath(absolute.parent)) / absolute.name
    except OSError as error:  # a link on the path vanished while it was being resolved
        raise WriteError(
            f"{shown}: its path changed while nbedit was resolving it ({error.strerror or error}); "
            "nothing was written, retry",
            path=shown,
        ) from None
    try:
        relative = resolved.relative_to(real_root)
    except ValueError:
        raise OutsideWorkspace(
            f"{shown}: now resolves to {resolved}, outside the workspace root {real_root} "
            "(a folder or the file became a link since the preview); nothing was written",
            path=shown,
        ) from None
    if not relative.parts:
        raise NotAFile(f"{shown}: is the workspace root itself, not a file", path=shown)
    return Location(real_root, relative.parts[:-1], relative.parts[-1], shown)


def open_directory(location: Location, *, create: bool, created: list[tuple[int, str]] | None = None) -> int:
    """A descriptor of the location's folder, reached from the root with no link followed.

    ``create``: missing folders are made (and appended to ``created`` as (parent
    descriptor duplicate, name), outermost first, so a rollback can remove them).
    """
    try:
        current = os.open(location.root, _DIRECTORY_FLAGS)
    except OSError as error:
        raise WriteError(
            f"cannot open the workspace root {location.root}: {error.strerror or error}", path=location.shown
        ) from None
    try:
        for part in location.folder:
            try:
                following = os.open(part, _DIRECTORY_FLAGS | os.O_NOFOLLOW, dir_fd=current)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777, dir_fd=current)
                except FileExistsError:
                    pass  # another writer made it a moment ago
                else:
                    if created is not None:
                        created.append((os.dup(current), part))
                following = os.open(part, _DIRECTORY_FLAGS | os.O_NOFOLLOW, dir_fd=current)
            os.close(current)
            current = following
        return current
    except OSError as error:
        os.close(current)
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            if _is_link(location, error):
                raise OutsideWorkspace(
                    f"{location.shown}: a folder on its path is a symbolic link now (it was not when the "
                    "change was planned); nbedit will not follow it at write time; nothing was written",
                    path=location.shown,
                ) from None
            raise NotAFile(
                f"{location.shown}: a parent of this path is a file, not a folder; choose another path",
                path=location.shown,
            ) from None
        if isinstance(error, FileNotFoundError) and not create:
            raise
        if isinstance(error, (FileNotFoundError, FileExistsError)):
            raise WriteError(
                f"{location.shown}: a folder on its path changed while nbedit was reaching it "
                "(moved, removed or replaced by a link); nothing was written, retry",
                path=location.shown,
            ) from None
        raise WriteError(
            f"{location.shown}: cannot open its folder ({error.strerror or error}); nothing was written",
            path=location.shown,
        ) from None


def _is_link(location: Location, error: OSError) -> bool:
    if error.errno == errno.ELOOP:
        return True
    current = location.root
    for part in location.folder:
        current = current / part
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return True
    return False


def close_directories(descriptors: dict[object, int] | list[int]) -> None:
    values = descriptors.values() if isinstance(descriptors, dict) else descriptors
    for descriptor in values:
        with contextlib.suppress(OSError):
            os.close(descriptor)
