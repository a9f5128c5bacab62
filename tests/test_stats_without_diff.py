"""The +/- counts of a diff applied where it says come without the diff module (a first apply's import).

``diff_counts.lone_exact_stats`` counts a plan whose hunks are each a diff block of their own as
located; anything else is ``None`` and ``diff.file_stats`` counts it as before. Both must agree with
the diff itself (``diff_stats(file_diff(...))``), which is what the history records.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nbedit.engine.diff import diff_stats, file_diff, file_stats
from nbedit.engine.diff_counts import lone_exact_stats
from nbedit.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]


def _lines(count: int) -> list[str]:
    return [f"value_{number} = compute({number})\n" for number in range(count)]


def _hunk(lines: list[str], changed: int, new: list[str]) -> str:
    """One hunk replacing line ``changed`` (0-based) with ``new``, three lines of context."""
    first = changed - 3
    body = "".join(" " + line for line in lines[first:changed]) + "-" + lines[changed]
    body += "".join("+" + line for line in new)
    body += "".join(" " + line for line in lines[changed + 1 : changed + 4])
    return f"@@ -{first + 1},7 +{first + 1},{6 + len(new)} @@\n" + body


@pytest.mark.parametrize(
    ("places", "lone"),
    [
        ((10, 40, 70), True),  # far apart: each hunk a block of its own
        ((10, 18), False),  # close: the diff joins them into one block of two
    ],
)
def test_the_counts_are_the_diffs_with_or_without_the_quick_path(
    tmp_path: Path, places: tuple[int, ...], lone: bool
) -> None:
    lines = _lines(100)
    (tmp_path / "f.py").write_text("".join(lines))
    patch = "--- a/f.py\n+++ b/f.py\n" + "".join(
        _hunk(lines, place, [f"value_{place} = 0\n", "extra = 1\n"]) for place in places
    )
    file_plan = Workspace(tmp_path, history=False).plan_patch(patch).files[0]
    expected = diff_stats(file_diff(file_plan))
    assert expected == (2 * len(places), len(places))
    assert (lone_exact_stats(file_plan) is not None) == lone
    if lone:
        assert lone_exact_stats(file_plan) == expected
    assert file_stats(file_plan) == expected


def test_a_plan_without_hunks_is_left_to_the_diff_module(tmp_path: Path) -> None:
    (tmp_path / "new.py").write_text("")
    workspace = Workspace(tmp_path, history=False)
    file_plan = workspace.plan_patch("--- /dev/null\n+++ b/added.py\n@@ -0,0 +1,2 @@\n+a\n+b\n").files[0]
    assert lone_exact_stats(file_plan) is None
    assert file_stats(file_plan) == diff_stats(file_diff(file_plan)) == (2, 0)


def test_an_apply_with_history_counts_without_importing_the_diff_module(tmp_path: Path) -> None:
    lines = _lines(200)
    (tmp_path / "f.py").write_text("".join(lines))
    hunks = "".join(_hunk(lines, place, ["changed = 1\n"]) for place in (20, 90, 150))
    patch = "--- a/f.py\n+++ b/f.py\n" + hunks
    (tmp_path / "change.diff").write_text(patch)
    program = (
        "import sys\nfrom nbedit.workspace import Workspace\n"
        "w = Workspace(sys.argv[1], history=True, home=sys.argv[2])\n"
        "plan = w.plan_patch(open(sys.argv[3]).read())\n"
        "result = w.apply(plan)\n"
        "print(result.entry_id is not None, plan.stats(), 'nbedit.engine.diff' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", program, str(tmp_path), str(tmp_path / "home"), str(tmp_path / "change.diff")],
        capture_output=True, text=True, env=env, check=True,
    ).stdout.strip()  # fmt: skip
    assert out == "True {'f.py': (3, 3)} False"
