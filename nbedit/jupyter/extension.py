"""``%load_ext nbedit`` / ``%unload_ext nbedit``: everything the extension adds, and takes back.

Loading adds three things to the shell: the magics (``%%edit``, ``%%patch``,
``%nbedit``), the byte-exact cell transformer (``transformer.raw_cell_magic``)
and two cell-tracking event hooks (``kernel.CellTracker``). Unloading removes
exactly those, so ``%reload_ext nbedit`` leaves one copy of each and
``%unload_ext nbedit`` leaves none; the magics' names are only removed when
they still point at our functions (another extension may have taken a name
since).
"""

from __future__ import annotations

from typing import Any

from nbedit.jupyter import transformer
from nbedit.jupyter.kernel import CellTracker

__all__ = ["load", "unload"]

_LOADED: dict[int, tuple[Any, CellTracker]] = {}  # id(shell) -> (magics instance, tracker)


def load(shell: Any) -> None:
    from nbedit.jupyter.magics import NbeditMagics

    unload(shell)
    tracker = CellTracker(shell)
    tracker.register()
    magics = NbeditMagics(shell, tracker=tracker)
    shell.register_magics(magics)
    transformer.install(shell)
    _LOADED[id(shell)] = (magics, tracker)


def unload(shell: Any) -> None:
    transformer.uninstall(shell)
    loaded = _LOADED.pop(id(shell), None)
    if loaded is None:
        return
    magics, tracker = loaded
    tracker.unregister()
    manager = shell.magics_manager
    for kind, names in magics.magics.items():
        table = manager.magics.get(kind, {})
        for name, function in names.items():
            if table.get(name) == function:
                del table[name]
    if manager.registry.get(type(magics).__name__) is magics:
        del manager.registry[type(magics).__name__]
    configurables = getattr(shell, "configurables", None)
    if configurables is not None:
        configurables[:] = [item for item in configurables if item is not magics]
