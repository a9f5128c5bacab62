"""What the syntax guard adds to a plan on a 10,000-line Python file (target: < 5 ms).

``python -m benchmarks.bench_syntax`` (or ``python -m benchmarks.run --section syntax``): a module of 10,000 lines (functions, and a
class holding many methods), one edit placed by the indentation tier (so the guard
runs), planned with ``Workspace.plan_edit``. The guard's own time is measured by
calling ``nbedit.engine.syntax.text_problem`` on the same spans (best of 25), next
to the whole plan and to parsing the whole file with ``ast`` (what a naive guard would
pay twice). Rows: an edit in a top-level function, and in a method of a class of
5,000 lines (the excerpt is the whole class: the worst case short of a parse error).
"""

from __future__ import annotations

import ast
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.timing import Row
from nbedit.engine.syntax import text_problem
from nbedit.workspace import Workspace

TARGET_MS = 5.0


def _function(number: int, indent: str = "") -> str:
    body = [
        f"def step_{number}(items, limit={number % 7}):",
        f'    """Step {number}: filter, scale and sum."""',
        "    total = 0",
        "    for item in items:",
        "        if item is None:",
        "            continue",
        "        value = item * limit + 1",
        "        if value > 100:",
        "            value = 100",
        "        total += value",
        "    result = {'total': total, 'count': len(items)}",
        "    return result",
        "",
        "",
    ]
    return "".join(indent + line + "\n" if line else "\n" for line in body)


def module(lines: int = 10_000) -> str:
    """Half top-level functions, half methods of one class."""
    functions = lines // 2 // 14
    methods = lines // 2 // 14
    head = "import os\n\n\n" + "".join(_function(n) for n in range(functions))
    body = "class Big:\n" + "".join(
        _function(n, "    ").replace("(items,", "(self, items,") for n in range(methods)
    )
    return head + body


def _best(call, repeat: int = 25) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def measure(where: str, text: str, root: Path) -> dict[str, float]:
    (root / "big.py").write_text(text)
    workspace = Workspace(root, history=False, live=None)
    anchor = "\ndef step_150(" if where == "function" else "\n    def step_150("
    start = text.index(anchor) + 1
    exact_old = text[start : text.index("\n", text.index("total = 0", start)) + 1]
    indent = "        " if where == "method" else "    "
    exact_new = exact_old + f"{indent}seen = 0\n"
    # the model's copy is 2 spaces deeper throughout: the indentation tier places it
    old = "".join("  " + line for line in exact_old.splitlines(True))
    new = "".join("  " + line for line in exact_new.splitlines(True))
    plan = workspace.plan_edit("big.py", old, new)
    hunk = plan.files[0].hunks[0]
    assert hunk.tier.value != "exact", hunk.tier
    spans = [(hunk.match.start, hunk.match.end, hunk.match.replacement)]
    after = plan.files[0].after
    assert text_problem("big.py", text, after, spans) is None
    return {
        "guard_ms": _best(lambda: text_problem("big.py", text, after, spans)),
        "plan_ms": _best(lambda: workspace.plan_edit("big.py", old, new), 9),
        "whole_parse_ms": _best(lambda: ast.parse(text), 5),
    }


def run(scratch: Path, repeat: int = 5) -> list[Row]:
    """The ``syntax`` section of ``python -m benchmarks.run``: one row per edit place."""
    text = module()
    rows = []
    for where in ("function", "method"):
        folder = scratch / where
        folder.mkdir()
        row = measure(where, text, folder)
        rows.append(
            Row(
                "syntax",
                f"syntax guard, lenient edit in a {where} of 10,000 lines",
                row["guard_ms"] / 1000,
                "s",
                "ast.parse of the whole file",
                row["whole_parse_ms"] / 1000,
                f"< {TARGET_MS:.0f} ms",
                row["guard_ms"] < TARGET_MS,
                note=f"whole plan {row['plan_ms']:.1f} ms",
            )
        )
    return rows


def main() -> int:
    text = module()
    failed = False
    print(f"syntax guard on a {text.count(chr(10)):,}-line Python module (best of 25)")
    print("| edit in | guard | whole plan | ast.parse of the file | target |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for where in ("function", "method"):
            row = measure(where, text, Path(folder))
            ok = row["guard_ms"] < TARGET_MS
            failed |= not ok
            print(
                f"| a {where} | {row['guard_ms']:.2f} ms | {row['plan_ms']:.1f} ms | "
                f"{row['whole_parse_ms']:.1f} ms | < {TARGET_MS:.0f} ms {'pass' if ok else '**FAIL**'} |"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
