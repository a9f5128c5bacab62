"""How nbedit reads the real replies in ``tests/data/real-replies``, apart from how it matches them.

``python -m benchmarks.bench_reply_reading`` (a few seconds) parses every SEARCH/REPLACE and
unified-diff reply of the corpus (``benchmarks/real_replies.py`` loads it; both come with the
real-replies replay) and checks what a
reader must get right before any matching: the reply parses, and it names exactly the files the
committed change touched. A path with backslashes counts as read when its ``/`` reading is one of
those files (the planner resolves it against the files there are). Replies whose corpus entry is
keyed by a name aider itself misread (``<source>python``) cannot be checked against the commit:
they are counted apart, with the paths read (a tag read as a path is a failure there too). Each failure is printed with its cause; exit status
1 when any reply is not read.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from nbedit.engine.formats import parse
from nbedit.errors import PatchSyntaxError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from benchmarks.real_replies import RealCase

_DIALECTS = {"search_replace": "search_replace", "udiff": "unified"}


def _reading(case: RealCase) -> tuple[str, str]:
    """(verdict, detail) for one reply: read, unreadable, other-files, or unverifiable."""
    try:
        change = parse(case.text or "", dialect=_DIALECTS[case.dialect])
    except PatchSyntaxError as error:
        first = str(error).splitlines()[0]
        return "unreadable", first
    read = {file_change.path.replace("\\", "/") for file_change in change.files}
    if any(path.startswith("<") for path in read):
        return "other-files", f"read a tag as a path: {sorted(read)}"
    if all(path.startswith("<") for path in case.before):
        return "unverifiable", ", ".join(sorted(read))
    touched = {path.replace("\\", "/") for path in case.before}
    touched |= {path.replace("\\", "/") for right in case.right for path in right}
    if read <= touched and read:
        return "read", ""
    return "other-files", f"read {sorted(read)}, the commit touched {sorted(touched)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    try:
        from benchmarks.real_replies import load_cases
    except ImportError:
        print(
            "the real-replies corpus and its loader (benchmarks/real_replies.py) are not here",
            file=sys.stderr,
        )
        return 2
    cases = [case for case in load_cases() if case.dialect in _DIALECTS]
    verdicts: Counter[tuple[str, str]] = Counter()
    failures: list[str] = []
    for case in cases:
        verdict, detail = _reading(case)
        verdicts[(case.dialect, verdict)] += 1
        if verdict in ("unreadable", "other-files"):
            failures.append(f"  {case.id} [{case.dialect}] {verdict}: {detail}")
        elif verdict == "unverifiable":
            failures.append(
                f"  {case.id} [{case.dialect}] unverifiable (the corpus keys it by aider's misreading); read {detail}"
            )
    print(f"real replies read: {len(cases)} SEARCH/REPLACE and unified-diff replies")
    print("| dialect | read | unreadable | other files | unverifiable |")
    print("|---|---|---|---|---|")
    for dialect in _DIALECTS:
        row = [
            verdicts[(dialect, verdict)] for verdict in ("read", "unreadable", "other-files", "unverifiable")
        ]
        print(f"| {dialect} | " + " | ".join(map(str, row)) + " |")
    print("\n".join(failures))
    bad = sum(count for (_, verdict), count in verdicts.items() if verdict in ("unreadable", "other-files"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
