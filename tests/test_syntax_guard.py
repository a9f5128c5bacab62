"""The syntax guard: a leniently placed change never leaves Python, JSON or a Python cell unparseable."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from nbedit import UnsafeChange, Workspace
from nbedit.engine.models import Tier
from nbedit.engine.syntax import notebook_problem, text_problem

CLASS = (
    "class A:\n"
    "    def f(self):\n"
    "        if x:\n"
    '            print("hello")\n'
    "        return 1\n"
    "\n"
    "    def g(self):\n"
    '        """Doc\n'
    "at column 0 inside a string\n"
    '        """\n'
    "        return 2\n"
)


def test_a_leniently_placed_change_that_breaks_python_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text(CLASS)
    workspace = Workspace(tmp_path, history=False)
    # 2 spaces shallower than the file (the indentation tier), and the new line is a dedent too far
    old = '  if x:\n      print("hello")\n'
    new = '  if x:\n      print("hello")\n    y = 2\n'
    with pytest.raises(UnsafeChange) as caught:
        workspace.plan_edit("a.py", old, new)
    assert "the result would not parse: line 5: IndentationError" in str(caught.value)
    assert caught.value.line == 5
    assert target.read_text() == CLASS


def test_the_same_change_at_the_right_depth_is_written(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(CLASS)
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_edit("a.py", '  if x:\n      print("hello")\n', '  if x:\n      print("hello")\n  y = 2\n')
    assert plan.files[0].hunks[0].tier is Tier.INDENTATION
    workspace.apply(plan)
    assert (tmp_path / "a.py").read_text() == CLASS.replace('("hello")\n', '("hello")\n        y = 2\n')


def test_an_exact_change_that_breaks_parsing_is_written_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(CLASS)
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_edit("a.py", 'print("hello")', 'print("hello"')
    assert any(note.startswith("warning: the result would not parse: line 4") for note in plan.files[0].notes)
    workspace.apply(plan)
    assert 'print("hello"\n' in (tmp_path / "a.py").read_text()


def test_a_file_that_did_not_parse_is_not_guarded(tmp_path: Path) -> None:
    broken = CLASS + "def broken(:\n    pass\n"
    (tmp_path / "a.py").write_text(broken)
    plan = Workspace(tmp_path, history=False).plan_edit("a.py", "print(\u201chello\u201d)", "print(\u201chello\u201d")
    assert plan.files[0].hunks[0].tier is Tier.UNICODE
    assert 'print("hello"\n' in plan.files[0].after


def test_a_string_at_column_0_falls_back_to_the_whole_file_and_finds_the_line() -> None:
    start = CLASS.index("        return 2")
    end = start + len("        return 2\n")
    assert text_problem("a.py", CLASS, "", [(start, end, "        return 2\n")]) is None
    after = CLASS[:start] + "        return (2\n" + CLASS[end:]
    problem = text_problem("a.py", CLASS, after, [(start, end, "        return (2\n")])
    assert problem is not None and problem.line == 11


def test_json_is_guarded(tmp_path: Path) -> None:
    data = json.dumps({"name": "x", "values": [1, 2, 3]}, indent=2) + "\n"
    (tmp_path / "c.json").write_text(data)
    workspace = Workspace(tmp_path, history=False)
    with pytest.raises(UnsafeChange, match="JSON"):
        # curly quotes in the old text: the unicode tier places it; the new text drops a comma
        workspace.plan_edit("c.json", "\u201cname\u201d: \u201cx\u201d,", '"name": "x"')
    assert (tmp_path / "c.json").read_text() == data


def test_a_python_cell_is_guarded_and_magics_are_not_errors(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("%matplotlib inline\nif x:\n    print('hi')\n    y = 1")]
    nbformat.write(notebook, tmp_path / "n.ipynb")
    data = (tmp_path / "n.ipynb").read_bytes()
    workspace = Workspace(tmp_path, history=False)
    with pytest.raises(UnsafeChange, match="cell 0, line 4"):
        workspace.plan_edit("n.ipynb", "  print('hi')\n  y = 1", "  print('hi')\ny = 1\n  z = 2")
    assert (tmp_path / "n.ipynb").read_bytes() == data
    plan = workspace.plan_edit("n.ipynb", "  print('hi')\n  y = 1", "  print('hi')\n  y = 2")
    assert plan.files[0].hunks[0].tier is Tier.INDENTATION


def test_notebook_problem_skips_cell_magics_and_cells_that_never_parsed() -> None:
    assert notebook_problem({0: "%%bash\necho"}, [(0, "%%bash\necho (")]) is None
    assert notebook_problem({0: "x = ("}, [(0, "x = ((")]) is None
    problem = notebook_problem({0: "x = 1"}, [(0, "x = (1")])
    assert problem is not None and problem.where == "cell 0"
