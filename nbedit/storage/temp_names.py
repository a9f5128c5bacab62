"""The names of nbedit's temporary files, and removing the ones a dead writer left.

Every temporary or parked copy the writer makes beside a file is named
``.<name>.nbedit-<pid>-<token>.<tmp|old|back>``: the writer's pid and a token the history
records, so recovery removes exactly the files that writer created (``remove_leftovers``) and
never a user file that merely looks like one. Apart from the write pipeline because recovery,
the doctor and the history's crash check need the names without the writer.
"""

from __future__ import annotations

import os
import stat

from nbedit import _hashing as hashlib  # sha256 without loading OpenSSL for small data
from nbedit.errors import NotAFile, WriteError
from nbedit.storage.confine import locate, open_directory

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["is_temp_file", "new_token", "process_alive", "remove_leftovers", "temp_name"]

# compiled (and cached by re) at its first use: most commands never list a directory
_TEMP_PATTERN = r"(?s)^\..*\.nbedit-(?P<pid>\d+)-[0-9a-f]+\.(?:tmp|old|back)$"
_SUFFIXES = ("tmp", "old", "back")


def is_temp_file(name: str) -> bool:
    import re  # not on a write's path (start-up time)

    return re.match(_TEMP_PATTERN, name) is not None


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


def remove_leftovers(
    root: str | os.PathLike[str], paths: Sequence[str], *, pid: int, token: str
) -> list[str]:
    """Remove the temporary and parked files a writer (``pid``, ``token``) left next to ``paths``.

    Only names that writer provably used are considered, and only regular files are
    removed (never a link or folder). Returns the names removed, relative to the root.
    """
    from pathlib import Path  # recovery only

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
