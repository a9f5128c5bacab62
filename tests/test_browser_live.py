"""Live tabs in a real, stock JupyterLab 4 (no jupyter-collaboration): a change nbedit applies
shows up in the open tabs in place.

The server runs with nbedit's server extension and JupyterLab extension, enabled by the
install (``jupyter-config`` and the prebuilt ``nbedit/live/labextension`` shipped as shared
data). Each case opens notebook tabs in headless Chromium, types into them the way a person
does (unsaved), applies a change from a kernel, from the CLI or through the API, and checks
the page (sources, outputs, no "File Changed" dialog) and the bytes on disk after a save.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.register_assert_rewrite("browser_support")

from browser_support import (  # noqa: E402
    ARTIFACTS,
    REPOSITORY,
    LabServer,
    cell_outputs_text,
    run_all_cells,
    wait_kernel_idle,
    write_notebook,
)

pytest_plugins = ["browser_support"]

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.slow]

EDIT = "%%edit {path} --yes\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n"
HELPER = "def scale(value):\n    return value * 2\n\n\nLIMIT = 10\n"
TYPED = "# typed by hand, not saved"


# ---------------------------------------------------------------------- page helpers


def open_path(page: Any, lab: LabServer, path: str, mode: str = "tab-after") -> None:
    """Open ``path`` in JupyterLab (a notebook waits for its kernel; a file for its editor)."""
    page.evaluate(
        "([path, mode]) => window.jupyterapp.commands.execute('docmanager:open', {path, options: {mode}})",
        [path, mode],
    )
    page.wait_for_function(
        """path => {
            const widget = [...window.jupyterapp.shell.widgets('main')].find(w => w.context && w.context.path === path);
            return widget && widget.context.isReady;
        }""",
        arg=path,
        timeout=60_000,
    )


def start_lab_page(page: Any, lab: LabServer, first: str) -> None:
    page.goto(f"{lab.url}/lab/tree/{first}?reset", wait_until="domcontentloaded")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=60_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    wait_kernel_idle(page, timeout=90_000)
    page.wait_for_function("() => window.nbeditLive && window.nbeditLive.connected", timeout=30_000)


def activate(page: Any, path: str) -> None:
    page.evaluate(
        """path => {
            const widget = [...window.jupyterapp.shell.widgets('main')].find(w => w.context && w.context.path === path);
            window.jupyterapp.shell.activateById(widget.id);
        }""",
        path,
    )


def widget_js(path: str, body: str) -> str:
    return (
        "() => { const widget = [...window.jupyterapp.shell.widgets('main')]"
        f".find(w => w.context && w.context.path === {json.dumps(path)}); {body} }}"
    )


def cell_sources(page: Any, path: str) -> list[str]:
    return list(
        page.evaluate(
            widget_js(path, "return widget.context.model.sharedModel.cells.map(c => c.getSource());")
        )
    )


def file_source(page: Any, path: str) -> str:
    return str(page.evaluate(widget_js(path, "return widget.context.model.sharedModel.getSource();")))


def is_dirty(page: Any, path: str) -> bool:
    return bool(page.evaluate(widget_js(path, "return widget.context.model.dirty;")))


def tab_text(page: Any, path: str) -> str:
    """What the tab shows: the rendered text of its widget (editors and outputs)."""
    return str(page.evaluate(widget_js(path, "return widget.node.innerText;")))


def type_into_cell(page: Any, path: str, index: int, text: str) -> None:
    """Click at the end of a cell's editor and type, as a person does (the tab becomes dirty)."""
    activate(page, path)
    editor = page.locator(f"#{widget_id(page, path)} .jp-Cell").nth(index).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.press("End")
    page.keyboard.type("\n" + text)
    page.keyboard.press("Escape")
    page.wait_for_function(widget_js(path, "return widget.context.model.dirty;"))


def widget_id(page: Any, path: str) -> str:
    return str(page.evaluate(widget_js(path, "return widget.id;")))


def no_dialog(page: Any) -> None:
    assert page.locator(".jp-Dialog").count() == 0, page.locator(".jp-Dialog").inner_text()


