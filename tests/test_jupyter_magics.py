"""The magics in a real IPython shell: cells go through ``shell.run_cell`` (transformers included)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import nbformat
import pytest
import test_jupyter_support
from IPython.core.error import UsageError
from test_jupyter_support import history_entries, run

import nbedit
from nbedit.errors import NoMatch, NotebookError
from nbedit.jupyter import transformer
from nbedit.jupyter.review import ErrorView, ReviewWidget
from nbedit.warnings import NbeditWarning

ipython = test_jupyter_support.ipython  # the shared fixtures
shell = test_jupyter_support.shell


def block(old: str, new: str) -> str:
    return f"<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n"


# ---------------------------------------------------------------- byte-exact bodies

# (file before, SEARCH text, REPLACE text): each carries something IPython's input
# transformers would rewrite if the body were not passed through untouched.
BODIES = {
    "doctest prompts": (
        "def f():\n    '''\n    >>> f()\n    1\n    '''\n",
        "    >>> f()\n    1\n",
        "    >>> f()\n    2\n",
    ),
    "doctest at column 0": (">>> x = 1\n... y = 2\n", ">>> x = 1\n... y = 2\n", ">>> x = 10\n... y = 20\n"),
    "ipython prompts": ("In [1]: a = 1\n   ...: b = 2\n", "In [1]: a = 1\n", "In [2]: a = 3\n"),
    "dollar and braces": ("s = f'{x}'\nt = '$x'\n", "s = f'{x}'\nt = '$x'\n", "s = f'{y}'\nt = '$y {z}'\n"),
    "percent lines": ("%matplotlib inline\n%%time\n", "%matplotlib inline\n", "%matplotlib widget\n!ls\n"),
    "leading indentation": (
        "        deep = 1\n        deeper = 2\n",
        "        deep = 1\n",
        "        deep = 10\n",
    ),
    "trailing whitespace": ("a = 1   \nb = 2\t\n", "a = 1   \n", "a = 2 \t \n"),
    "question marks": ("x = 1\n", "x = 1\n", "x?\nx??\n"),
}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_edit_body_arrives_byte_exact(shell: Any, tmp_path: Path, name: str) -> None:
    before, old, new = BODIES[name]
    target = tmp_path / "target.txt"
    target.write_bytes(before.encode())
    widget = run(shell, "%%edit target.txt --yes\n" + block(old, new))
    assert isinstance(widget, ReviewWidget), widget
    assert widget.status == "applied", widget.plain_text()
    assert target.read_bytes() == before.replace(old, new, 1).encode()


def test_whole_body_indented_is_not_dedented(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "t.py"
    target.write_bytes(b"    x = 1\n    y = 2\n")
    body = "    <<<<<<< SEARCH\n    x = 1\n    =======\n    x = 3\n    >>>>>>> REPLACE\n"
    run(shell, f"%%edit t.py --yes\n{body}")
    assert target.read_bytes() == b"    x = 3\n    y = 2\n"


def test_patch_body_with_prompts_arrives_byte_exact(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "doc.txt"
    target.write_bytes(b">>> 1 + 1\n2\n")
    diff = "--- a/doc.txt\n+++ b/doc.txt\n@@ -1,2 +1,2 @@\n->>> 1 + 1\n-2\n+>>> 1 + 2\n+3\n"
    widget = run(shell, f"%%patch --yes\n{diff}")
    assert widget.status == "applied", widget.plain_text()
    assert target.read_bytes() == b">>> 1 + 2\n3\n"


def test_leading_blank_lines_before_the_magic(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "t.txt"
    target.write_bytes(b">>> a\n")
    run(shell, "\n\n%%edit t.txt --yes\n" + block(">>> a\n", ">>> b\n"))
    assert target.read_bytes() == b">>> b\n"


def test_without_the_transformer_ipython_mangles_the_body(shell: Any) -> None:
    """The reason the transformer exists: IPython alone strips prompts from the body."""
    body = ">>> a\n" + block(">>> a\n", ">>> b\n")
    transformer.uninstall(shell)
    try:
        code = shell.input_transformer_manager.transform_cell("%%edit t.txt\n" + body)
    finally:
        transformer.install(shell)
    assert _call_arguments(code)[2] != body
    assert _call_arguments(shell.input_transformer_manager.transform_cell("%%edit t.txt\n" + body))[2] == body


# ---------------------------------------------------------------- the transformer itself


def _call_arguments(code: str) -> tuple[str, ...]:
    call = ast.parse(code).body[0].value  # type: ignore[attr-defined]
    assert ast.unparse(call.func) == "get_ipython().run_cell_magic"
    return tuple(ast.literal_eval(argument) for argument in call.args)


@pytest.mark.parametrize("magic", ["edit", "patch"])
def test_transform_cell_passes_the_raw_body(shell: Any, magic: str) -> None:
    body = "In [1]: x\n>>> y\n... z\n  indented  \n$a {b} %c\n\x0c\u2028end"
    code = shell.input_transformer_manager.transform_cell(f"%%{magic} path.py --yes  \n{body}")
    assert _call_arguments(code) == (magic, "path.py --yes", body + "\n")


def test_transformer_leaves_other_cells_alone() -> None:
    for cell in (["x = 1\n"], ["%%editor\n", ">>> x\n"], ["%%edit?\n"], ["%%time\n", ">>> x\n"], []):
        assert transformer.raw_cell_magic(list(cell)) == cell


def test_check_complete_still_treats_edit_as_a_cell_magic(shell: Any) -> None:
    manager = shell.input_transformer_manager
    assert manager.check_complete("%%edit f.py\n<<<<<<< SEARCH\n")[0] == "incomplete"
    assert manager.check_complete("%%edit f.py\nx\n\n")[0] == "complete"


def test_transformer_is_first(shell: Any) -> None:
    assert shell.input_transformer_manager.cleanup_transforms[0] is transformer.raw_cell_magic


# ---------------------------------------------------------------- recording


def test_history_entry_carries_cell_number_session_and_origin(
    shell: Any, tmp_path: Path, nbedit_home: Path
) -> None:
    (tmp_path / "f.py").write_bytes(b"a = 1\n")
    count = shell.execution_count
    widget = run(shell, "%%edit f.py --yes\n" + block("a = 1\n", "a = 2\n"))
    (entry,) = history_entries(nbedit_home)
    assert entry.id == widget.entry_id
    assert entry.execution_count == count
    assert entry.origin == "magic"
    assert entry.session == widget.workspace.session


def test_unstored_run_records_no_cell_number(shell: Any, tmp_path: Path, nbedit_home: Path) -> None:
    (tmp_path / "f.py").write_bytes(b"a = 1\n")
    run(shell, "%%edit f.py --yes\n" + block("a = 1\n", "a = 2\n"), store_history=False)
    (entry,) = history_entries(nbedit_home)
    assert entry.execution_count is None


def test_session_is_taken_from_the_environment(
    shell: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NBEDIT_SESSION", "my-session")
    (tmp_path / "f.py").write_bytes(b"a = 1\n")
    widget = run(shell, "%%edit f.py\n" + block("a = 1\n", "a = 2\n"))
    assert widget.workspace.session == "my-session"


# ---------------------------------------------------------------- options


def test_dry_run_previews_only(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    target.write_bytes(b"a = 1\n")
    widget = run(shell, "%%edit f.py --dry-run\n" + block("a = 1\n", "a = 2\n"))
    assert widget.status == "preview"
    assert widget.buttons["apply"].disabled and widget.buttons["reject"].disabled
    widget.apply()
    widget.buttons["apply"].click()
    assert widget.status == "preview"
    assert target.read_bytes() == b"a = 1\n"


def test_without_yes_nothing_is_written_until_apply(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    target.write_bytes(b"a = 1\n")
    widget = run(shell, "%%edit f.py\n" + block("a = 1\n", "a = 2\n"))
    assert widget.status == "pending"
    assert target.read_bytes() == b"a = 1\n"
    widget.apply()
    assert target.read_bytes() == b"a = 2\n"


def test_root_option(shell: Any, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "f.py").write_bytes(b"a = 1\n")
    shell.user_ns["project_root"] = str(folder)
    run(shell, "%%edit f.py --root {project_root} --yes\n" + block("a = 1\n", "a = 2\n"))
    assert (folder / "f.py").read_bytes() == b"a = 2\n"


def test_exact_refuses_a_near_match(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    target.write_bytes(b"a = 1   \n")
    view = run(shell, "%%edit f.py --exact\n" + block("a = 1\n", "a = 2\n"))
    assert isinstance(view, ErrorView) and isinstance(view.error, NoMatch)
    with pytest.raises(NoMatch):  # unattended: the cell fails
        run(shell, "%%edit f.py --exact --yes\n" + block("a = 1\n", "a = 2\n"))
    assert target.read_bytes() == b"a = 1   \n"
    widget = run(shell, "%%edit f.py --yes\n" + block("a = 1\n", "a = 2\n"))
    assert widget.status == "applied"


def test_cell_option_limits_a_notebook_edit(shell: Any, tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("x = 1\ny = 2")]
    nbformat.write(notebook, tmp_path / "n.ipynb")
    widget = run(shell, "%%edit n.ipynb --cell 1 --yes\n" + block("x = 1\n", "x = 5\n"))
    assert widget.status == "applied", widget.plain_text()
    cells = nbformat.read(tmp_path / "n.ipynb", as_version=4).cells
    assert [cell.source for cell in cells] == ["x = 1", "x = 5\ny = 2"]


def test_overwrite_option_of_patch(shell: Any, tmp_path: Path) -> None:
    (tmp_path / "new.txt").write_bytes(b"old\n")
    patch = "*** Begin Patch\n*** Add File: new.txt\n+fresh\n*** End Patch\n"
    view = run(shell, f"%%patch\n{patch}")
    assert isinstance(view, ErrorView) and "--overwrite" in view._repr_mimebundle_()["text/plain"]
    assert (tmp_path / "new.txt").read_bytes() == b"old\n"
    widget = run(shell, f"%%patch --overwrite --yes\n{patch}")
    assert widget.status == "applied"
    assert (tmp_path / "new.txt").read_bytes() == b"fresh\n"


def test_config_sets_kernel_defaults(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    target.write_bytes(b"a = 1   \n")
    shown = run(shell, "%nbedit config")
    assert "exact=False" in repr(shown)
    assert "exact=True" in repr(run(shell, "%nbedit config --exact"))
    try:
        view = run(shell, "%%edit f.py\n" + block("a = 1\n", "a = 2\n"))
        assert isinstance(view, ErrorView)
        assert target.read_bytes() == b"a = 1   \n"
    finally:
        run(shell, "%nbedit config --no-exact")
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "g.py").write_bytes(b"b = 1\n")
    run(shell, f"%nbedit config --root {folder} --threshold 0.95")
    try:
        run(shell, "%%edit g.py --yes\n" + block("b = 1\n", "b = 2\n"))
    finally:
        run(shell, "%nbedit config --root ''")
    assert (folder / "g.py").read_bytes() == b"b = 2\n"


# ---------------------------------------------------------------- errors


def test_no_match_is_an_error_view_not_a_traceback(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    target.write_bytes(b"alpha = 1\nbeta = 2\n")
    view = run(shell, "%%edit f.py\n" + block("something_else(42)\n", "x\n"))
    assert isinstance(view, ErrorView)
    bundle = view._repr_mimebundle_()
    assert "NoMatch" in bundle["text/plain"] and "f.py" in bundle["text/plain"]
    assert "nb-error" in bundle["text/html"]
    assert target.read_bytes() == b"alpha = 1\nbeta = 2\n"


def test_ambiguous_match_is_an_error_view(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    target.write_bytes(b"x = 1\nx = 1\n")
    view = run(shell, "%%edit f.py\n" + block("x = 1\n", "x = 2\n"))
    assert type(view.error).__name__ == "AmbiguousMatch"
    bundle = view._repr_mimebundle_()
    assert "line 2" in bundle["text/html"]
    # the hint is spelled the way the magics spell the option
    for shown in (bundle["text/plain"], bundle["text/html"]):
        assert "--replace-all" in shown and "replace_all=True" not in shown
    assert target.read_bytes() == b"x = 1\nx = 1\n"


def test_patch_syntax_error_is_an_error_view(shell: Any, tmp_path: Path) -> None:
    view = run(shell, "%%patch\n*** Begin Patch\n*** Frobnicate File: x\n*** End Patch\n")
    assert isinstance(view, ErrorView)
    assert type(view.error).__name__ == "PatchSyntaxError"


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("%%edit f.py --bogus\n" + block("a\n", "b\n"), "usage: %%edit"),
        ("%%edit\n" + block("a\n", "b\n"), "usage: %%edit"),
        ("%%edit f.py --threshold high\n" + block("a\n", "b\n"), "usage: %%edit"),
        ("%%edit f.py --threshold 1.5\n" + block("a\n", "b\n"), "--threshold must be in (0, 1]"),
        ("%%edit f.py --yes --dry-run\n" + block("a\n", "b\n"), "contradict"),
        ("%%edit f.py\nold\nnew\n", "<<<<<<< SEARCH"),
        ("%%edit 'f.py\n" + block("a\n", "b\n"), "usage: %%edit"),
        ("%%patch --nope\nx\n", "usage: %%patch"),
        ("%nbedit", "subcommand"),
        ("%nbedit frobnicate", "unknown subcommand"),
        ("%nbedit restore", "usage: %nbedit restore"),
        ("%nbedit config --threshold 0", "--threshold"),
    ],
)
def test_usage_errors(shell: Any, tmp_path: Path, cell: str, expected: str) -> None:
    (tmp_path / "f.py").write_bytes(b"a\n")
    with pytest.raises(UsageError, match=None) as raised:
        run(shell, cell)
    assert expected in str(raised.value)
    assert (tmp_path / "f.py").read_bytes() == b"a\n"


def test_help(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_cell("%%edit?")
    shown = capsys.readouterr().out
    assert "--replace-all" in shown and "SEARCH" in shown and "--clear-outputs" in shown
    assert "--encoding" in shown


def test_nbedit_help_documents_yes_for_undo_and_restore(
    shell: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_cell("%nbedit?")
    shown = capsys.readouterr().out
    assert "%nbedit undo [ID] [--yes] [--force]" in shown
    assert "%nbedit restore ID [--after] [--yes] [--force]" in shown
    assert "--yes" in shown and "applies at once" in shown


def test_encoding_option_of_the_magics(shell: Any, tmp_path: Path) -> None:
    data = "Привет мир\nalpha\n".encode("cp1251")  # cp1251 is never detected: it must be declared
    (tmp_path / "ru.txt").write_bytes(data)
    view = run(shell, "%%edit ru.txt\n" + block("alpha\n", "beta\n"))
    assert isinstance(view, ErrorView) and "--encoding NAME" in view._repr_mimebundle_()["text/plain"]
    widget = run(shell, "%%edit ru.txt --encoding cp1251 --yes\n" + block("alpha\n", "beta\n"))
    assert widget.status == "applied"
    assert (tmp_path / "ru.txt").read_bytes() == data.replace(b"alpha", b"beta")


# ---------------------------------------------------------------- the running notebook


def test_running_notebook_is_guarded(shell: Any, tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1")]
    path = tmp_path / "me.ipynb"
    nbformat.write(notebook, path)
    before = path.read_bytes()
    shell.user_ns["__session__"] = str(path)
    with pytest.raises(NotebookError):  # unattended: the cell fails
        run(shell, "%%edit me.ipynb --yes\n" + block("x = 1\n", "x = 2\n"))
    widget = run(shell, "%%edit me.ipynb\n" + block("x = 1\n", "x = 2\n")).apply()
    assert widget.status == "error"
    assert isinstance(widget.error, NotebookError)
    assert "running" in widget.detail_html or "this kernel" in widget.detail_html
    assert path.read_bytes() == before
    with pytest.warns(NbeditWarning):
        forced = run(shell, "%%edit me.ipynb --yes --force\n" + block("x = 1\n", "x = 2\n"))
    assert forced.status == "applied"
    assert nbformat.read(path, as_version=4).cells[0].source == "x = 2"


def test_view_shows_the_cell_view(shell: Any, tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_markdown_cell("# T")]
    nbformat.write(notebook, tmp_path / "n.ipynb")
    shown = run(shell, "%nbedit view n.ipynb")
    bundle = shown._repr_mimebundle_()
    assert "x = 1" in bundle["text/plain"] and "# T" in bundle["text/plain"]
    assert "<pre>" in bundle["text/html"]
    missing = run(shell, "%nbedit view nothing.ipynb")
    assert isinstance(missing, ErrorView)


# ---------------------------------------------------------------- load / unload


def _footprint(ipython: Any) -> dict[str, Any]:
    manager = ipython.magics_manager
    return {
        "cell": sorted(name for name in manager.magics["cell"] if name in ("edit", "patch")),
        "line_nbedit": "nbedit" in manager.magics["line"],
        "edit_line_magic": manager.magics["line"].get("edit"),
        "registry": sorted(manager.registry),
        "transformers": list(ipython.input_transformer_manager.cleanup_transforms),
        "pre_run_cell": list(ipython.events.callbacks["pre_run_cell"]),
        "post_run_cell": list(ipython.events.callbacks["post_run_cell"]),
        "configurables": len(ipython.configurables),
    }


def test_unload_and_reload_leave_nothing_behind(ipython: Any) -> None:
    ipython.run_cell("%unload_ext nbedit")
    baseline = _footprint(ipython)
    assert baseline["cell"] == []
    for _ in range(3):
        assert ipython.run_cell("%load_ext nbedit").success
        loaded = _footprint(ipython)
        assert loaded["cell"] == ["edit", "patch"] and loaded["line_nbedit"]
        assert loaded["transformers"].count(transformer.raw_cell_magic) == 1
        assert len(loaded["pre_run_cell"]) == len(baseline["pre_run_cell"]) + 1
        assert ipython.run_cell("%reload_ext nbedit").success
        reloaded = _footprint(ipython)
        for key in ("pre_run_cell", "post_run_cell"):  # a new tracker's bound methods, as many as before
            assert len(reloaded.pop(key)) == len(loaded[key])
        assert reloaded == {key: value for key, value in loaded.items() if not key.endswith("run_cell")}
        assert ipython.run_cell("%unload_ext nbedit").success
        assert _footprint(ipython) == baseline


def test_quoted_path_with_spaces(shell: Any, tmp_path: Path) -> None:
    (tmp_path / "my file.py").write_bytes(b"a = 1\n")
    run(shell, '%%edit "my file.py" --yes\n' + block("a = 1\n", "a = 2\n"))
    assert (tmp_path / "my file.py").read_bytes() == b"a = 2\n"


def test_replace_all(shell: Any, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_bytes(b"x = 1\ny = 2\nx = 1\n")
    widget = run(shell, "%%edit f.py --replace-all --yes\n" + block("x = 1\n", "x = 5\n"))
    assert widget.status == "applied"
    assert (tmp_path / "f.py").read_bytes() == b"x = 5\ny = 2\nx = 5\n"


def test_without_replace_all_two_places_are_refused(shell: Any, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_bytes(b"x = 1\nx = 1\n")
    view = run(shell, "%%edit f.py\n" + block("x = 1\n", "x = 5\n"))
    assert view.status == "error" and isinstance(view.error, nbedit.AmbiguousMatch)
    assert (tmp_path / "f.py").read_bytes() == b"x = 1\nx = 1\n"


def test_clear_outputs_option(shell: Any, tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1", execution_count=3)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="old output\n")]
    notebook.cells = [cell]
    nbformat.write(notebook, tmp_path / "n.ipynb")
    run(shell, "%%edit n.ipynb --yes\n" + block("x = 1\n", "x = 2\n"))
    (kept,) = nbformat.read(tmp_path / "n.ipynb", as_version=4).cells
    assert kept.source == "x = 2" and kept.outputs
    run(shell, "%%edit n.ipynb --clear-outputs --yes\n" + block("x = 2\n", "x = 3\n"))
    (cleared,) = nbformat.read(tmp_path / "n.ipynb", as_version=4).cells
    assert cleared.source == "x = 3" and cleared.outputs == [] and cleared.execution_count is None


def test_no_kernel_means_no_kernel_session(monkeypatch: pytest.MonkeyPatch) -> None:
    from nbedit.jupyter import kernel

    monkeypatch.delenv("NBEDIT_SESSION", raising=False)
    assert kernel.kernel_id() is None and kernel.session_id() is None
    assert kernel._CONNECTION_FILE.search("kernel-4f2a-91.json").group("id") == "4f2a-91"


# ---------------------------------------------------------------- a whole model reply, the file in scope


def test_edit_reads_a_whole_reply_with_a_source_tag_and_no_path(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    target.write_bytes(b"a = 1\nb = 2\n")
    reply = (
        "Here is the change:\n\n<source>python\n"
        + block("b = 2\n", "b = 3\n")
        + "</source>\n\nThat is all.\n"
    )
    widget = run(shell, "%%edit f.py --yes\n" + reply)
    assert isinstance(widget, ReviewWidget) and widget.status == "applied", widget
    assert target.read_bytes() == b"a = 1\nb = 3\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["f.py"]


def test_edit_takes_the_hunks_of_a_diff_for_its_file(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    target.write_bytes(b"def f():\n    return 1\n")
    reply = "```diff\n@@ ... @@\n def f():\n-    return 1\n+    return 2\n```\n"
    widget = run(shell, "%%edit f.py --yes\n" + reply)
    assert isinstance(widget, ReviewWidget) and widget.status == "applied", widget
    assert target.read_bytes() == b"def f():\n    return 2\n"
    with pytest.raises(UsageError, match="@@ hunks"):
        shell.run_cell_magic("edit", "f.py", "just prose\n")
    assert target.read_bytes() == b"def f():\n    return 2\n"
