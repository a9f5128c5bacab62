"""The values the history takes and gives: drafts in, entries and file versions out.

They are plain immutable values so the workspace, the renderers and the widgets can
pass them around without holding a database connection.
"""

from __future__ import annotations

import os

from nbedit._dataclass import dataclass

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Literal

    from nbedit.storage.entries import Entry as Entry
    from nbedit.storage.entries import FileSummary as FileSummary
    from nbedit.storage.entries import FileVersion as FileVersion
    from nbedit.storage.entries import PruneResult as PruneResult

__all__ = [
    "AGENT_ORIGIN_PREFIX",
    "DATABASE_NAME",
    "ORIGINS",
    "Entry",  # noqa: F822 - given by __getattr__ (storage.entries)
    "EntryDraft",
    "FileRecord",
    "FileSummary",  # noqa: F822 - given by __getattr__ (storage.entries)
    "FileVersion",  # noqa: F822 - given by __getattr__ (storage.entries)
    "Origin",
    "PruneResult",  # noqa: F822 - given by __getattr__ (storage.entries)
    "Status",
    "default_home",
    "known_origin",
]

ORIGINS: tuple[str, ...] = ("magic", "api", "cli", "undo", "restore", "rewind")
if TYPE_CHECKING:
    Origin = Literal["magic", "api", "cli", "undo", "restore", "rewind"]
    Status = Literal["pending", "applied"]
else:
    # the aliases for a program that reads them at run time, made with typing then
    from nbedit._dataclass import literal_aliases

    _TYPE_ALIASES = {
        "Origin": ORIGINS,
        "Status": ("pending", "applied"),
    }
    _aliases = literal_aliases(__name__, _TYPE_ALIASES)

    def __getattr__(name: str) -> object:
        # ``Entry``, ``FileSummary``, ``FileVersion`` and ``PruneResult`` (what listing, reading and
        # pruning the history give) live in ``entries``: made when first read, so that a command that
        # only records a change never builds them (a class is some 30 us, and each ``namedtuple``
        # compiles its ``__new__``: start-up, tests/test_startup.py)
        if name in ("Entry", "FileSummary", "FileVersion", "PruneResult"):
            from nbedit.storage import entries

            return getattr(entries, name)
        return _aliases(name)


# a model's tool call: "agent:<tool name>:<call id>", so the history names who changed what
AGENT_ORIGIN_PREFIX = "agent:"


def known_origin(origin: str) -> bool:
    """One of ``ORIGINS``, or an agent tool call (``agent:<tool>:<call id>``)."""
    return origin in ORIGINS or (
        origin.startswith(AGENT_ORIGIN_PREFIX) and len(origin) > len(AGENT_ORIGIN_PREFIX)
    )


DATABASE_NAME = "history.sqlite3"  # in the home; named here so a caller can look for it cheaply


def default_home() -> Path:
    """``$NBEDIT_HOME``, or ``~/.nbedit``: where the history and the lock files live."""
    from pathlib import Path

    return Path(default_home_text())


def default_home_text() -> str:
    """``default_home()`` as a string (no ``pathlib`` on a command's way, ``nbedit._path_text``)."""
    from nbedit._path_text import expanduser, normal

    configured = os.environ.get("NBEDIT_HOME")
    return expanduser(normal(configured)) if configured else normal(os.path.join(_user_home(), ".nbedit"))


def _user_home() -> str:
    """``Path.home()``: ``~`` expanded, an error if there is no home to expand it to."""
    home = os.path.expanduser("~")
    if home.startswith("~"):
        raise RuntimeError("Could not determine home directory.")
    return home


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One file of a change as the caller saw it: bytes on both sides and their fingerprints.

    Fingerprints are ``nbedit.engine.text.fingerprint`` (SHA-256 hex) of the bytes;
    pass them when already computed so a big file is not hashed again (they are
    trusted, so they must be right). ``before``/``after`` None: the file did not
    exist before / does not exist after. ``new_path``: the file was moved there.
    ``before_file``: the absolute path of the file that holds ``before`` now and that
    the writer will rename a new file over (or delete): the history may hard-link it
    instead of packing a copy (``storage.blobs``). ``spans``: the byte spans of
    ``before`` the change replaced, in order, as (start, end, replacement); the
    "after" is then stored as a region delta without scanning the file (checked,
    never trusted). ``after_digest``: when ``after_fingerprint`` is None, a function that
    returns it, asked only once the "before" is stored (``Workspace.apply`` hashes a big
    "after" on another thread meanwhile, see ``nbedit.engine.digest``).
    """

    path: str
    new_path: str | None
    before: bytes | None
    after: bytes | None
    before_fingerprint: str | None = None
    after_fingerprint: str | None = None
    added: int = 0
    removed: int = 0
    before_mode: int | None = None  # permission bits before / written (None: unknown or no file)
    after_mode: int | None = None
    before_file: str | None = None
    spans: tuple[tuple[int, int, bytes], ...] | None = None
    after_digest: Callable[[], str] | None = None

    @property
    def target_path(self) -> str:
        return self.new_path or self.path


@dataclass(frozen=True, slots=True)
class EntryDraft:
    """An entry about to be written. ``origin`` is one of ``ORIGINS`` (or ``agent:...``, or ``rewind``);
    ``undoes`` names the entry undone.

    ``root``: the absolute workspace root the file paths are relative to; crash
    recovery needs it to find the files of an interrupted entry. ``token``: the
    name tag of the temporary files the writer makes (recovery removes exactly those).
    """

    session: str
    origin: str
    execution_count: int | None
    files: tuple[FileRecord, ...]
    tiers: tuple[str, ...] = ()
    summary: str = ""
    undoes: str | None = None
    root: str | None = None
    token: str | None = None
    turn: str | None = None  # the agent turn (one model response) this change belongs to
