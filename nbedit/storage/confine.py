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

Reads take the same walk (``open_file``, ``stat_file``): a folder swapped for a link
between resolving a path and reading it cannot show an outside file.

The root itself is pinned (``PinnedRoot``): its device and inode are taken when the
workspace opens it, and every walk checks the folder it opened as the root against
them, so a root renamed away and replaced by a link to another folder between the
plan and the write is refused instead of written into.

Every path is checked here before it reaches a parser or the disk
(``check_path_text``): a newline, NUL or other control character in a name is an
error on every surface, so a name can never smuggle a second operation into a
line-based format. Paths read back from the history are checked the same way and
must be relative, inside their root, with no ``..`` (``check_recorded_path``).
"""

from __future__ import annotations

import errno
import os
import stat

from nbedit._dataclass import dataclass
from nbedit._path_text import normal
from nbedit.errors import NbeditError, NotAFile, OutsideWorkspace, WriteError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "Location",
    "PinnedRoot",
    "check_path_text",
    "check_recorded_path",
    "close_directories",
    "locate",
    "open_directory",
    "open_file",
    "stat_file",
]

_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


_LINE_BREAKS = frozenset("\u2028\u2029\x85")  # str.splitlines breaks here too


def check_path_text(path: str | os.PathLike[str]) -> None:
    """Refuse a path holding a NUL, newline or other control character (``OutsideWorkspace``:
    no file of the workspace has such a name).

    Such a name is never a file a person meant: in a line-based format it starts a
    new line (a second operation), and the system refuses a NUL with a raw error.
    """
    shown = os.fspath(path)
    if isinstance(shown, bytes):
        shown = os.fsdecode(shown)
    for character in shown:
        if character < " " or "\x7f" <= character <= "\x9f" or character in _LINE_BREAKS:
            raise OutsideWorkspace(
                f"{shown!r}: a path cannot contain a control character ({character!r}: NUL, newline, tab "
                "and the like); name the file without it. Nothing was read or written",
                path=shown,
            )


def check_recorded_path(path: str) -> str:
    """A path read back from the history: relative, inside its root, no ``..``, no control character.

    The history is data on disk: a forged or damaged entry must never name a file
    outside its root. Returns the path; raises ``HistoryError`` otherwise.
    """
    from nbedit.errors import HistoryError

    try:
        check_path_text(path)
    except OutsideWorkspace:
        raise HistoryError(
            f"the history names the path {path!r}, which holds a control character; the entry is damaged "
            "or forged and is not used (nothing was read or written)"
        ) from None
    parts = path.split("/")
    if not path or path.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise HistoryError(
            f"the history names the path {path!r}, which is not a plain path inside its workspace root "
            "(absolute, empty, or with '..'); the entry is damaged or forged and is not used "
            "(nothing was read or written)"
        )
    return path


class PinnedRoot:
    """A workspace root pinned by the device and inode of its folder when the workspace opened it.

    Behaves as the root's path (``os.fspath``) wherever a path is expected; every walk
    from it (``open_directory``) refuses a root that is no longer that folder. ``text`` is the
    real path as a string (what the walks use: no ``pathlib`` on the way to a write), ``path``
    the same as a ``Path``.
    """

    __slots__ = ("identity", "text")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.text = os.path.realpath(path)
        info = os.stat(self.text)
        self.identity = (info.st_dev, info.st_ino)

    @property
    def path(self) -> Path:
        from pathlib import Path

        return Path(self.text)

    def __fspath__(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"PinnedRoot({self.text!r})"

    def __truediv__(self, other: str) -> Path:
        return self.path / other

    def check(self, shown: str) -> None:
        """Raise ``OutsideWorkspace`` if the root's path no longer leads to the pinned folder."""
        try:
            info = os.stat(self.text)
            same = (info.st_dev, info.st_ino) == self.identity
        except OSError:
            same = False
        if not same:
            raise _root_changed(self.text, shown)


def _root_changed(root: str, shown: str) -> OutsideWorkspace:
    return OutsideWorkspace(
        f"{shown}: the workspace root {root} is no longer the folder it was when the workspace opened "
        "it (it was moved, or replaced by a link to another folder); nbedit will not read or write "
        "there. Nothing was written; open the workspace again on the folder you mean",
        path=shown,
    )


@dataclass(frozen=True, slots=True)
class Location:
    """A file as reached from the root: its folder (relative parts) and its name in it."""

    root: str  # real path of the root
    folder: tuple[str, ...]  # components from the root to the file's folder, no links among them
    name: str
    shown: str  # the path as the caller named it, for messages
    pinned: tuple[int, int] | None = None  # (device, inode) the root must still have (PinnedRoot)

    @property
    def path(self) -> Path:
        from pathlib import Path

        return Path(self.root).joinpath(*self.folder, self.name)