def save(page: Any, path: str) -> None:
    """Ctrl+S in the tab, then wait until the save finished (the tab's record of the file on
    disk changes) and the tab is clean; a "File Changed" dialog fails the test."""
    activate(page, path)
    saved_before = page.evaluate(widget_js(path, "return widget.context.contentsModel.last_modified;"))
    page.locator(f"#{widget_id(page, path)}").click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        no_dialog(page)
        saved_now = page.evaluate(widget_js(path, "return widget.context.contentsModel.last_modified;"))
        if saved_now != saved_before and not is_dirty(page, path):
            break
        page.wait_for_timeout(100)
    no_dialog(page)
    assert not is_dirty(page, path), f"{path} did not save"
    assert saved_now != saved_before, f"{path}: the save did not finish"


def wait_for(page: Any, script: str, timeout: float = 2_000) -> None:
    page.wait_for_function(script, timeout=timeout)


def on_disk_sources(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"] for cell in cells]


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), animations="disabled")


def history_entries(lab: LabServer) -> list[Any]:
    from nbedit.storage.history import HistoryStore

    with HistoryStore(lab.nbedit_home) as store:
        return store.entries()


def live_client(lab: LabServer) -> Any:
    from nbedit.live.client import LiveClient
    from nbedit.live.discovery import Server

    return LiveClient(Server(url=lab.url, token="", root_dir=os.path.realpath(lab.root)))


# ---------------------------------------------------------------------- the cases


def write_b(lab: LabServer, name: str) -> Path:
    path = lab.root / name
    write_notebook(
        path,
        [
            ("code", "value = 40 + 2\nprint('B says', value)"),
            ("code", "label = 'old label'\nlabel"),
            ("markdown", "Notes about B"),
        ],
    )
    return path


