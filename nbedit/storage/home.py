"""The nbedit home is private: made 0700, trusted only when the current user owns it.

The history keeps the bytes of every edited file, so a ``.env`` edited with the
history on has its secrets in the home: the home is created 0700 and every file in
it 0600 whatever the umask, and a home found with wider modes (made by an older
nbedit, or by hand) is tightened when it is opened (``tighten``; ``nbedit doctor``
reports it).

A home is trusted only if the current user owns it, as git trusts a repository only
under ``safe.directory``: entries in someone else's home could name this user's
root and files, and an undo would write what that someone put there. The database
file must be this user's too, and neither it nor its companions may be symbolic
links (SQLite opens them following links).

Every file nbedit makes in the home is created exclusively (``O_EXCL``), without
following a link (``O_NOFOLLOW``), under an unpredictable name, and renamed (or
linked) into place: a link planted in the home can never make nbedit write through it.
"""

from __future__ import annotations

import os
import stat

from nbedit.errors import HistoryError

__all__ = [
    "PRIVATE_FILE",
    "PRIVATE_FOLDER",
    "create_private",
    "foreign_owner",
    "prepare_home",
    "read_private",
    "tighten",
    "wider_than_private",
    "write_private",
]

PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# the names nbedit keeps in a home: the database, its companions, the id floor, moved-aside copies
_OWN_PREFIXES = ("history.sqlite3", ".history.sqlite3", "blobs")


def _current_user() -> int | None:
    """The effective user id (None where the system has none: ownership is then not checked)."""
    geteuid = getattr(os, "geteuid", None)
    return geteuid() if geteuid is not None else None


