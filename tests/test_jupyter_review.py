"""The review widget driven the way a person (button clicks) and a headless run (.apply()) drive it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_jupyter_support import history_entries

from nbedit.errors import NbeditError, NotebookError
from nbedit.jupyter.review import ErrorView, ReviewWidget
from nbedit.workspace import Workspace

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

TWO_HUNKS = (
    "<<<<<<< SEARCH\nfirst = 1\n=======\nfirst = 10\n>>>>>>> REPLACE\n"
    "<<<<<<< SEARCH\nlast = 9\n=======\nlast = 90\n>>>>>>> REPLACE\n"
)
BEFORE = b"first = 1\n" + b"".join(b"middle%d = 0\n" % n for n in range(10)) + b"last = 9\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "f.py").write_bytes(BEFORE)
    return Workspace(tmp_path, session="review-tests")


def review(workspace: Workspace, text: str = TWO_HUNKS, **options: Any) -> ReviewWidget:
    def plan() -> Any:
        return workspace.plan_patch(text, dialect="search_replace", default_path="f.py")

    return ReviewWidget(workspace, plan(), replan=plan, **options)


def test_apply_button_writes_and_reports_the_entry(
    workspace: Workspace, tmp_path: Path, nbedit_home: Path
) -> None:
    widget = review(workspace)
    assert widget.status == "pending"
    widget.buttons["apply"].click()
    assert widget.status == "applied"
    assert (tmp_path / "f.py").read_bytes() == BEFORE.replace(b"first = 1", b"first = 10").replace(
        b"last = 9", b"last = 90"
    )
    (entry,) = history_entries(nbedit_home)
    assert widget.entry_id == entry.id
    assert "applied" in widget.status_text and entry.id in widget.status_text
    assert widget.buttons["apply"].disabled and widget.buttons["reject"].disabled
    assert all(box.disabled for box in widget.toggles.values())


def test_unticked_hunk_is_not_written(workspace: Workspace, tmp_path: Path) -> None:
    widget = review(workspace)
    assert sorted(widget.toggles) == [(0, 0), (0, 1)]
    widget.toggles[(0, 0)].value = False
    assert widget.selection_text() == "1 of 2 parts selected"
    assert widget.excluded == [[0, 0]]  # the synced state the page draws the unticked hunk from
    assert "first = 10" not in widget.selected_plan().diff
    widget.apply()
    assert (tmp_path / "f.py").read_bytes() == BEFORE.replace(b"last = 9", b"last = 90")


def test_reject_writes_nothing(workspace: Workspace, tmp_path: Path, nbedit_home: Path) -> None:
    widget = review(workspace)
    widget.buttons["reject"].click()
    assert widget.status == "rejected" and "rejected" in widget.status_text
    widget.buttons["apply"].click()
    widget.apply()
    assert widget.status == "rejected"
    assert (tmp_path / "f.py").read_bytes() == BEFORE
    assert history_entries(nbedit_home) == []


def test_double_click_applies_once(workspace: Workspace, tmp_path: Path, nbedit_home: Path) -> None:
    text = "<<<<<<< SEARCH\nlast = 9\n=======\nlast = 9\nlast = 9\n>>>>>>> REPLACE\n"
    widget = review(workspace, text)
    widget.buttons["apply"].click()
    widget.buttons["apply"].click()
    widget.apply()
    assert len(history_entries(nbedit_home)) == 1
    assert (tmp_path / "f.py").read_bytes().count(b"last = 9") == 2


def test_stale_file_is_not_overwritten_and_replan_recovers(workspace: Workspace, tmp_path: Path) -> None:
    widget = review(workspace)
    # next to a changed line: the change cannot be moved onto it by itself (tests/test_rewind_jupyter.py)
    other = BEFORE.replace(b"middle0 = 0", b"middle0 = 'someone else'")
    (tmp_path / "f.py").write_bytes(other)
    widget.buttons["apply"].click()
    assert widget.status == "stale"
    assert "stale" in widget.status_text and widget.review_state == "stale"
    assert "someone else" in widget.detail_html  # what changed on disk, shown in the widget
    assert (tmp_path / "f.py").read_bytes() == other
    assert widget.buttons["replan"].visible and widget.replan_available
    widget.buttons["replan"].click()
    assert widget.status == "pending"
    widget.apply()
    assert widget.status == "applied"
    result = (tmp_path / "f.py").read_bytes()
    assert b"someone else" in result and b"first = 10" in result and b"last = 90" in result


def test_errors_are_shown_in_the_widget(tmp_path: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(notebook, tmp_path / "me.ipynb")
    before = (tmp_path / "me.ipynb").read_bytes()
    workspace = Workspace(tmp_path, running_notebook=str(tmp_path / "me.ipynb"))
    plan = workspace.plan_patch(
        "<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n", default_path="me.ipynb"
    )
    widget = ReviewWidget(workspace, plan)
    widget.buttons["apply"].click()  # a click must not swallow the failure
    assert widget.status == "error"
    assert isinstance(widget.error, NotebookError)
    assert "NotebookError" in widget.status_text and "nb-error" in widget.detail_html
    assert (tmp_path / "me.ipynb").read_bytes() == before
    with pytest.raises(NotebookError):
        ReviewWidget(workspace, plan).apply(raise_errors=True)


def test_unexpected_exceptions_in_callbacks_are_shown(workspace: Workspace, tmp_path: Path) -> None:
    calls = []

    def broken_replan() -> Any:
        calls.append(1)
        raise RuntimeError("replanning exploded")

    widget = ReviewWidget(
        workspace, workspace.plan_patch(TWO_HUNKS, default_path="f.py"), replan=broken_replan
    )
    (tmp_path / "f.py").write_bytes(b"changed\n")
    widget.buttons["apply"].click()
    assert widget.status == "stale"
    widget.buttons["replan"].click()
    assert calls == [1]
    assert widget.status == "error"
    assert "replanning exploded" in widget.detail_html and "traceback" in widget.detail_html
    assert (tmp_path / "f.py").read_bytes() == b"changed\n"


def test_replan_error_from_the_engine(workspace: Workspace, tmp_path: Path) -> None:
    widget = review(workspace)
    (tmp_path / "f.py").write_bytes(b"nothing alike here at all\n")
    widget.apply()
    widget.replan()
    assert widget.status == "error"
    assert isinstance(widget.error, NbeditError)
    assert "NoMatch" in widget.status_text


def test_file_toggles_for_added_files(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    patch = "*** Begin Patch\n*** Add File: one.txt\n+1\n*** Add File: two.txt\n+2\n*** End Patch\n"
    widget = ReviewWidget(workspace, workspace.plan_patch(patch))
    assert sorted(widget.toggles) == [(0, None), (1, None)]
    widget.toggles[(0, None)].value = False
    widget.apply()
    assert not (tmp_path / "one.txt").exists()
    assert (tmp_path / "two.txt").read_bytes() == b"2\n"


def test_nothing_selected_writes_nothing(workspace: Workspace, tmp_path: Path, nbedit_home: Path) -> None:
    widget = review(workspace)
    for box in widget.toggles.values():
        box.value = False
    widget.apply()
    assert widget.status == "applied" and "nothing was written" in widget.status_text
    assert (tmp_path / "f.py").read_bytes() == BEFORE
    assert history_entries(nbedit_home) == []


def test_dry_run_cannot_apply(workspace: Workspace, tmp_path: Path) -> None:
    widget = review(workspace, dry_run=True)
    assert widget.status == "preview"
    assert widget.buttons["apply"].disabled
    widget.apply()
    assert (tmp_path / "f.py").read_bytes() == BEFORE


def test_non_exact_matches_are_flagged(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_bytes(b"def compute(values):\n    return sum(values)   \n")
    workspace = Workspace(tmp_path)
    text = "<<<<<<< SEARCH\n    return sum(values)\n=======\n    return max(values)\n>>>>>>> REPLACE\n"
    widget = ReviewWidget(workspace, workspace.plan_patch(text, default_path="f.py"))
    (toggle,) = widget.toggles.values()
    assert "⚠ trailing-whitespace" in toggle.description
    assert (
        widget.doc["files"][0]["sections"][0]["hunks"][0]["why_tier"]
        == "matched ignoring trailing whitespace"
    )
    # the fuzzy tier needs a few real lines: one context line drifted in layout among three
    (tmp_path / "g.py").write_bytes(
        b"def compute(values):\n    total = sum(values)\n    count = len(values)\n    return total / count\n"
    )
    fuzzy = (
        "<<<<<<< SEARCH\ndef compute( values ):\n    total = sum(values)\n    count = len(values)\n"
        "=======\ndef compute( values ):\n    total = sum(values)\n    count = max(1, len(values))\n"
        ">>>>>>> REPLACE\n"
    )
    widget = ReviewWidget(workspace, workspace.plan_patch(fuzzy, default_path="g.py", threshold=0.8))
    (toggle,) = widget.toggles.values()
    assert "⚠ fuzzy 0." in toggle.description
    assert "fuzzy match" in widget.doc["files"][0]["sections"][0]["hunks"][0]["why_tier"]


def test_output_bundle_keeps_the_widget_view_and_adds_static_diff(workspace: Workspace) -> None:
    widget = review(workspace)
    bundle = widget._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == widget.model_id
    assert bundle["text/plain"].startswith("nbedit: pending")
    assert "-first = 1\n+first = 10\n" in bundle["text/plain"]
    assert (
        "nbedit-view" in bundle["text/html"]
        and "f.py" in bundle["text/html"]
        and '<tr class="a">' in bundle["text/html"]
    )
    widget.toggles[(0, 1)].value = False
    widget.apply()
    bundle = widget._repr_mimebundle_()
    assert "last = 90" not in bundle["text/plain"] and "applied" in bundle["text/plain"]


def test_one_widget_model_per_review_with_the_rows_as_state(workspace: Workspace) -> None:
    from ipywidgets.widgets.widget import _instances

    first = review(workspace)  # the first review also makes the layout model every review shares
    before = set(_instances)
    widget = review(workspace)
    created = set(_instances) - before
    assert created == {widget.model_id}, "a review must be one widget model, not one per hunk"
    assert widget.layout is first.layout
    assert "nbedit-review-widget" in widget._dom_classes
    (file,) = widget.doc["files"]
    assert file["path"] == "f.py" and (file["added"], file["removed"]) == (2, 2)
    blocks = [section for section in file["sections"] if "rows" in section]
    assert [hunk["index"] for block in blocks for hunk in block["hunks"]] == [0, 1]
    assert ["r", 1, None, [["first = ", 0], ["1", 1]]] in blocks[0]["rows"]
    assert ["a", None, 1, [["first = ", 0], ["10", 1]]] in blocks[0]["rows"]
    assert all(hunk["why"] is None for block in blocks for hunk in block["hunks"])
    assert widget.buttons["apply"].description == "Apply" and widget.buttons["reject"].description == "Reject"
    assert not widget.buttons["replan"].visible


def test_page_messages_drive_the_same_actions(workspace: Workspace, tmp_path: Path) -> None:
    widget = review(workspace)
    sent: list[Any] = []
    widget.send = sent.append  # type: ignore[method-assign]  # what goes back to the page
    (file,) = widget.doc["files"]
    position, gap = next((index, s) for index, s in enumerate(file["sections"]) if "gap" in s)
    count, old_line, _ = gap["gap"]
    widget._on_message(
        widget, {"action": "expand", "file": 0, "section": position, "old_line": old_line, "count": count}
    )
    (reply,) = sent
    assert reply["kind"] == "lines" and reply["section"] == position
    assert reply["lines"] == [f"middle{n} = 0" for n in range(old_line - 2, old_line - 2 + count)]
    widget._on_message(widget, {"action": "expand", "file": 7, "section": 0, "old_line": 1, "count": 2})
    assert len(sent) == 1 and widget.status == "pending"  # a stale request shows nothing and breaks nothing
    widget._on_message(widget, {"action": "apply"})
    widget._on_message(widget, {"action": "apply"})  # a double click writes once
    assert widget.status == "applied"
    assert (tmp_path / "f.py").read_bytes().count(b"first = 10") == 1


def test_decided_listeners_run_once(workspace: Workspace) -> None:
    seen: list[str] = []
    widget = review(workspace)
    widget.on_decided(lambda decided: seen.append(decided.status))
    widget.apply()
    widget.apply()
    assert seen == ["applied"]


def test_error_view_bundle() -> None:
    from nbedit.errors import PatchSyntaxError

    view = ErrorView(PatchSyntaxError("no header", line=3, hint="start with *** Begin Patch"))
    bundle = view._repr_mimebundle_()
    assert "line 3" in bundle["text/plain"]
    assert "nb-error" in bundle["text/html"] and "start with *** Begin Patch" in bundle["text/html"]


def test_a_thousand_hunk_change_stays_small_and_styles_once(tmp_path: Path) -> None:
    lines = [f"value_{number} = compute(item_{number}, scale={number % 7})\n" for number in range(20_000)]
    patch = ["--- a/big.py\n", "+++ b/big.py\n"]
    for index in range(10, 20_000, 20):  # 1,000 one-line changes, each with 3 lines of context
        patch.append(f"@@ -{index - 2},7 +{index - 2},7 @@\n")
        patch.extend(" " + line for line in lines[index - 3 : index])
        patch.append("-" + lines[index])
        patch.append("+" + lines[index].replace("compute(", "measure("))
        patch.extend(" " + line for line in lines[index + 1 : index + 4])
    (tmp_path / "big.py").write_text("".join(lines))
    workspace = Workspace(tmp_path, history=False)
    widget = ReviewWidget(workspace, workspace.plan_patch("".join(patch)))
    assert sum(1 for key in widget.toggles if key[1] is not None) == 1000
    state = json.dumps(widget.get_state())  # what the page receives and a saved notebook keeps
    assert len(state.encode("utf-8")) < 2_000_000, len(state)
    blocks = [section for section in widget.doc["files"][0]["sections"] if "rows" in section]
    assert len(blocks) == 1000
    # every hunk keeps its line numbers, markers, word highlight and header
    for number, block in enumerate(blocks):
        changed = 10 + 20 * number + 1
        assert [hunk["index"] for hunk in block["hunks"]] == [number]
        removed = next(row for row in block["rows"] if row[0] == "r")
        added = next(row for row in block["rows"] if row[0] == "a")
        assert removed[1:3] == [changed, None] and added[1:3] == [None, changed]
        assert ["measure", 1] in added[3]
    widget.toggles[(0, 999)].value = False
    assert widget.selection_text() == "999 of 1000 parts selected"
    widget.apply()
    written = (tmp_path / "big.py").read_text()
    assert written.count("measure(") == 999 and "value_19990 = compute(" in written


def test_plain_text_carries_the_non_exact_warning_the_html_shows(tmp_path: Path) -> None:
    (tmp_path / "w.py").write_bytes(b"value = 1   \nother = 2\n")
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(
        "<<<<<<< SEARCH\nvalue = 1\n=======\nvalue = 2\n>>>>>>> REPLACE\n", default_path="w.py"
    )
    widget = ReviewWidget(workspace, plan)
    text = widget._repr_mimebundle_()["text/plain"]
    assert "matched ignoring trailing whitespace" in widget.static_html()
    assert "1 hunk not matched exactly" in text
    assert "⚠ w.py: hunk 1 (line 1) [trailing-whitespace]: matched ignoring trailing whitespace" in text
    assert "-value = 1   \n+value = 2\n" in text


def test_why_here_rows_reach_the_page_only_when_the_matcher_gives_them(tmp_path: Path) -> None:
    """The engine's per-hunk explanation (``match.explanation``) reaches the page as a summary, a score
    and its rows; a plain exact match has nothing to explain (its badge says "found verbatim")."""
    from dataclasses import replace

    (tmp_path / "f.py").write_bytes(b"a = 1\nb = 2\n")
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_edit("f.py", "b = 2", "b = 3")
    (file_plan,) = plan.files
    (located,) = file_plan.hunks
    assert ReviewWidget(workspace, plan).doc["files"][0]["sections"][0]["hunks"][0]["why"] is None
    rows = (("tiers tried", "exact: 1 place (line 2)"), ("runner-up", "0.03 at lines 5-6 (lower score)"))
    explained = replace(located.match, explanation=rows)
    plan = replace(plan, files=(replace(file_plan, hunks=(replace(located, match=explained),)),))
    widget = ReviewWidget(workspace, plan)
    why = widget.doc["files"][0]["sections"][0]["hunks"][0]["why"]
    assert why["summary"] == "Found verbatim at line 2: score 1.00."
    assert why["score"] == "1.00 (similarity)"
    # a runner-up that never competed is not shown as a contest
    assert why["rows"] == [
        ["tiers tried", "exact: 1 place (line 2)"],
        ["runner-up", "no other candidate close (the best other place scored 0.03)"],
    ]
    widget.apply()
    assert (tmp_path / "f.py").read_bytes() == b"a = 1\nb = 3\n"


THREE_HUNKS = TWO_HUNKS + "<<<<<<< SEARCH\nmiddle5 = 0\n=======\nmiddle5 = 5\n>>>>>>> REPLACE\n"


def test_apply_from_the_page_writes_the_selection_it_carries(workspace: Workspace, tmp_path: Path) -> None:
    # the page drew hunks 1 and 2 unticked, but its toggle updates are still held back (a busy
    # kernel): the kernel's 'excluded' says nothing is left out. Apply writes what the page drew.
    widget = review(workspace, THREE_HUNKS)
    sent: list[Any] = []
    widget.send = sent.append  # type: ignore[method-assign]
    assert widget.excluded == [] and len(widget.toggles) == 3
    widget._on_message(widget, {"action": "apply", "digest": widget.digest, "included": [[0, 2]]})
    assert widget.status == "applied"
    written = (tmp_path / "f.py").read_bytes()
    assert written == BEFORE.replace(b"middle5 = 0", b"middle5 = 5")
    assert sorted(map(tuple, widget.excluded)) == [(0, 0), (0, 1)]  # every view now shows what was written
    assert "1 of 3 parts" in widget.status_text
    # the held-back toggle update arriving after the decision is answered with the written selection
    widget.excluded = [[0, 1]]
    assert sorted(map(tuple, widget.excluded)) == [(0, 0), (0, 1)]
    assert (tmp_path / "f.py").read_bytes() == written


def test_a_page_showing_another_plan_decides_nothing(workspace: Workspace, tmp_path: Path) -> None:
    widget = review(workspace)
    sent: list[Any] = []
    widget.send = sent.append  # type: ignore[method-assign]
    shown = widget.digest
    assert len(shown) == 16
    for action in ("apply", "reject"):
        widget._on_message(widget, {"action": action, "digest": "0" * 16, "included": [[0, 0], [0, 1]]})
        assert widget.status == "pending", action
        assert sent[-1]["kind"] == "refused" and "another version" in widget.status_text
    assert (tmp_path / "f.py").read_bytes() == BEFORE
    # a selection naming a part this plan does not have is refused, not guessed at
    widget._on_message(widget, {"action": "apply", "digest": shown, "included": [[0, 5]]})
    assert widget.status == "pending" and (tmp_path / "f.py").read_bytes() == BEFORE
    widget._on_message(widget, {"action": "apply", "digest": shown, "included": [["x", None]]})
    assert widget.status == "pending" and (tmp_path / "f.py").read_bytes() == BEFORE
    # the file changes on disk: the re-planned plan has another digest, and an Apply from the
    # page that still shows the first plan writes nothing
    (tmp_path / "f.py").write_bytes(b"# a line above\n" + BEFORE)
    widget.apply()
    assert widget.status == "stale"
    widget._on_message(widget, {"action": "replan", "digest": shown})
    assert widget.status == "pending" and widget.digest != shown
    widget._on_message(widget, {"action": "replan", "digest": shown})  # a second click: nothing to do
    widget._on_message(widget, {"action": "apply", "digest": shown, "included": [[0, 0], [0, 1]]})
    assert widget.status == "pending" and (tmp_path / "f.py").read_bytes() == b"# a line above\n" + BEFORE
    widget._on_message(widget, {"action": "reject", "digest": widget.digest})
    assert widget.status == "rejected"
    assert (tmp_path / "f.py").read_bytes() == b"# a line above\n" + BEFORE


def test_the_digest_names_what_the_plan_writes(workspace: Workspace, tmp_path: Path) -> None:
    from nbedit.render.review_data import plan_digest

    def plan(text: str) -> Any:
        return workspace.plan_patch(text, dialect="search_replace", default_path="f.py")

    assert plan_digest(plan(TWO_HUNKS)) == plan_digest(plan(TWO_HUNKS))
    assert plan_digest(plan(TWO_HUNKS)) != plan_digest(plan(TWO_HUNKS.replace("last = 90", "last = 91")))
    assert plan_digest(plan(TWO_HUNKS)) != plan_digest(plan(THREE_HUNKS))


def test_history_undo_of_an_older_entry_is_a_review_of_its_reverse(tmp_path: Path) -> None:
    from nbedit.jupyter.history_widget import HistoryWidget

    target = tmp_path / "a.py"
    target.write_text("one = 1\n" + "".join(f"x{index} = {index}\n" for index in range(20)) + "two = 2\n")
    workspace = Workspace(tmp_path, home=tmp_path / "home", session="s", history=True)
    first = workspace.apply(workspace.plan_edit("a.py", "one = 1", "one = 10")).entry_id
    workspace.apply(workspace.plan_edit("a.py", "two = 2", "two = 20"))
    table = HistoryWidget(workspace)
    assert all(row["undoable"] for row in table.rows)  # Undo on every row, not only the newest
    review = table.undo(first)
    assert isinstance(review, ReviewWidget) and target.read_text().startswith("one = 10\n")
    review.apply()
    assert review.status == "applied" and "undone" in review.status_text
    text = target.read_text()
    assert text.startswith("one = 1\n") and text.endswith("two = 20\n")  # the later edit stays
    table.refresh()
    assert not next(row for row in table.rows if row["id"] == first)["undoable"]  # undone once
    # an entry whose lines a later entry rewrote is refused, and nothing is written
    third = workspace.apply(workspace.plan_edit("a.py", "x5 = 5", "x5 = 50")).entry_id
    workspace.apply(workspace.plan_edit("a.py", "x5 = 50", "x5 = 500"))
    before = target.read_bytes()
    table.refresh()
    refused = table.undo(third)
    assert isinstance(refused, ErrorView)
    assert type(refused.error).__name__ == "StaleFile" and "changed since" in str(refused.error)
    assert target.read_bytes() == before