def locate(
    path: str | os.PathLike[str],
    root: str | os.PathLike[str] | PinnedRoot,
    *,
    follow: bool,
    shown: str | None = None,
) -> Location:
    """Resolve ``path`` now and check it stays inside ``root``.

    ``follow``: a final symbolic link is followed (a write goes to its target);
    otherwise the link itself is the file (a delete removes the link). A
    ``PinnedRoot`` carries its identity into the location (checked by the walk).
    """
    text = os.fspath(path)
    check_path_text(text)
    shown = text if shown is None else shown
    pinned = root.identity if isinstance(root, PinnedRoot) else None
    # plain strings, not pathlib: every read and write resolves here (pathlib cost a read 3x)
    try:
        real_root = root.text if isinstance(root, PinnedRoot) else os.path.realpath(root)
        absolute = os.path.abspath(text)
        if follow and os.path.islink(absolute):
            resolved = os.path.realpath(absolute)
        else:
            folder, name = os.path.split(absolute)
            resolved = os.path.join(os.path.realpath(folder), name)
    except OSError as error:  # a link on the path vanished while it was being resolved
        raise WriteError(
            f"{shown}: its path changed while nbedit was resolving it ({error.strerror or error}); "
            "nothing was written, retry",
            path=shown,
        ) from None
    root_text = real_root
    if resolved == root_text:
        raise NotAFile(f"{shown}: is the workspace root itself, not a file", path=shown)
    prefix = root_text if root_text.endswith("/") else root_text + "/"
    if not resolved.startswith(prefix):
        if isinstance(root, PinnedRoot):
            root.check(shown)
        raise OutsideWorkspace(
            f"{shown}: now resolves to {resolved}, outside the workspace root {real_root} "
            "(a folder or the file became a link since the preview); nothing was written",
            path=shown,
        )
    parts = tuple(resolved[len(prefix) :].split("/"))
    return Location(real_root, parts[:-1], parts[-1], shown, pinned)


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
    if location.pinned is not None:
        info = os.fstat(current)
        if (info.st_dev, info.st_ino) != location.pinned:
            os.close(current)
            raise _root_changed(location.root, location.shown)
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


_FILE_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in must not block the read; fstat refuses it
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
)


def open_file(
    path: str | os.PathLike[str], root: str | os.PathLike[str] | PinnedRoot, *, shown: str | None = None
) -> int | None:
    """A read-only descriptor of the regular file at ``path`` (None: no such file), reached
    from the root with no link followed after resolution (a final link inside the root is
    read through, as a write goes through it). The caller closes it."""
    location = locate(normal(path), root, follow=True, shown=shown)
    try:
        directory = open_directory(location, create=False)
    except FileNotFoundError:
        return None
    try:
        descriptor = os.open(location.name, _FILE_FLAGS, dir_fd=directory)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _unreadable(location, error) from None
    finally:
        os.close(directory)
    try:
        info = os.fstat(descriptor)
    except OSError as error:
        os.close(descriptor)
        raise _unreadable(location, error) from None
    if stat.S_ISDIR(info.st_mode):
        os.close(descriptor)
        raise NotAFile(
            f"{location.shown}: is a directory; nbedit edits files, name a file inside it",
            path=location.shown,
        )
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        raise NotAFile(
            f"{location.shown}: is not a regular file (device, socket or pipe); not edited",
            path=location.shown,
        )
    return descriptor


def stat_file(
    path: str | os.PathLike[str], root: str | os.PathLike[str] | PinnedRoot, *, shown: str | None = None
) -> os.stat_result | None:
    """``os.stat`` of the file at ``path`` reached by the same walk as ``open_file`` (None: none there)."""
    location = locate(normal(path), root, follow=True, shown=shown)
    try:
        directory = open_directory(location, create=False)
    except FileNotFoundError:
        return None
    try:
        return os.stat(location.name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _unreadable(location, error) from None
    finally:
        os.close(directory)


def _unreadable(location: Location, error: OSError) -> NbeditError:
    if error.errno == errno.ELOOP:
        return OutsideWorkspace(
            f"{location.shown}: became a symbolic link since its path was resolved; nbedit does not follow "
            "it. Nothing was read or written",
            path=location.shown,
        )
    if error.errno == errno.ENOTDIR:
        return NotAFile(
            f"{location.shown}: a parent of this path is a file, not a folder", path=location.shown
        )
    return NotAFile(f"{location.shown}: cannot be read ({error.strerror or error})", path=location.shown)


def _is_link(location: Location, error: OSError) -> bool:
    if error.errno == errno.ELOOP:
        return True
    current = location.root
    for part in location.folder:
        current = os.path.join(current, part)
        try:  # noqa: SIM105 - not contextlib (start-up)
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return True
        except OSError:
            pass
    return False


def close_directories(descriptors: dict[object, int] | list[int]) -> None:
    values = descriptors.values() if isinstance(descriptors, dict) else descriptors
    for descriptor in values:
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.close(descriptor)
        except OSError:
            pass
