"""The drift corpus's wrong results of 2026-11-27, each a named regression test.

The full drift corpus (``python -m benchmarks.drift_corpus``, 166,901 runs) gave 16 wrong
results on 2026-11-27 that its stratified sample in ``test_drift_corpus.py`` never drew.
Four causes, each refused now with every byte left alone (a refusal is due: a careful
reader cannot tell which of two readings is meant):

- the indentation tier matched an old text that starts with indentation as the tail of a
  file line (``    _slots__`` inside ``    __slots__``): a token cut in two;
- a change that only re-indents, found only by the indentation tier where its new text
  already stands exactly, was called "already applied" (a dedent sent four spaces deep is
  the file's own lines: drifted, or applied, nothing tells which);
- a stub body's ``...`` read as an elision gave a reading whose "already applied" skipped
  the near miss of the old text elsewhere (an overload holding the change);
- and, once those were refused, the run found one more: a doctest's ``...     title: str``
  line, mis-copied at the edge of an old text, dropped as an elision (the file has lines of
  dots right there: they are its text, not an elision).

Each runs through every dialect that produced it; each has a control that must still apply.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbedit.errors import AmbiguousMatch, MatchError, NoMatch
from nbedit.workspace import Workspace

EXIT = (
    "class Exit(RuntimeError):\n"
    '    """Raised to exit."""\n'
    "\n"
    '    __slots__ = ("exit_code",)\n'
    "\n"
    "    def __init__(self, code=0):\n"
    "        self.exit_code = code\n"
)

BISECT = (
    "def insort_left(a, x, lo=0, hi=None, *, key=None):\n"
    '    """Insert item x in list a, and keep it sorted assuming a is sorted.\n'
    "\n"
    "    If x is already in a, insert it to the left of the leftmost x.\n"
    "\n"
    "    Optional args lo (default 0) and hi (default len(a)) bound the\n"
    "    slice of a to be searched.\n"
    '    """\n'
    "    return lo\n"
)

DECORATORS = (
    "@t.overload\n"
    "def group(\n"
    "    name: t.Optional[str] = None,\n"
    "    **attrs: t.Any,\n"
    ") -> t.Callable[[F], Group]:\n"
    "    ...\n"
    "\n"
    "\n"
    "@t.overload\n"
    "def group(\n"
    "    name: t.Callable,\n"
    "    **attrs: t.Any,\n"
    ") -> Group:\n"
    "    ...\n"
    "\n"
    "\n"
    "def group(name=None, **attrs):\n"
    "    return command(name, cls=Group, **attrs)\n"
)


def _workspace(tmp_path: Path, name: str, text: str) -> tuple[Workspace, Path, bytes]:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return Workspace(tmp_path, history=False), path, path.read_bytes()


def _refused(workspace: Workspace, path: Path, before: bytes, attempt, error: type[MatchError]) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(error) as raised:
        attempt()
    assert path.read_bytes() == before
    return str(raised.value)


# ---------------------------------------------------------------- a token cut by the indentation tier


@pytest.mark.parametrize(
    "old",
    [
        '    _slots__ = ("exit_code",)\n\n    def __init__(self, code=0):\n        self.exit_code = code',
        '    slots__ = ("exit_code",)\n',
        '        _slots__ = ("exit_code",)\n',  # deeper, and cut
    ],
)
def test_indented_old_text_never_starts_inside_a_token(tmp_path: Path, old: str) -> None:
    workspace, path, before = _workspace(tmp_path, "exceptions.py", EXIT)
    new = old.replace("code=0", "code: int = 0") + "# typed\n"
    _refused(
        workspace,
        path,
        before,
        lambda: workspace.apply(workspace.plan_edit("exceptions.py", old, new)),
        NoMatch,
    )


def test_indented_old_text_at_another_depth_still_found(tmp_path: Path) -> None:
    workspace, path, _ = _workspace(tmp_path, "exceptions.py", EXIT)
    old = '        __slots__ = ("exit_code",)\n\n        def __init__(self, code=0):\n'
    new = '        __slots__ = ("exit_code",)\n\n        def __init__(self, code: int = 0) -> None:\n'
    workspace.apply(workspace.plan_edit("exceptions.py", old, new))
    assert path.read_text() == EXIT.replace("code=0):", "code: int = 0) -> None:")


def test_old_text_from_mid_line_without_indentation_still_exact(tmp_path: Path) -> None:
    workspace, path, _ = _workspace(tmp_path, "exceptions.py", EXIT)
    workspace.apply(
        workspace.plan_edit("exceptions.py", '_slots__ = ("exit_code",)', '_slots__ = ("exit_code", "note")')
    )
    assert '    __slots__ = ("exit_code", "note")\n' in path.read_text()


# ---------------------------------------------------------------- a re-indent that already stands


DEDENT_OLD = "\n        If x is already in a, insert it to the left of the leftmost x.\n\n"
DEDENT_NEW = "\n    If x is already in a, insert it to the left of the leftmost x.\n\n"


def test_reindent_standing_exactly_where_found_leniently_is_refused_as_edit(tmp_path: Path) -> None:
    workspace, path, before = _workspace(tmp_path, "bisect.py", BISECT)
    message = _refused(
        workspace,
        path,
        before,
        lambda: workspace.apply(workspace.plan_edit("bisect.py", DEDENT_OLD, DEDENT_NEW)),
        AmbiguousMatch,
    )
    assert "indentation" in message and "will not guess" in message


