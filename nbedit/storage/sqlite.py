"""The sqlite3 module of the history store, without the package's import-time extras.

``import sqlite3`` runs ``sqlite3/dbapi2.py``, which imports :mod:`datetime` and registers
adapters and converters for dates and times (deprecated since Python 3.12): a few
milliseconds of every ``nbedit apply``, a process started once per edit. The history store
never stores a date object, and everything it uses (``connect``, ``Connection``, ``Error``
and its subclasses) is the C module's own, which the package only re-exports: the same
objects, so ``sqlite3.Error`` raised here is caught by code that imported the package.
Where the C module is missing under that name, the package is used.

The C module itself imports :mod:`functools` when it loads, for one thing: ``lru_cache``, which
makes each connection's cache of prepared statements. ``functools`` imports ``collections``,
``types``, ``reprlib``, ``keyword`` and ``operator``: about a tenth of the instructions of a whole
``nbedit apply`` (callgrind, 10 M of 103 M), in a process that needs none of them. Where nothing
has loaded ``functools`` yet, the C module is given a stand-in for that one import, whose
``lru_cache`` makes the very cache ``functools.lru_cache`` makes (``_functools._lru_cache_wrapper``,
the C cache behind it), and the stand-in is taken out of ``sys.modules`` again at once: a later
``import functools`` anywhere loads the real module. The interpreter's import lock is held
meanwhile, so no other thread can import ``functools`` and get the stand-in. If the C module
asks the stand-in for anything else (another Python), it is loaded again with the real one.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    import sqlite3 as sqlite3
else:
    import sys

    def _load_c_module():
        import _thread

        if "functools" in sys.modules or _thread._count():
            import _sqlite3

            return _sqlite3
        from _functools import _lru_cache_wrapper

        def lru_cache(maxsize=128, typed=False):
            # functools.lru_cache(maxsize)(function), as the C module calls it; what ``cache_info``
            # returns is a plain tuple (hits, misses, maxsize, currsize) (the C module never asks)
            def decorating(function):
                return _lru_cache_wrapper(function, maxsize, typed, _cache_info)

            return decorating

        stand_in = type(sys)("functools", "lru_cache only, while sqlite's C module loads (nbedit)")
        stand_in.lru_cache = lru_cache
        sys.modules["functools"] = stand_in
        try:
            import _sqlite3
        except AttributeError:  # it wanted more of functools than lru_cache: the real one
            _sqlite3 = None
        finally:
            if sys.modules.get("functools") is stand_in:
                del sys.modules["functools"]
        if _sqlite3 is None:
            import _sqlite3
        return _sqlite3

    def _cache_info(*values):
        return values

    try:
        sqlite3 = _load_c_module()
    except ImportError:  # another interpreter: the package is the module
        import sqlite3

__all__ = ["sqlite3"]
