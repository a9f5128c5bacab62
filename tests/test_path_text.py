"""The storage layer's string paths give exactly the text ``pathlib`` gave (issue 27, start-up).

A one-shot command no longer imports ``pathlib``; the root confinement now reads plain strings
(``nbedit._path_text``). Each function is compared with ``pathlib`` itself, and
``RootSource.normalise`` (which decides what is inside the workspace root) with the ``pathlib``
version it replaced, on a tree of links that lead inside, outside and in circles.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from nbedit._path_text import expanduser, normal, relative_to
from nbedit.errors import NbeditError
from nbedit.storage.root_source import RootSource

PIECES = ["", "/", "//", ".", "..", "a", "b.c", "~", " x"]


def texts() -> list[str]:
    found = set()
    for count in range(1, 5):
        for combination in itertools.product(PIECES, repeat=count):
            found.add("".join(combination))
            found.add("/".join(combination))
    return sorted(found)


def test_normal_is_the_text_of_a_path() -> None:
    for text in texts():
        assert normal(text) == str(Path(text)), text


@pytest.mark.parametrize("home", ["/home/someone", "/home/someone/", "/", "", "//odd//home/./x"])
def test_expanduser_is_pathlibs(monkeypatch: pytest.MonkeyPatch, home: str) -> None:
    monkeypatch.setenv("HOME", home)
    for text in [*texts(), "~root/x", "~root", "~nobody-here-at-all/x", "~/a/../b", "~//a"]:
        try:
            expected: str | type[BaseException] = str(Path(normal(text)).expanduser())
        except RuntimeError:
            expected = RuntimeError
        try:
            got: str | type[BaseException] = expanduser(normal(text))
        except RuntimeError:
            got = RuntimeError
        assert got == expected, (home, text)


def test_relative_to_is_pathlibs() -> None:
    roots = ["/", "/a", "/a/b", "/ab"]
    paths = ["/", "/a", "/a/b", "/a/b/c", "/ab", "/ab/c", "/abc", "/b"]
    for root, path in itertools.product(roots, paths):
        try:
            expected: str | None = Path(path).relative_to(root).as_posix()
        except ValueError:
            expected = None
        assert relative_to(path, root) == ("" if expected == "." else expected), (root, path)


def pathlib_normalise(root: Path, real_root: Path, path: str) -> str:
    """``RootSource.normalise`` as it was with ``pathlib`` (the reference)."""
    raw = path.strip()
    if not raw:
        raise ValueError("empty")
    candidate = Path(raw).expanduser()
    full = candidate if candidate.is_absolute() else root / candidate
    resolved = Path(os.path.realpath(full))
    kept = Path(os.path.realpath(full.parent)) / full.name if full.name not in ("", ".", "..") else resolved
    resolved.relative_to(real_root)  # ValueError: outside
    relative = kept.relative_to(real_root)
    if not relative.parts:
        raise ValueError("the root")
    return relative.as_posix()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "a.txt").write_text("a")
    (root / "sub" / "b.txt").write_text("b")
    (tmp_path / "outside" / "c.txt").write_text("c")
    (root / "inner").symlink_to(root / "sub", target_is_directory=True)
    (root / "away").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "file-link").symlink_to(root / "a.txt")
    (root / "out-link").symlink_to(tmp_path / "outside" / "c.txt")
    (root / "loop").symlink_to(root / "loop")
    (root / "dangling").symlink_to(root / "nowhere")
    return root


NAMES = [
    "a.txt", "./a.txt", "a.txt/", "sub//b.txt", "sub/./b.txt", "sub/../a.txt", "sub/deep/../b.txt",
    "inner/b.txt", "inner/../a.txt", "away/c.txt", "away/../root/a.txt", "file-link", "out-link",
    "loop", "loop/x", "dangling", "new.txt", "sub/new/deeper.txt", "..", ".", "sub/..", "../root/a.txt",
    "../outside/c.txt", "/etc/passwd", "//etc/passwd", "~/x", "~", "  a.txt  ", "sub", "inner", "away",
    "x" * 300, "sub/" + "y" * 256, "é/ü.txt",
]


@pytest.mark.parametrize("given", ["relative", "absolute", "trailing-slash", "dot-slash"])
def test_normalise_decides_as_pathlib_did(
    tree: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    monkeypatch.chdir(tree.parent)
    monkeypatch.setenv("HOME", str(tree))  # so "~/x" lands inside the root
    root_text = {
        "relative": "root",
        "absolute": str(tree),
        "trailing-slash": str(tree) + "/",
        "dot-slash": "./root/.",
    }[given]
    source = RootSource(normal(root_text), 1 << 20)
    decided = set()
    names = [*NAMES, str(tree / "a.txt"), str(tree / "away" / "c.txt"), str(tree) + "//sub/b.txt"]
    for name in names:
        try:
            expected: str | None = pathlib_normalise(Path(root_text), Path(os.path.realpath(tree)), name)
        except (ValueError, OSError):
            expected = None
        try:
            got: str | None = source.normalise(name)
        except NbeditError:
            got = None
        if expected is not None and any(len(os.fsencode(part)) > 255 for part in expected.split("/")):
            expected = None  # the name-length refusal comes after the confinement, in both
        assert got == expected, name
        decided.add(expected is None)
    assert decided == {True, False}


def test_the_public_paths_are_still_paths(tmp_path: Path) -> None:
    from nbedit.storage.history import HistoryStore
    from nbedit.workspace import Workspace

    workspace = Workspace(str(tmp_path) + "/./", home=str(tmp_path / "home") + "/")
    assert workspace.root == tmp_path and isinstance(workspace.root, Path)
    assert workspace.home == tmp_path / "home"
    workspace.home = tmp_path / "other"
    assert workspace.home == tmp_path / "other"
    assert workspace._source.real_root == Path(os.path.realpath(tmp_path))  # noqa: SLF001
    with HistoryStore(tmp_path / "home") as store:
        assert store.home == tmp_path / "home" and store.database == tmp_path / "home" / "history.sqlite3"


def test_a_home_set_after_the_history_was_used_is_the_one_used(tmp_path: Path) -> None:
    """``Workspace.home`` is settable: entries recorded after it is set go to the new home (the
    store of the old one is closed), so ``home`` never names a folder the history is not in."""
    from nbedit.storage.history import HistoryStore
    from nbedit.workspace import Workspace

    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "a.py").write_text("x = 1\n")
    workspace = Workspace(tmp_path / "root", home=tmp_path / "first")
    workspace.apply(workspace.plan_edit("a.py", "x = 1", "x = 2"))
    workspace.home = str(tmp_path / "first") + "/"  # the same folder: nothing changes
    assert len(workspace.history()) == 1
    workspace.home = tmp_path / "second"
    workspace.apply(workspace.plan_edit("a.py", "x = 2", "x = 3"))
    assert [entry.summary for entry in workspace.history()] == ["a.py"]  # the new home's one entry
    workspace.close()
    for home in ("first", "second"):
        with HistoryStore(tmp_path / home) as store:
            assert len(store.entries()) == 1, home
