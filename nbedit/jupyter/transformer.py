"""Deliver ``%%edit`` / ``%%patch`` cell bodies to the magic byte for byte.

IPython rewrites every cell before it runs (``TransformerManager.transform_cell``
in ``IPython/core/inputtransformer2.py``). First the *cleanup* transforms run
on the whole cell: drop leading blank lines, dedent, strip ``>>>``/``...``
doctest prompts and ``In [1]:`` prompts. Only then does the *line* transform
``cell_magic`` turn ``%%name args`` + body into
``get_ipython().run_cell_magic(name, args, body)``. So a body holding a
``>>>>>>> REPLACE`` marker, doctest lines, pasted IPython prompts or a
uniformly indented block reaches the magic already changed (ipython#8791).

A change text must not be edited on its way in, so this module does the
cell-magic conversion itself, first: ``raw_cell_magic`` sits at position 0 of
``cleanup_transforms`` and, for a cell whose first non-blank line names one of
our magics, returns the single ``run_cell_magic`` call line with the body
``repr``-quoted. The later transforms see one ordinary Python line and leave it
alone (no indentation, no prompt, no ``%%``), exactly as they leave the line
IPython's own ``cell_magic`` produces. Any other cell is returned untouched.

``has_side_effects = True`` keeps the transform out of ``check_complete``, so a
terminal still treats a ``%%edit`` cell as IPython treats any cell magic
(complete after a blank line) instead of as one finished Python line.

``transform_cell`` appends a newline to a cell that lacks one before any
transform runs; that is the only change a body can still see.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

__all__ = ["RAW_MAGICS", "install", "installed", "raw_cell_magic", "uninstall"]

RAW_MAGICS = ("edit", "patch")

_HEAD = re.compile(r"%%(?P<name>edit|patch)(?=[ \t\r\n]|$)")


def raw_cell_magic(lines: list[str]) -> list[str]:
    """Turn a ``%%edit``/``%%patch`` cell into its ``run_cell_magic`` call, body untouched."""
    index = next((number for number, line in enumerate(lines) if line.strip()), None)
    if index is None:
        return lines
    found = _HEAD.match(lines[index])
    if found is None:
        return lines
    arguments = lines[index][found.end() :].strip()
    body = "".join(lines[index + 1 :])
    return [f"get_ipython().run_cell_magic({found.group('name')!r}, {arguments!r}, {body!r})\n"]


raw_cell_magic.has_side_effects = True  # type: ignore[attr-defined]


def _transforms(shell: object) -> list[Callable[[list[str]], list[str]]] | None:
    manager = getattr(shell, "input_transformer_manager", None)
    return getattr(manager, "cleanup_transforms", None)


def install(shell: object) -> None:
    """Put ``raw_cell_magic`` first in the shell's cleanup transforms (once)."""
    transforms = _transforms(shell)
    if transforms is None:
        return
    uninstall(shell)
    transforms.insert(0, raw_cell_magic)


def uninstall(shell: object) -> None:
    transforms = _transforms(shell)
    if transforms is None:
        return
    transforms[:] = [transform for transform in transforms if not _is_ours(transform)]


def installed(shell: object) -> bool:
    transforms: Sequence[object] = _transforms(shell) or ()
    return any(_is_ours(transform) for transform in transforms)


def _is_ours(transform: object) -> bool:
    # By name too: a reloaded module makes a new function object, the old one must still go.
    return transform is raw_cell_magic or (
        getattr(transform, "__module__", None) == __name__
        and getattr(transform, "__qualname__", None) == raw_cell_magic.__qualname__
    )
