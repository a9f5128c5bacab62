"""The history's sqlite3 module loads without ``functools`` in a process that has not loaded it
(``nbedit/storage/sqlite.py``): the C module gets a stand-in for its one import, whose
``lru_cache`` is the C cache ``functools.lru_cache`` makes, and the real ``functools`` is what any
later import gets. Each case runs in a fresh interpreter, where that is the state nbedit meets."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(code: str, cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    program = [sys.executable, "-c", textwrap.dedent(code)]
    completed = subprocess.run(program, cwd=cwd, capture_output=True, text=True, env=env, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_a_fresh_process_loads_sqlite_without_functools_and_its_statement_cache_works(tmp_path: Path) -> None:
    out = _run(
        """
        import sys
        from nbedit.storage.sqlite import sqlite3
        print("functools" in sys.modules, "collections" in sys.modules)
        connection = sqlite3.connect(":memory:")
        connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
        for round_ in range(3):  # the same statements again and again: served by the cache
            for k in range(300):  # more distinct statements than the cache holds (128): evictions
                connection.execute(f"INSERT OR REPLACE INTO t (k, v) VALUES (?, ?) -- {k % 200}", (k, str(round_)))
        print(connection.execute("SELECT count(*), min(v), max(v) FROM t").fetchone())
        import functools  # the real module, not the stand-in
        print(sys.modules["functools"] is functools, hasattr(functools, "reduce"), functools.__spec__ is not None)
        import sqlite3 as package
        print(package.Connection is sqlite3.Connection, package.Error is sqlite3.Error)
        """,
        tmp_path,
    )
    assert out.split("\n")[:4] == [
        "False False",
        "(300, '2', '2')",
        "True True True",
        "True True",
    ]


def test_with_another_thread_or_functools_loaded_the_module_is_imported_as_it_is(tmp_path: Path) -> None:
    out = _run(
        """
        import _thread, sys, time
        started = _thread.allocate_lock()
        started.acquire()
        def wait():
            started.release()
            time.sleep(2)
        _thread.start_new_thread(wait, ())
        started.acquire()
        from nbedit.storage.sqlite import sqlite3
        import functools
        print("functools" in sys.modules, functools.lru_cache.__module__)
        """,
        tmp_path,
    )
    assert out.split("\n")[0] == "True functools"
    out = _run(
        """
        import functools, sys
        from nbedit.storage.sqlite import sqlite3
        print(sys.modules["functools"] is functools, sqlite3.connect(":memory:").execute("SELECT 7").fetchone())
        """,
        tmp_path,
    )
    assert out.split("\n")[0] == "True (7,)"


def test_a_fresh_process_records_lists_and_undoes_with_the_stand_in(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.py").write_text("x = 1\ny = 2\n")
    seeding = f"""
        import nbedit
        workspace = nbedit.Workspace({str(root)!r}, history=True, home={str(tmp_path / "home")!r})
        workspace.apply(workspace.plan_edit("a.py", "y = 2", "y = 20"))
        workspace.close()
        """
    _run(seeding, tmp_path)  # an existing home, as a second process finds it
    out = _run(
        f"""
        import sys
        import nbedit
        workspace = nbedit.Workspace({str(root)!r}, history=True, home={str(tmp_path / "home")!r})
        for value in range(2, 6):  # diffs whose hunks stand where they say: no matcher (it loads enum)
            diff = f"--- a/a.py\\n+++ b/a.py\\n@@ -1,2 +1,2 @@\\n-x = {{value - 1}}\\n+x = {{value}}\\n y = 20\\n"
            workspace.apply(workspace.plan_patch(diff))
        print("functools" in sys.modules)
        print(len(workspace.history(all_sessions=True)))
        workspace.undo()
        workspace.undo()
        print(open({str(root / "a.py")!r}).read().replace(chr(10), "|"))
        """,
        tmp_path,
    )
    lines = out.split("\n")
    assert lines[:3] == ["False", "5", "x = 3|y = 20|"]  # the workspace loaded the store with the stand-in


def test_a_c_module_that_asks_the_stand_in_for_more_is_loaded_again_with_the_real_functools(
    tmp_path: Path,
) -> None:
    """Another Python's C module may want more of ``functools`` than ``lru_cache``: asking the stand-in
    raises AttributeError, and the module is imported again with the real one (here a stand-in
    ``_sqlite3`` that reads ``functools.wraps`` when it loads, found before the real one)."""
    out = _run(
        """
        import sys
        from importlib.machinery import ModuleSpec

        class Loader:
            loads = 0
            def create_module(self, spec):
                return None
            def exec_module(self, module):
                Loader.loads += 1
                import functools
                module.wraps = functools.wraps  # the stand-in has no wraps: AttributeError
                module.connect = "a stand-in _sqlite3"

        class Finder:
            @staticmethod
            def find_spec(name, path=None, target=None):
                return ModuleSpec(name, Loader()) if name == "_sqlite3" else None

        sys.meta_path.insert(0, Finder)
        from nbedit.storage.sqlite import sqlite3
        import functools
        print(Loader.loads, sqlite3.connect, sqlite3.wraps is functools.wraps, hasattr(functools, "reduce"))
        """,
        tmp_path,
    )
    assert out.split("\n")[0] == "2 a stand-in _sqlite3 True True"
