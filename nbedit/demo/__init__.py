"""``python -m nbedit``: a terminal tour of what nbedit does, on bundled sample files.

The samples are copied to a fresh temporary folder and the tour runs there with
its own history home, so it never touches your files or your history, needs no
network and reads no input (it runs unattended, in CI too). Each step shows the
plan the way the CLI would, then applies it or shows why nbedit refused:

1. a git diff, applied;
2. a Codex ``*** Begin Patch`` block, applied;
3. an Aider SEARCH/REPLACE block whose straight quotes drifted from the file's
   curly ones: found, but flagged as a non-exact match;
4. an old/new pair that occurs twice: refused, with both locations;
5. an old/new pair written against an older version: refused, with the closest
   candidates and how they differ;
6. a notebook cell edit, shown as cells;
7. undo of the last change, from the snapshot history.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from nbedit.engine.models import Plan
    from nbedit.workspace import Workspace

__all__ = ["SAMPLES", "copy_samples", "run"]

SAMPLES = ("inventory.py", "notes.md", "stock.ipynb")

GIT_DIFF = """\
diff --git a/notes.md b/notes.md
--- a/notes.md
+++ b/notes.md
@@ -1,4 +1,5 @@
 # Stock keeper notes
\x20
 - Counts are whole numbers.
-- Removing more than is in stock is allowed for now.
+- Removing more than is in stock is refused.
+- Totals are recomputed on every call.
"""

APPLY_PATCH = """\
*** Begin Patch
*** Update File: inventory.py
@@ def remove(self, name: str, count: int = 1) -> None:
         if count <= 0:
             raise ValueError("count must be positive")
-        self.items[name] = self.items.get(name, 0) - count
+        available = self.items.get(name, 0)
+        if count > available:
+            raise ValueError(f"only {available} {name} in stock")
+        self.items[name] = available - count
*** End Patch
"""

# The model typed straight quotes; the file has curly ones.
SEARCH_REPLACE = """\
inventory.py
<<<<<<< SEARCH
        \"\"\"Return the "total" number of items in stock.\"\"\"
=======
        \"\"\"Return how many items are in stock, all names together.\"\"\"
>>>>>>> REPLACE
"""

AMBIGUOUS_OLD = 'raise ValueError("count must be positive")'

STALE_OLD = """\
    def total(self):
        return len(self.items)
"""


def copy_samples(destination: Path) -> None:
    """Copy the bundled sample files into ``destination``."""
    folder = resources.files("nbedit.demo") / "samples"
    for name in SAMPLES:
        (destination / name).write_bytes((folder / name).read_bytes())


def _step(console: Console, number: int, title: str, explanation: str) -> None:
    console.print()
    console.rule(f"[bold]{number}. {title}", align="left")
    console.print(explanation, style="dim", markup=False)
    console.print()


def _show_and_apply(console: Console, workspace: Workspace, plan: Plan) -> None:
    from nbedit.render.terminal import print_plan

    print_plan(plan, console)
    result = workspace.apply(plan)
    console.print()
    console.print(f"[green]applied[/green]: wrote {', '.join(result.written)}", highlight=False)


def _show_refusal(console: Console, attempt: Callable[[], object]) -> None:
    from nbedit.errors import NbeditError
    from nbedit.render.errors import error_panel

    try:
        attempt()
    except NbeditError as error:
        console.print(error_panel(error))
        console.print("[yellow]refused[/yellow]: nothing was written", highlight=False)
    else:
        raise AssertionError("the demo expected nbedit to refuse this change, and it did not")


def run(console: Console | None = None) -> int:
    """Run the tour in a temporary folder; returns the exit status (0)."""
    from rich.console import Console

    from nbedit.workspace import Workspace

    console = console or Console(highlight=False)
    with tempfile.TemporaryDirectory(prefix="nbedit-demo-") as temporary:
        root = Path(temporary) / "project"
        root.mkdir()
        copy_samples(root)
        workspace = Workspace(root, home=Path(temporary) / "history", session="demo", origin="api")
        console.print(
            "[bold]nbedit tour[/bold]: sample files copied to a temporary folder; yours are not touched."
        )
        console.print(f"files: {', '.join(SAMPLES)}", style="dim", highlight=False)

        _step(
            console,
            1,
            "A git diff",
            "Hunks are located by their context lines, then shown before anything is written.",
        )
        _show_and_apply(console, workspace, workspace.plan_patch(GIT_DIFF))

        _step(
            console,
            2,
            "A Codex apply_patch block",
            "The @@ line names the scope; the hunk is searched inside it.",
        )
        _show_and_apply(console, workspace, workspace.plan_patch(APPLY_PATCH))

        _step(
            console,
            3,
            "SEARCH/REPLACE with drifted quotes",
            'The block says "total" with straight quotes; the file has curly ones. nbedit finds it '
            "but flags the match as not exact, so you look twice.",
        )
        _show_and_apply(console, workspace, workspace.plan_patch(SEARCH_REPLACE))

        _step(
            console,
            4,
            "An edit that matches twice",
            "Other tools silently take the first match. nbedit refuses and lists every location.",
        )
        _show_refusal(
            console, lambda: workspace.plan_edit("inventory.py", AMBIGUOUS_OLD, 'raise ValueError("no")')
        )

        _step(
            console,
            5,
            "An edit written against an older version",
            "Nothing close enough to be sure: refused, with the closest places and how they differ.",
        )
        _show_refusal(
            console,
            lambda: workspace.plan_edit(
                "inventory.py", STALE_OLD, "    def total(self):\n        return 0\n"
            ),
        )

        _step(
            console,
            6,
            "A notebook cell edit",
            "Notebooks are edited through a cell view; the preview names the cell, the JSON stays intact.",
        )
        notebook_plan = workspace.plan_edit(
            "stock.ipynb", 'stock.add("apples", 3)', 'stock.add("apples", 5)', cell="cell-1"
        )
        _show_and_apply(console, workspace, notebook_plan)
        notebook_before = notebook_plan.files[0].before_bytes

        _step(console, 7, "Undo", "Every apply is recorded; undo puts the files back as they were before it.")
        result = workspace.undo()
        console.print(f"[green]undone[/green]: restored {', '.join(result.written)}", highlight=False)
        same = (root / "stock.ipynb").read_bytes() == notebook_before
        state = "byte for byte as before the cell edit" if same else "NOT as before the cell edit"
        console.print(f"stock.ipynb is {state}", highlight=False)
        console.print()
        console.print("[bold]done[/bold]: the temporary folder is removed; try [bold]nbedit --help[/bold].")
    return 0


def main() -> int:
    return run()
