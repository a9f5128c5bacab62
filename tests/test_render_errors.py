"""Errors from real refusals, rendered as HTML and rich panels with their structured parts."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from nbedit import AmbiguousMatch, NbeditError, NoMatch, PatchSyntaxError, StaleFile, Workspace
from nbedit.render.errors import error_facts, error_panel, error_to_html


def _raised(call) -> NbeditError:  # type: ignore[no-untyped-def]
    with pytest.raises(NbeditError) as caught:
        call()
    return caught.value


def _panel_text(error: NbeditError) -> str:
    console = Console(record=True, width=140, color_system=None)
    console.print(error_panel(error))
    return console.export_text()


def test_no_match_shows_candidates_with_their_diffs(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"def total(items):\n    return sum(items)\n\nprint(1)\n")
    workspace = Workspace(tmp_path)
    error = _raised(lambda: workspace.plan_edit("a.py", "def total(things):\n    return sum(things)\n", "x"))
    assert isinstance(error, NoMatch) and error.candidates
    facts = error_facts(error)
    assert "closest candidates" not in facts.message
    assert len(facts.diffs) == len(error.candidates)
    html = error_to_html(error)
    assert "NoMatch" in html and error.candidates[0].describe() in html
    assert '<tr class="r"><td>-def total(things):</td></tr>' in html
    text = _panel_text(error)
    assert "NoMatch: a.py" in text and "-def total(things):" in text and "+def total(items):" in text


def test_ambiguous_match_lists_locations(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"x = 1\ny = 2\nx = 1\n")
    error = _raised(lambda: Workspace(tmp_path).plan_edit("a.py", "x = 1", "x = 2"))
    assert isinstance(error, AmbiguousMatch)
    html = error_to_html(error)
    assert "<li>line 1, column 1</li>" in html and "<li>line 3, column 1</li>" in html
    # each surface spells the option its own way: magics (HTML) and CLI (panel) --replace-all, Python str()
    assert "--replace-all" in html and "replace_all" not in html
    assert "--replace-all" in _panel_text(error) and "replace_all=True" in str(error)
    assert "line 3, column 1" in _panel_text(error)


def test_syntax_error_shows_line_and_hint(tmp_path: Path) -> None:
    error = _raised(
        lambda: Workspace(tmp_path).plan_patch(
            "*** Begin Patch\n*** Update File: a.py\nnot a hunk line\n*** End Patch\n"
        )
    )
    assert isinstance(error, PatchSyntaxError) and error.line is not None
    facts = error_facts(error)
    assert ("line", str(error.line)) in facts.details
    if error.hint:
        assert ("hint", error.hint) in facts.details
        assert "hint:" not in facts.message
    assert f"<b>line</b>: {error.line}" in error_to_html(error)


def test_stale_file_shows_what_changed(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_bytes(b"one\ntwo\n")
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_edit("a.txt", "one", "ONE")
    target.write_bytes(b"one\ntwo\nthree\n")
    error = _raised(lambda: workspace.apply(plan))
    assert isinstance(error, StaleFile)
    assert target.read_bytes() == b"one\ntwo\nthree\n"
    html = error_to_html(error)
    assert "what changed on disk" in html and '<tr class="a"><td>+three</td></tr>' in html


def test_html_panel_escapes_the_message(tmp_path: Path) -> None:
    error = NbeditError("<img src=x onerror=alert(1)> & more", path="<p>.txt")
    html = error_to_html(error)
    assert "<img" not in html and "&lt;img" in html and "&lt;p&gt;.txt" in html


def test_option_spelling_per_surface_and_file_text_that_looks_like_a_token() -> None:
    from nbedit.errors import NbeditError, option, spell

    error = NbeditError(f"pass {option('replace_all')} or {option('cell')}; file says \ue000nope\ue001")
    assert str(error) == "pass replace_all=True or cell=ID_OR_INDEX; file says \ue000nope\ue001"
    assert error.spelled("cli") == "pass --replace-all or --cell ID|INDEX; file says \ue000nope\ue001"
    assert error.spelled("magic").startswith("pass --replace-all or --cell ID|INDEX")
    assert spell("plain text", "cli") == "plain text"
    with pytest.raises(KeyError):
        option("no_such_option")