def test_an_edit_from_another_kernel_lands_in_the_open_tabs(lab: LabServer, page: Any) -> None:
    b = write_b(lab, "live_b.ipynb")
    helper = lab.root / "live_helper.py"
    helper.write_text(HELPER)
    write_notebook(
        lab.root / "live_a.ipynb",
        [
            ("code", "%load_ext nbedit"),
            ("code", EDIT.format(path="live_b.ipynb", old="label = 'old label'", new="label = 'new label'")),
            (
                "code",
                EDIT.format(path="live_helper.py", old="    return value * 2", new="    return value * 3"),
            ),
        ],
    )
    start_lab_page(page, lab, "live_b.ipynb")
    run_all_cells(page)
    assert "B says 42" in cell_outputs_text(page)
    type_into_cell(page, "live_b.ipynb", 0, TYPED)
    open_path(page, lab, "live_helper.py", "split-right")
    open_path(page, lab, "live_a.ipynb", "split-bottom")
    shot(page, "live-tabs-before.png")
    assert not is_dirty(page, "live_helper.py")

    activate(page, "live_a.ipynb")
    wait_kernel_idle(page, timeout=90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_for(
        page,
        widget_js("live_b.ipynb", 'return widget.node.innerText.includes("new label");'),
        timeout=60_000,
    )
    wait_for(page, widget_js("live_helper.py", "return widget.node.innerText.includes('value * 3');"), 30_000)
    wait_kernel_idle(page)
    no_dialog(page)
    shot(page, "live-tabs-after.png")

    # within 2 s of the history entry (made just before the write), each tab had the change
    applied = {item["path"]: item["time"] / 1000 for item in page.evaluate("() => window.nbeditLive.log")}
    for entry in history_entries(lab)[:2]:
        target = entry.files[0].path
        assert applied[target] - entry.time < 2.0, (target, applied[target] - entry.time)

    sources = cell_sources(page, "live_b.ipynb")
    assert sources[1] == "label = 'new label'\nlabel"
    assert sources[0].endswith(TYPED), "the unsaved typing in another cell is kept"
    assert "B says 42" in tab_text(page, "live_b.ipynb"), "outputs are kept"
    assert is_dirty(page, "live_b.ipynb")  # the typing is still unsaved
    assert file_source(page, "live_helper.py") == HELPER.replace("* 2", "* 3")
    assert not is_dirty(page, "live_helper.py"), "a clean tab stays clean"
    assert "Traceback" not in tab_text(page, "live_a.ipynb")

    save(page, "live_b.ipynb")
    on_disk = on_disk_sources(b)
    assert on_disk[1] == "label = 'new label'\nlabel" and on_disk[0].endswith(TYPED)
    save_text = helper.read_text()
    assert save_text == HELPER.replace("* 2", "* 3")
    # the editor tab saves without a dialog too
    type_into_cell_free = "LIMIT = 10"
    assert type_into_cell_free in file_source(page, "live_helper.py")


def test_edit_of_the_running_notebook_needs_no_force_and_undo_follows(lab: LabServer, page: Any) -> None:
    path = lab.root / "live_self.ipynb"
    write_notebook(
        path,
        [
            ("code", "%load_ext nbedit"),
            ("code", "threshold = 0.5\nthreshold"),
            ("code", "# my notes"),
            (
                "code",
                EDIT.format(path="live_self.ipynb --cell 1", old="threshold = 0.5", new="threshold = 0.75"),
            ),
            ("code", "%nbedit history"),
        ],
    )
    start_lab_page(page, lab, "live_self.ipynb")
    type_into_cell(page, "live_self.ipynb", 2, TYPED)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_for(
        page,
        widget_js(
            "live_self.ipynb",
            "return widget.context.model.sharedModel.cells[1].getSource().includes('0.75');",
        ),
        60_000,
    )
    wait_kernel_idle(page)
    no_dialog(page)
    outputs = cell_outputs_text(page)
    assert "force" not in outputs and "Error" not in outputs, outputs
    sources = cell_sources(page, "live_self.ipynb")
    assert sources[1] == "threshold = 0.75\nthreshold"
    assert sources[2] == "# my notes\n" + TYPED
    assert on_disk_sources(path)[1] == "threshold = 0.75\nthreshold"

    # undo from the history table (the last cell): the tab follows the same way
    table = page.locator(".jp-OutputArea .nbedit-history-table")
    table.wait_for(state="visible", timeout=30_000)
    table.locator("button.nbedit-history-undo").first.click()
    review = page.locator(".nbedit-history-detail .nbedit-review")
    review.wait_for(state="visible")
    review.locator("button.nbedit-apply").click()
    wait_for(
        page,
        widget_js(
            "live_self.ipynb",
            "return widget.context.model.sharedModel.cells[1].getSource().includes('0.5\\n');",
        ),
        30_000,
    )
    no_dialog(page)
    sources = cell_sources(page, "live_self.ipynb")
    assert sources[1] == "threshold = 0.5\nthreshold"
    assert sources[2] == "# my notes\n" + TYPED
    save(page, "live_self.ipynb")
    on_disk = on_disk_sources(path)
    assert on_disk[1] == "threshold = 0.5\nthreshold" and on_disk[2] == "# my notes\n" + TYPED


def test_typing_in_the_edited_cell_is_a_conflict_and_nothing_is_written(lab: LabServer, page: Any) -> None:
    from nbedit.errors import LiveConflict
    from nbedit.workspace import Workspace

    b = write_b(lab, "live_conflict.ipynb")
    helper = lab.root / "live_conflict.py"
    helper.write_text(HELPER)
    start_lab_page(page, lab, "live_conflict.ipynb")
    type_into_cell(page, "live_conflict.ipynb", 1, TYPED)
    before_notebook, before_helper = b.read_bytes(), helper.read_bytes()
    workspace = Workspace(lab.root, home=lab.nbedit_home, live=live_client(lab))
    plan = workspace.plan_patch(
        "live_conflict.py\n```\n<<<<<<< SEARCH\n    return value * 2\n=======\n    return value * 5\n>>>>>>> REPLACE\n```\n"
        "live_conflict.ipynb\n```\n<<<<<<< SEARCH\nlabel = 'old label'\n=======\nlabel = 'other'\n>>>>>>> REPLACE\n```\n"
    )
    with pytest.raises(LiveConflict) as raised:
        workspace.apply(plan)
    assert b.read_bytes() == before_notebook and helper.read_bytes() == before_helper
    message = str(raised.value)
    assert "the open tab differs" in message and "live_conflict.ipynb" in message and "cell 2" in message
    assert "Save or undo the typing" in message
    conflict = raised.value.conflicts[0]
    assert conflict.expected == "label = 'old label'\nlabel" and conflict.live.endswith(TYPED)
    assert cell_sources(page, "live_conflict.ipynb")[1].endswith(TYPED)  # the tab is untouched

    # re-plan against the live document: the typing is the base, the edit lands on it
    replanned = workspace.replan_live(plan, raised.value)
    workspace.apply(replanned)
    expected = "label = 'other'\nlabel\n" + TYPED
    wait_for(
        page,
        widget_js(
            "live_conflict.ipynb",
            "return widget.context.model.sharedModel.cells[1].getSource().includes(\"'other'\");",
        ),
        5_000,
    )
    assert cell_sources(page, "live_conflict.ipynb")[1] == expected
    assert on_disk_sources(b)[1] == expected
    assert helper.read_text() == HELPER.replace("* 2", "* 5")
    no_dialog(page)
    save(page, "live_conflict.ipynb")
    assert on_disk_sources(b)[1] == expected


def test_cli_and_api_updates_reach_the_tabs_with_the_latency_logged(lab: LabServer, page: Any) -> None:
    from nbedit.workspace import Workspace

    b = write_b(lab, "live_latency.ipynb")
    helper = lab.root / "live_latency.py"
    helper.write_text(HELPER)
    start_lab_page(page, lab, "live_latency.ipynb")
    type_into_cell(page, "live_latency.ipynb", 0, TYPED)
    open_path(page, lab, "live_latency.py", "split-right")

    # the CLI, run from a shell outside the server, finds it through NBEDIT_SERVER_URL
    environment = dict(os.environ, NBEDIT_SERVER_URL=lab.url, NBEDIT_HOME=str(lab.nbedit_home))
    environment["PYTHONPATH"] = str(REPOSITORY)
    subprocess.run(
        [sys.executable, "-m", "nbedit", "edit", "live_latency.py", "--root", str(lab.root),
         "--old", "LIMIT = 10", "--new", "LIMIT = 11", "--yes"],
        check=True, env=environment, capture_output=True, timeout=60,
    )  # fmt: skip
    wait_for(
        page,
        widget_js(
            "live_latency.py", "return widget.context.model.sharedModel.getSource().includes('LIMIT = 11');"
        ),
    )
    assert not is_dirty(page, "live_latency.py")
    cli = subprocess.run(
        [sys.executable, "-m", "nbedit", "edit", "live_latency.ipynb", "--root", str(lab.root),
         "--old", "label = 'old label'", "--new", "label = 'from the CLI'", "--yes"],
        check=True, env=environment, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "nbedit:" not in cli.stderr, cli.stderr  # no note: the tab took it
    wait_for(page, widget_js("live_latency.ipynb", "return widget.node.innerText.includes('from the CLI');"))
    assert cell_sources(page, "live_latency.ipynb")[0].endswith(TYPED)
    no_dialog(page)

    # 20 applies through the API, alternating the notebook cell and the .py file
    workspace = Workspace(lab.root, home=lab.nbedit_home, live=live_client(lab))
    latencies: list[float] = []
    limit = 11
    for round_number in range(20):
        if round_number % 2:
            target, old, new = "live_latency.py", f"LIMIT = {limit}", f"LIMIT = {limit + 1}"
            limit += 1
        else:
            current = cell_sources(page, "live_latency.ipynb")[1].splitlines()[0]
            target, old, new = "live_latency.ipynb", current, f"label = 'round {round_number}'"
        page.evaluate(
            """([path, text]) => {
                window.nbeditSeen = null;
                const widget = [...window.jupyterapp.shell.widgets('main')].find(w => w.context && w.context.path === path);
                const look = () => {
                    if (widget.node.innerText.includes(text)) { window.nbeditSeen = Date.now(); return; }
                    requestAnimationFrame(look);
                };
                look();
            }""",
            [target, new],
        )
        started = time.time()
        workspace.apply(workspace.plan_edit(target, old, new))
        page.wait_for_function("() => window.nbeditSeen !== null", timeout=5_000)
        latencies.append(page.evaluate("() => window.nbeditSeen") / 1000 - started)
    no_dialog(page)
    median = statistics.median(latencies)
    print(
        f"\nlive tabs: Apply -> visible in the other tab, median of {len(latencies)}: {median * 1000:.0f} ms "
        f"(min {min(latencies) * 1000:.0f}, max {max(latencies) * 1000:.0f})"
    )
    assert median < 2.0
    assert cell_sources(page, "live_latency.ipynb")[0].endswith(TYPED)
    save(page, "live_latency.ipynb")
    save(page, "live_latency.py")
    assert on_disk_sources(b)[1].startswith("label = 'round 18'")
    assert on_disk_sources(b)[0].endswith(TYPED)
    assert "LIMIT = 21" in helper.read_text()


def test_the_page_reaches_only_this_machine_and_runs_while_the_test_waits(lab: LabServer, page: Any) -> None:
    """The harness's two promises for the timings above: nothing leaves the machine (a request to
    another host fails at once), and the page's requests do not wait for the test's thread, which a
    synchronous ``Workspace.apply`` or CLI run blocks (a ``route`` handler made the live tabs' reply
    wait 3 s for its file's ``contents.get`` on every write)."""
    write_b(lab, "harness.ipynb")
    start_lab_page(page, lab, "harness.ipynb")
    outside = page.evaluate(
        """async () => {
            const started = performance.now();
            try { await fetch('http://192.0.2.1/', {cache: 'no-store'}); return ['reached', 0]; }
            catch (error) { return ['refused', performance.now() - started]; }
        }"""
    )
    assert outside[0] == "refused" and outside[1] < 5_000, outside
    page.evaluate(
        """() => {
            window.harnessGot = null;
            setTimeout(() => {  // asked once this thread is busy, as the live tabs ask during a write
                const started = performance.now();
                window.jupyterapp.serviceManager.contents.get('harness.ipynb', {content: false, hash: true})
                    .then(() => { window.harnessGot = performance.now() - started; });
            }, 300);
        }"""
    )
    time.sleep(2.5)  # this thread is busy, as in a synchronous apply: the page's request goes on
    took = page.evaluate("() => window.harnessGot")
    assert took is not None and took < 1_500, took


def test_the_review_says_the_tab_differs_and_replans_against_it(lab: LabServer, page: Any) -> None:
    b = write_b(lab, "live_review_b.ipynb")
    write_notebook(
        lab.root / "live_review_a.ipynb",
        [
            ("code", "%load_ext nbedit"),
            (
                "code",
                "%%edit live_review_b.ipynb\n<<<<<<< SEARCH\nlabel = 'old label'\n=======\n"
                "label = 'reviewed label'\n>>>>>>> REPLACE\n",
            ),
        ],
    )
    start_lab_page(page, lab, "live_review_b.ipynb")
    type_into_cell(page, "live_review_b.ipynb", 1, TYPED)
    before = b.read_bytes()
    open_path(page, lab, "live_review_a.ipynb", "split-right")
    activate(page, "live_review_a.ipynb")
    wait_kernel_idle(page, timeout=90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    widget = page.locator(".jp-OutputArea .nbedit-review")
    widget.wait_for(state="visible", timeout=60_000)
    page.wait_for_function(
        "() => { const b = document.querySelector('.nbedit-review button.nbedit-apply'); return b && !b.disabled; }"
    )
    widget.locator("button.nbedit-apply").click()
    status = widget.locator(".nbedit-status")
    status.filter(has_text="the open tab differs").wait_for(timeout=30_000)
    assert b.read_bytes() == before, "a conflict writes nothing"
    replan = widget.locator("button.nbedit-replan")
    assert replan.inner_text().strip() == "↻ Re-plan against the live document"
    widget.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".jp-OutputArea-output").filter(has=page.locator(".nbedit-review")).screenshot(
        path=str(ARTIFACTS / "live-review-conflict.png"), animations="disabled"
    )
    replan.click()
    status.filter(has_text="pending").wait_for(timeout=30_000)
    widget.locator("button.nbedit-apply").click()
    status.filter(has_text="applied").wait_for(timeout=30_000)
    expected = "label = 'reviewed label'\nlabel\n" + TYPED
    wait_for(
        page, widget_js("live_review_b.ipynb", "return widget.node.innerText.includes('reviewed label');")
    )
    assert cell_sources(page, "live_review_b.ipynb")[1] == expected
    assert on_disk_sources(b)[1] == expected
    no_dialog(page)
    save(page, "live_review_b.ipynb")
    assert on_disk_sources(b)[1] == expected


def test_inserted_and_deleted_cells_reach_the_tab_and_outputs_stay(lab: LabServer, page: Any) -> None:
    import difflib

    from nbedit.workspace import Workspace

    b = write_b(lab, "live_cells.ipynb")
    start_lab_page(page, lab, "live_cells.ipynb")
    run_all_cells(page)
    type_into_cell(page, "live_cells.ipynb", 0, TYPED)
    workspace = Workspace(lab.root, home=lab.nbedit_home, live=live_client(lab))
    view = workspace.view("live_cells.ipynb").splitlines(keepends=True)
    second = next(index for index, line in enumerate(view) if line.startswith("# %% nbedit cell 1 "))
    markdown = next(index for index, line in enumerate(view) if "[markdown]" in line)
    # a new cell between the first two, and the markdown cell deleted
    changed = view[:second] + ["# %% nbedit cell 1 [code]\n", "inserted = True\n"] + view[second:markdown]
    diff = "".join(difflib.unified_diff(view, changed, "a/live_cells.ipynb", "b/live_cells.ipynb"))
    workspace.apply(workspace.plan_patch(diff))
    on_disk = json.loads(b.read_text())["cells"]
    wait_for(
        page,
        widget_js(
            "live_cells.ipynb", f"return widget.context.model.sharedModel.cells.length === {len(on_disk)};"
        ),
    )
    no_dialog(page)
    tab = page.evaluate(
        widget_js(
            "live_cells.ipynb",
            "return widget.context.model.sharedModel.cells.map(c => [c.cell_type, c.getSource()]);",
        )
    )
    disk = [[cell["cell_type"], "".join(cell["source"])] for cell in on_disk]
    assert tab[0] == ["code", disk[0][1] + "\n" + TYPED]
    assert tab[1:] == disk[1:]
    assert [source for _, source in tab[1:]] == ["inserted = True", "label = 'old label'\nlabel"]
    assert "B says 42" in tab_text(page, "live_cells.ipynb"), "outputs are kept"
    save(page, "live_cells.ipynb")
    saved = on_disk_sources(b)
    assert saved == [disk[0][1] + "\n" + TYPED, "inserted = True", "label = 'old label'\nlabel"]


def test_a_tab_closed_between_the_question_and_the_write_gets_the_file_as_usual(
    lab: LabServer, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from nbedit.live.client import LiveClient
    from nbedit.workspace import Workspace

    helper = lab.root / "live_closing.py"
    helper.write_text(HELPER)
    write_b(lab, "live_closing.ipynb")
    start_lab_page(page, lab, "live_closing.ipynb")
    open_path(page, lab, "live_closing.py", "split-right")
    states: list[str] = []

    class ClosesTheTab(LiveClient):
        """The real client; the person closes the file's tab right after the tabs were asked."""

        def prepare(self, changes: Any) -> Any:
            answers = super().prepare(changes)
            states.append(answers["live_closing.py"]["state"])
            page.evaluate(widget_js("live_closing.py", "widget.close();"))
            return answers

    workspace = Workspace(lab.root, home=lab.nbedit_home, live=ClosesTheTab(live_client(lab).server))
    workspace.apply(workspace.plan_edit("live_closing.py", "LIMIT = 10", "LIMIT = 12"))
    assert states == ["open"]
    assert helper.read_text() == HELPER.replace("LIMIT = 10", "LIMIT = 12")
    assert capsys.readouterr().err == ""  # nothing to say: no tab shows a stale text
    open_path(page, lab, "live_closing.py", "split-right")
    assert "LIMIT = 12" in file_source(page, "live_closing.py")
    no_dialog(page)


def test_a_crlf_file_open_in_an_editor_takes_the_change(lab: LabServer, page: Any) -> None:
    from nbedit.workspace import Workspace

    path = lab.root / "live_crlf.py"
    path.write_bytes(HELPER.replace("\n", "\r\n").encode())
    write_b(lab, "live_crlf.ipynb")
    start_lab_page(page, lab, "live_crlf.ipynb")
    open_path(page, lab, "live_crlf.py", "split-right")
    workspace = Workspace(lab.root, home=lab.nbedit_home, live=live_client(lab))
    workspace.apply(workspace.plan_edit("live_crlf.py", "LIMIT = 10", "LIMIT = 13"))
    assert path.read_bytes() == HELPER.replace("LIMIT = 10", "LIMIT = 13").replace("\n", "\r\n").encode()
    wait_for(page, widget_js("live_crlf.py", "return widget.node.innerText.includes('LIMIT = 13');"))
    assert not is_dirty(page, "live_crlf.py")
    no_dialog(page)
