"""The readings of issue 21 (``nbedit.engine.readings``) on made replies over real modules: never wrong.

``python -m benchmarks.bench_readings`` (about two minutes on a loaded machine): windows of 6-10 lines of the standard
library's json, email, logging, http and urllib packages (as installed), each edited by one
changed line, and the reply's old text made the way real replies get it wrong:

- ``skipped-context``: one kept line left out (not next to the change) -> the edit, or a refusal;
- ``insert-at-gap``: lines added where a line was left out -> a refusal (where is not said);
- ``line-numbers``: ``cat -n`` numbers before every line -> the edit;
- ``elision``: 1-3 kept lines replaced by ``# ... existing code ...`` in old and new -> the edit;
- ``joined-replaced``: the file splits a line the reply has whole, and the change replaces it -> the edit;
- ``joined-kept``: the same, the change keeps that line -> a refusal or the edit with the file's lines;
- ``blank-kept``: the file has a blank line the reply's kept lines lack -> the edit, the blank line kept;
- ``blank-insert``: lines added at that blank line -> a refusal;
- ``once-per-place``: one block repeated once per place its line occurs -> every place; one block
  fewer or more -> a refusal.

Windows whose text stands twice in the module, at any indentation, are skipped (their SEARCH
may name the other place).
Exit status 1 when any result is wrong.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import nbedit
from nbedit.errors import NbeditError

PACKAGES = ("json", "email", "logging", "http", "urllib")
NEVER = "\0a refusal is due"


def _modules() -> list[Path]:
    found: list[Path] = []
    for name in PACKAGES:
        module = __import__(name)
        found.extend(sorted(Path(module.__file__).parent.glob("*.py")))  # type: ignore[arg-type]
    return found


def _joined(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _block(old: str, new: str) -> str:
    return f"m.py\n```python\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n```\n"


def _outcome(scratch: Path, text: str, change: str, oracles: tuple[str, ...]) -> str:
    with tempfile.TemporaryDirectory(dir=scratch) as folder:
        (Path(folder) / "m.py").write_text(text)
        workspace = nbedit.Workspace(folder, history=False)
        try:
            workspace.apply(workspace.plan_patch(change))
        except NbeditError:
            return "refused"
        finally:
            workspace.close()
        return "right" if (Path(folder) / "m.py").read_text() in oracles else "wrong"


def cases(rng: random.Random, windows: int = 450):  # type: ignore[no-untyped-def]
    """(kind, file text, reply, acceptable results) for made replies over real modules."""
    modules = _modules()
    for _ in range(windows):
        text = rng.choice(modules).read_text(encoding="utf-8")
        lines = text.split("\n")[:-1]
        if len(lines) < 40:
            continue
        start, size = rng.randrange(0, len(lines) - 14), rng.randrange(6, 11)
        window = lines[start : start + size]
        if sum(1 for line in window if line.strip()) < 5:
            continue
        stripped = "\n".join(line.strip() for line in window[1:-1])
        if "\n".join(line.strip() for line in lines).count(stripped) > 1:
            continue  # the window stands twice (at any indentation): its SEARCH may name the other
        changeable = [n for n in range(1, size - 1) if window[n].strip()]
        if not changeable:
            continue
        changed = rng.choice(changeable)
        edited = list(window)
        edited[changed] = window[changed] + "  # changed"
        oracle = _joined(lines[:start] + edited + lines[start + size :])
        kept = [n for n in range(1, size - 1) if abs(n - changed) > 1 and window[n].strip()]
        if kept:
            left_out = rng.choice(kept)
            old, new = window[:left_out] + window[left_out + 1 :], edited[:left_out] + edited[left_out + 1 :]
            yield "skipped-context", text, _block(_joined(old), _joined(new)), (oracle,)
            added = window[:left_out] + ["    inserted()"] + window[left_out + 1 :]
            yield "insert-at-gap", text, _block(_joined(old), _joined(added)), (NEVER,)
        width = len(str(start + size))
        numbered = [f"{start + n + 1:>{width}}\t{line}" for n, line in enumerate(window)]
        renumbered = [f"{start + n + 1:>{width}}\t{line}" for n, line in enumerate(edited)]
        yield "line-numbers", text, _block(_joined(numbered), _joined(renumbered)), (oracle,)
        spans = [
            (first, last)
            for first in range(1, size - 1)
            for last in range(first + 1, min(first + 4, size - 1))
            if changed < first - 1 or changed > last
        ]
        if spans:
            first, last = rng.choice(spans)
            indent = window[first][: len(window[first]) - len(window[first].lstrip())]
            mark = [indent + "# ... existing code ..."]
            old, new = window[:first] + mark + window[last:], edited[:first] + mark + edited[last:]
            yield "elision", text, _block(_joined(old), _joined(new)), (oracle,)
        splittable = [n for n in range(size) if ", " in window[n] and len(window[n]) > 30]
        if splittable:
            line = rng.choice(splittable)
            at = window[line].index(", ") + 1
            indent = window[line][: len(window[line]) - len(window[line].lstrip())]
            split = [window[line][:at], indent + "    " + window[line][at:].lstrip()]
            spread = lines[: start + line] + split + lines[start + line + 1 :]
            replaced = list(window)
            replaced[line] = window[line] + "  # changed"
            wanted = _joined(spread[: start + line] + [replaced[line]] + spread[start + line + 2 :])
            yield "joined-replaced", _joined(spread), _block(_joined(window), _joined(replaced)), (wanted,)
            if line != changed:
                at_line = start + changed + (0 if changed < line else 1)
                wanted = _joined(spread[:at_line] + [edited[changed]] + spread[at_line + 1 :])
                yield "joined-kept", _joined(spread), _block(_joined(window), _joined(edited)), (wanted,)
        gaps = [
            n
            for n in range(1, size)
            if abs(n - changed) > 1 and abs(n - 1 - changed) > 1
            if window[n].strip() and window[n - 1].strip()
        ]
        if gaps:
            gap = rng.choice(gaps)
            spaced = _joined(lines[: start + gap] + [""] + lines[start + gap :])
            wanted = _joined(lines[:start] + edited[:gap] + [""] + edited[gap:] + lines[start + size :])
            yield "blank-kept", spaced, _block(_joined(window), _joined(edited)), (wanted,)
            added = window[:gap] + ["x = 1"] + window[gap:]
            yield "blank-insert", spaced, _block(_joined(window), _joined(added)), (NEVER,)
        counts = Counter(line for line in lines if len(line.strip()) > 8)
        repeated = sorted(line for line, count in counts.items() if 2 <= count <= 4)
        if repeated:
            line = rng.choice(repeated)
            block = _block(line + "\n", line + "  # changed\n")
            every = _joined([item + "  # changed" if item == line else item for item in lines])
            yield "once-per-place", text, "\n".join([block] * counts[line]), (every,)
            other = counts[line] - 1 if counts[line] > 2 else counts[line] + 1
            yield "once-per-place-wrong-count", text, "\n".join([block] * other), (NEVER,)


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    results: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for kind, text, change, oracles in cases(random.Random(21)):
            results.setdefault(kind, Counter())[_outcome(Path(scratch), text, change, oracles)] += 1
    if argv and "--json" in argv:
        print(json.dumps({kind: dict(counts) for kind, counts in results.items()}, indent=2))
    else:
        print(f"readings on made replies over {', '.join(PACKAGES)}: {time.perf_counter() - started:.0f} s")
        print("| reading | cases | right | refused | wrong |")
        print("|---|---:|---:|---:|---:|")
        for kind, counts in results.items():
            total = sum(counts.values())
            print(f"| {kind} | {total} | {counts['right']} | {counts['refused']} | {counts['wrong']} |")
    return 1 if any(counts["wrong"] for counts in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
