"""The sqlite3 module of the history store, without the package's import-time extras.

``import sqlite3`` runs ``sqlite3/dbapi2.py``, which imports :mod:`datetime` and registers
adapters and converters for dates and times (deprecated since Python 3.12): a few
milliseconds of every ``nbedit apply``, a process started once per edit. The history store
never stores a date object, and everything it uses (``connect``, ``Connection``, ``Error``
and its subclasses) is the C module's own, which the package only re-exports: the same
objects, so ``sqlite3.Error`` raised here is caught by code that imported the package.
Where the C module is missing under that name, the package is used.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    import sqlite3 as sqlite3
else:
    try:
        import _sqlite3 as sqlite3
    except ImportError:  # another interpreter: the package is the module
        import sqlite3

__all__ = ["sqlite3"]