def _owner_name(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


def prepare_home(home: str | os.PathLike[str], database_name: str) -> list[str]:
    """Create ``home`` (0700) or check the existing one; returns what was tightened.

    Raises ``HistoryError`` for a home (or database) this user does not own, or a
    database or companion that is a symbolic link.
    """
    try:
        os.makedirs(home, mode=PRIVATE_FOLDER)  # the folders above it as Path.mkdir(parents=True) makes them
    except FileExistsError:
        pass
    except OSError as error:
        raise HistoryError(
            f"cannot create the nbedit home {home}: {error.strerror or error}; "
            "set NBEDIT_HOME to a writable directory"
        ) from None
    else:
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.chmod(home, PRIVATE_FOLDER)  # whatever the umask
        except OSError:
            pass
    try:
        info = os.stat(home)
    except OSError as error:
        raise HistoryError(f"cannot use the nbedit home {home}: {error.strerror or error}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise HistoryError(f"the nbedit home {home} is not a folder; set NBEDIT_HOME to a folder")
    user = _current_user()
    if user is not None and info.st_uid != user:
        raise HistoryError(
            f"the nbedit home {home} belongs to {_owner_name(info.st_uid)}, not to you "
            f"({_owner_name(user)}); its history is not trusted (another user's entries could write into "
            "your files). Set NBEDIT_HOME to a folder you own, or take it over (chown) if it is yours. "
            "Nothing was read or written"
        )
    database = os.path.join(home, database_name)
    for name in (database, f"{database}-wal", f"{database}-shm"):
        try:
            found = os.lstat(name)
        except FileNotFoundError:
            continue
        except OSError as error:
            raise HistoryError(f"cannot use the history file {name}: {error.strerror or error}") from None
        if stat.S_ISLNK(found.st_mode) or not stat.S_ISREG(found.st_mode):
            raise HistoryError(
                f"the history file {name} is not a regular file (a symbolic link or something else was "
                "put there); nbedit will not open it. Remove it (the history may then be set aside by "
                "`nbedit doctor --repair`); nothing was read or written"
            )
        if user is not None and found.st_uid != user:
            raise HistoryError(
                f"the history file {name} belongs to {_owner_name(found.st_uid)}, not to you; it is not "
                "trusted. Remove it or set NBEDIT_HOME to a folder of your own; nothing was read or written"
            )
    blobs = os.path.join(home, "blobs")  # the linked old copies: listed and swept, so never through a link
    try:
        found = os.lstat(blobs)
    except OSError:
        pass
    else:
        if not stat.S_ISDIR(found.st_mode) or (user is not None and found.st_uid != user):
            raise HistoryError(
                f"the history folder {blobs} is not a folder of yours (a symbolic link or something else "
                "was put there); nbedit will not use it. Remove it; nothing was read or written"
            )
    if stat.S_IMODE(info.st_mode) & 0o077:
        return tighten(home)
    return []


def tighten(home: str | os.PathLike[str]) -> list[str]:
    """Make ``home`` 0700 and nbedit's files in it 0600 (folders 0700); returns what changed."""
    changed: list[str] = []
    user = _current_user()

    def narrow(path: str | os.PathLike[str], mode: int) -> None:
        try:
            info = os.lstat(path)
        except OSError:
            return
        if stat.S_ISLNK(info.st_mode) or (user is not None and info.st_uid != user):
            return
        if stat.S_IMODE(info.st_mode) & ~mode & 0o7777:
            try:
                os.chmod(path, stat.S_IMODE(info.st_mode) & mode, follow_symlinks=False)
            except (OSError, NotImplementedError):
                try:  # noqa: SIM105 - not contextlib (start-up)
                    os.chmod(path, stat.S_IMODE(info.st_mode) & mode)
                except OSError:
                    pass
            was = stat.S_IMODE(info.st_mode)
            changed.append(f"{path}: {oct(was)} -> {oct(was & mode)}")

    narrow(home, PRIVATE_FOLDER)
    try:
        names = sorted(os.listdir(home))
    except OSError:
        return changed
    for name in names:
        if not name.startswith(_OWN_PREFIXES):
            continue
        path = os.path.join(home, name)
        if os.path.isdir(path) and not os.path.islink(path):
            narrow(path, PRIVATE_FOLDER)
            try:  # noqa: SIM105 - not contextlib (start-up)
                for inner in sorted(os.listdir(path)):
                    narrow(os.path.join(path, inner), PRIVATE_FILE)
            except OSError:
                pass
        else:
            narrow(path, PRIVATE_FILE)
    return changed


def foreign_owner(home: str | os.PathLike[str]) -> str | None:
    """The name of the user owning an existing ``home`` if that is not the current user, else None."""
    user = _current_user()
    try:
        owner = os.stat(home).st_uid
    except OSError:
        return None
    return _owner_name(owner) if user is not None and owner != user else None


def wider_than_private(home: str | os.PathLike[str]) -> list[str]:
    """What in ``home`` is readable or writable by others (for ``nbedit doctor``), changing nothing."""
    found: list[str] = []
    try:
        info = os.stat(home)
    except OSError:
        return found
    if stat.S_IMODE(info.st_mode) & 0o077:
        found.append(f"{home} is {oct(stat.S_IMODE(info.st_mode))}")
    try:  # noqa: SIM105 - not contextlib (start-up)
        for name in sorted(os.listdir(home)):
            if not name.startswith(_OWN_PREFIXES):
                continue
            path = os.path.join(home, name)
            mode = stat.S_IMODE(os.lstat(path).st_mode)
            if not stat.S_ISLNK(os.lstat(path).st_mode) and mode & 0o077:
                found.append(f"{path} is {oct(mode)}")
    except OSError:
        pass
    return found


def create_private(folder: str | os.PathLike[str], prefix: str, suffix: str) -> tuple[int, str]:
    """A new file in ``folder``, 0600, created exclusively without following a link, under an
    unpredictable name (``prefix`` + random + ``suffix``); returns (descriptor, name)."""
    for _ in range(16):
        name = f"{prefix}{os.urandom(8).hex()}{suffix}"
        try:
            descriptor = os.open(
                os.path.join(folder, name),
                os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                PRIVATE_FILE,
            )
        except FileExistsError:
            continue
        try:
            os.fchmod(descriptor, PRIVATE_FILE)  # an odd umask (0o700) must not leave it unreadable
        except OSError:
            os.close(descriptor)
            try:  # noqa: SIM105 - not contextlib (start-up)
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass
            raise
        return descriptor, name
    raise FileExistsError(f"could not make a new file in {folder}")


def write_private(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically: a private temporary file renamed over it
    (a rename replaces a link planted at ``path``, never writes through it)."""
    folder, base = os.path.split(os.fspath(path))
    descriptor, name = create_private(folder or ".", f".{base}.", ".tmp")
    temporary = os.path.join(folder, name)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
        finally:
            os.close(descriptor)
        os.replace(temporary, path)
    except BaseException:
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.unlink(temporary)
        except OSError:
            pass
        raise


def read_private(path: str | os.PathLike[str], limit: int = 1 << 16) -> bytes:
    """Read a small file of the home without following a link (``OSError`` if it is one)."""
    descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.read(descriptor, limit)
    finally:
        os.close(descriptor)