@pytest.mark.parametrize("dialect", ["unified", "search_replace", "apply_patch"])
def test_reindent_standing_exactly_is_refused_in_every_patch_dialect(tmp_path: Path, dialect: str) -> None:
    workspace, path, before = _workspace(tmp_path, "bisect.py", BISECT)
    old_line = "        If x is already in a, insert it to the left of the leftmost x."
    new_line = "    If x is already in a, insert it to the left of the leftmost x."
    if dialect == "unified":
        patch = f"--- a/bisect.py\n+++ b/bisect.py\n@@ -3,3 +3,3 @@\n \n-{old_line}\n+{new_line}\n \n"
    elif dialect == "search_replace":
        patch = f"bisect.py\n<<<<<<< SEARCH\n\n{old_line}\n\n=======\n\n{new_line}\n\n>>>>>>> REPLACE\n"
    else:
        patch = f"*** Begin Patch\n*** Update File: bisect.py\n@@\n \n-{old_line}\n+{new_line}\n \n*** End Patch\n"
    _refused(workspace, path, before, lambda: workspace.apply(workspace.plan_patch(patch)), MatchError)


def test_reindent_control_exact_old_text_applies(tmp_path: Path) -> None:
    # the file holds the old text exactly: the dedent is made
    workspace, path, _ = _workspace(tmp_path, "bisect.py", BISECT)
    old = "\n    If x is already in a, insert it to the left of the leftmost x.\n\n"
    new = "\nIf x is already in a, insert it to the left of the leftmost x.\n\n"
    workspace.apply(workspace.plan_edit("bisect.py", old, new))
    assert "\nIf x is already in a" in path.read_text()


def test_change_of_text_applied_already_at_another_depth_is_still_applied(tmp_path: Path) -> None:
    # not a re-indent: the old text is gone, its new text stands (one level shallower than sent)
    text = BISECT.replace("insert it to the left", "insert it on the left")
    workspace, path, before = _workspace(tmp_path, "bisect.py", text)
    old = (
        "        If x is already in a, insert it to the left of the leftmost x.\n"
        "\n"
        "        Optional args lo (default 0) and hi (default len(a)) bound the\n"
    )
    new = old.replace("insert it to the left", "insert it on the left")
    result = workspace.apply(workspace.plan_edit("bisect.py", old, new))
    assert path.read_bytes() == before
    assert result.already_applied and not result.written


# ---------------------------------------------------------------- a stub's "..." read as an elision


SEARCH_GORUP = (
    "decorators.py\n"
    "<<<<<<< SEARCH\n"
    "    **attrs: t.Any,\n"
    ") -> Gorup:\n"
    "    ...\n"
    "=======\n"
    "    **attrs: t.Any,\n"
    ") -> t.Callable[[F], Group]:\n"
    "    ...\n"
    ">>>>>>> REPLACE\n"
)


def test_stub_body_read_as_elision_is_not_called_applied(tmp_path: Path) -> None:
    workspace, path, before = _workspace(tmp_path, "decorators.py", DECORATORS)
    with pytest.raises(MatchError):
        workspace.plan_patch(SEARCH_GORUP)
    _refused(workspace, path, before, lambda: workspace.apply(workspace.plan_patch(SEARCH_GORUP)), MatchError)


# ---------------------------------------------------------------- a doctest's "..." line read as an elision


TYPING = (
    "def is_typeddict(tp):\n"
    '    """Check if an annotation is a TypedDict class.\n'
    "\n"
    "    For example::\n"
    "\n"
    "        >>> from typing import TypedDict\n"
    "        >>> class Film(TypedDict):\n"
    "        ...     title: str\n"
    "        ...     year: int\n"
    "        ...\n"
    "        >>> add(1,\n"
    "        ...     2)\n"
    "        3\n"
    '    """\n'
)


def test_doctest_dots_line_at_the_end_is_not_an_elision(tmp_path: Path) -> None:
    # the reply's last line mis-copies the file's "...     title: str": dropping it as an
    # elision would apply a change whose context the file does not have
    workspace, path, before = _workspace(tmp_path, "typing_.py", TYPING)
    old = "    For example::\n\n        >>> from typing import TypedDict\n        >>> class Film(TypedDict):\n        ...     titles: str\n"
    new = old.replace("\n        >>> from", "\n    >>> from")
    _refused(
        workspace, path, before, lambda: workspace.apply(workspace.plan_edit("typing_.py", old, new)), NoMatch
    )


def test_doctest_dots_line_at_the_start_is_not_an_elision(tmp_path: Path) -> None:
    workspace, path, before = _workspace(tmp_path, "typing_.py", TYPING)
    old = "        ...     3)\n        3\n"
    new = "        ...     3)\n        4\n"
    _refused(
        workspace, path, before, lambda: workspace.apply(workspace.plan_edit("typing_.py", old, new)), NoMatch
    )


def test_elision_beside_code_lines_is_still_read(tmp_path: Path) -> None:
    workspace, path, _ = _workspace(tmp_path, "g.py", "def f():\n    x = 1\n    y = 2\n    return x + y\n")
    plan = workspace.plan_edit(
        "g.py", "def f():\n    x = 1\n    # ... rest\n", "def f():\n    x = 10\n    # ... rest\n"
    )
    workspace.apply(plan)
    assert path.read_text() == "def f():\n    x = 10\n    y = 2\n    return x + y\n"
