"""The review widget in a real JupyterLab: a click in the page changes (or does not change) the file.

Each case writes a notebook that loads the extension and runs ``%%edit`` in
review mode (no ``--yes``), opens it in headless Chromium, runs all cells and
acts on the rendered widget the way a person would. Assertions are on the bytes
on disk and on the history store, never only on what the page says.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.register_assert_rewrite("browser_support")  # it is also loaded as a plugin below

from browser_support import (  # noqa: E402
    ARTIFACTS,
    LabServer,
    cell_outputs_text,
    open_notebook,
    run_all_cells,
    set_theme,
    write_notebook,
)

pytest_plugins = ["browser_support"]  # the lab, browser and page fixtures

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.slow]

BEFORE = (
    "def greet(name):\n"
    '    return "hello " + name\n'
    "\n"
    "\n"
    "def farewell(name):\n"
    '    return "bye " + name  # café\n'
)
FIRST_BLOCK = """\
<<<<<<< SEARCH
    return "hello " + name
=======
    return f"hello, {name}!"
>>>>>>> REPLACE
"""
SECOND_BLOCK = """\
<<<<<<< SEARCH
    return "bye " + name  # café
=======
    return f"goodbye, {name}."  # café
>>>>>>> REPLACE
"""
BOTH_APPLIED = BEFORE.replace('"hello " + name', 'f"hello, {name}!"').replace(
    '"bye " + name', 'f"goodbye, {name}."'
)
ONLY_SECOND_APPLIED = BEFORE.replace('"bye " + name', 'f"goodbye, {name}."')
ENTRY_ID = re.compile(r"history entry (\S+?)[;)]")


def prepare(lab: LabServer, name: str, target_bytes: bytes) -> Path:
    """Write ``<name>.py`` with ``target_bytes`` and ``<name>.ipynb`` that reviews both blocks against it."""
    target = lab.root / f"{name}.py"
    target.write_bytes(target_bytes)
    write_notebook(
        lab.root / f"{name}.ipynb",
        [
            ("markdown", f"Review an edit of `{name}.py`."),
            ("code", "%load_ext nbedit"),
            ("code", f"%%edit {name}.py\n{FIRST_BLOCK}{SECOND_BLOCK}"),
        ],
    )
    return target


def rendered_widget(page: Any) -> Any:
    """The review widget once JupyterLab's widget manager has drawn it, buttons enabled."""
    widget = page.locator(".jp-OutputArea .nbedit-review")
    try:
        widget.wait_for(state="visible", timeout=30_000)
    except Exception as error:
        raise AssertionError(
            "no rendered .nbedit-review widget in the outputs; they show:\n" + cell_outputs_text(page)
        ) from error
    page.wait_for_function(
        "() => { const b = document.querySelector('.nbedit-review button.nbedit-apply');"
        " return b && !b.disabled; }"
    )
    return widget


def status_text(widget: Any, expected: str) -> str:
    status = widget.locator(".nbedit-status")
    status.filter(has_text=expected).wait_for(timeout=30_000)
    return str(status.inner_text())


def screenshot(page: Any, name: str) -> Path:
    """The output holding the widget: its padding frames the shot (the widget's own box is flush)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    output = page.locator(".jp-OutputArea-output").filter(has=page.locator(".nbedit-review"))
    output.screenshot(path=str(path), animations="disabled")
    return path


def history_entry(lab: LabServer, entry_id: str) -> Any:
    from nbedit.storage.history import HistoryStore

    with HistoryStore(lab.nbedit_home) as store:
        return store.entry(entry_id)


def history_entries(lab: LabServer) -> list[Any]:
    from nbedit.storage.history import HistoryStore

    if not lab.nbedit_home.exists():
        return []
    with HistoryStore(lab.nbedit_home) as store:
        return store.entries()


def test_apply_click_writes_the_file_and_records_history(lab: LabServer, page: Any) -> None:
    target = prepare(lab, "apply_case", BEFORE.encode())
    open_notebook(page, lab, "apply_case.ipynb")
    run_all_cells(page)
    widget = rendered_widget(page)
    assert "pending" in status_text(widget, "pending")
    assert target.read_bytes() == BEFORE.encode(), "review mode must not write before Apply"
    assert widget.locator(".nbedit-hunk-toggle input[type=checkbox]").count() == 2

    # screenshots for the README, pending state, both themes (the theme setting persists: restore it)
    widget.scroll_into_view_if_needed()
    # (copied by hand to docs/images/ after a look; a test run never writes into the repository)
    screenshot(page, "review-light.png")
    try:
        set_theme(page, "JupyterLab Dark")
        screenshot(page, "review-dark.png")
    finally:
        set_theme(page, "JupyterLab Light")

    widget.locator("button.nbedit-apply").click()
    text = status_text(widget, "applied")
    assert target.read_bytes() == BOTH_APPLIED.encode()
    found = ENTRY_ID.search(text)
    assert found, f"no history entry id in the status: {text!r}"
    entry = history_entry(lab, found.group(1))
    assert entry.status == "applied"
    assert entry.origin == "magic"
    assert [file.path for file in entry.files] == ["apply_case.py"]
    assert widget.locator("button.nbedit-apply").is_disabled()
    assert widget.locator("button.nbedit-reject").is_disabled()


def test_reject_click_leaves_the_file_byte_identical(lab: LabServer, page: Any) -> None:
    original = BEFORE.replace("\n", "\r\n").encode("utf-8")  # CRLF and non-ASCII: bytes must not move
    target = prepare(lab, "reject_case", original)
    entries_before = len(history_entries(lab))
    open_notebook(page, lab, "reject_case.ipynb")
    run_all_cells(page)
    widget = rendered_widget(page)
    widget.locator("button.nbedit-reject").click()
    assert "rejected" in status_text(widget, "rejected")
    assert widget.locator("button.nbedit-apply").is_disabled()
    assert target.read_bytes() == original
    assert len(history_entries(lab)) == entries_before
    # a disabled Apply cannot be clicked into writing after the decision
    widget.locator("button.nbedit-apply").click(force=True)
    page.wait_for_timeout(500)
    assert target.read_bytes() == original


def test_unticked_hunk_is_left_out(lab: LabServer, page: Any) -> None:
    original = BEFORE.replace("\n", "\r\n").encode("utf-8")
    target = prepare(lab, "toggle_case", original)
    open_notebook(page, lab, "toggle_case.ipynb")
    run_all_cells(page)
    widget = rendered_widget(page)
    toggles = widget.locator(".nbedit-hunk-toggle input[type=checkbox]")
    assert toggles.count() == 2
    toggles.nth(0).uncheck()
    widget.get_by_text("1 of 2 parts selected").wait_for()
    widget.locator("button.nbedit-apply").click()
    text = status_text(widget, "applied")
    expected = ONLY_SECOND_APPLIED.replace("\n", "\r\n").encode("utf-8")
    assert target.read_bytes() == expected
    found = ENTRY_ID.search(text)
    assert found, f"no history entry id in the status: {text!r}"
    assert history_entry(lab, found.group(1)).status == "applied"
