"""Replies with curled quotes on real files and notebooks: ``python -m benchmarks.bench_curled_replies``.

Prints right / refused / wrong per source and edit kind (see ``benchmarks/curled_replies.py``),
and every wrong case. Exit status 1 when any result is wrong.
"""

from __future__ import annotations

import sys
import time

from benchmarks.curled_replies import NOTEBOOKS, made_cases, real_reply_cases, run, tally
from benchmarks.real_replies import load_cases


def python_files() -> dict[str, str]:
    """The distinct ``.py`` texts the real replies were made to (latest version of each path)."""
    files: dict[str, str] = {}
    for case in load_cases():
        for path, text in case.before.items():
            if text is not None and path.endswith(".py"):
                files[path] = text
    return files


def main() -> int:
    started = time.perf_counter()
    made = made_cases(python_files(), sorted(NOTEBOOKS.glob("*.ipynb")))
    real = real_reply_cases()
    outcomes = run(made, real)
    seconds = time.perf_counter() - started
    table = tally(outcomes)
    print(f"curled replies: {len(outcomes)} edits in {seconds:.0f} s")
    print("| source | edit | cases | right | refused | wrong | wrong, not compiling |")
    print("|---|---|---|---|---|---|---|")
    for (source, kind), count in sorted(table.items()):
        cases = count["right"] + count["refused"] + count["wrong"]
        print(
            f"| {source} | {kind} | {cases} | {count['right']} | {count['refused']} | {count['wrong']} | "
            f"{count['wrong, does not compile']} |"
        )
    wrong = [outcome for outcome in outcomes if outcome.outcome == "wrong"]
    for outcome in wrong[:40]:
        print(f"  wrong: {outcome.source} {outcome.kind} {outcome.reason} {outcome.label[:300]}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
