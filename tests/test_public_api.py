"""The curated public surface: every exported name resolves, the list is sorted, imports stay light."""

from __future__ import annotations

import subprocess
import sys

import nbedit


def test_all_names_resolve_and_are_sorted() -> None:
    assert nbedit.__all__ == sorted(nbedit.__all__)
    for name in nbedit.__all__:
        assert getattr(nbedit, name) is not None, name


def test_every_error_shares_the_root() -> None:
    for name in nbedit.__all__:
        value = getattr(nbedit, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, nbedit.NbeditError), name


def test_importing_nbedit_does_not_load_front_ends_or_storage() -> None:
    code = (
        "import sys, nbedit; heavy = [m for m in ('IPython', 'ipywidgets', 'nbformat', 'sqlite3', 'rapidfuzz', "
        "'rich', 'nbedit.workspace') if m in sys.modules]; print(heavy)"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


def test_the_lazily_loaded_names_resolve_and_are_listed() -> None:
    """``import nbedit`` loads neither the models nor the errors; they resolve on first use."""
    import subprocess
    import sys

    script = (
        "import sys, nbedit\n"
        "assert 'nbedit.engine.models' not in sys.modules and 'nbedit.errors' not in sys.modules\n"
        "from nbedit import NoMatch, Plan\n"
        "assert NoMatch.__module__ == 'nbedit.errors' and Plan.__module__ == 'nbedit.engine.models'\n"
        "assert {'NoMatch', 'Plan', 'Workspace'} <= set(dir(nbedit))\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_every_error_class_is_public() -> None:
    """The lazy name lists in nbedit/__init__.py must not fall behind the error tree."""
    import inspect

    import nbedit
    from nbedit import errors

    classes = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, errors.NbeditError)
    }
    assert classes <= set(nbedit.__all__)
    for name in nbedit.__all__:
        assert getattr(nbedit, name) is not None
