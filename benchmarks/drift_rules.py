"""Issue 21's rules as drift cases, on projects the drift corpus does not use (traitlets, tornado,
jupyter_client, pygments: the installed sources of the test extras).

Each case is a change a model could write to a real module, with the place it means; the
outcome is **right** (that place, exactly the change), **refused** (an ``NbeditError``,
nothing written) or **wrong** (anything else). Three rules:

- ``far-line-number``: a line that occurs twice; a unified hunk (no context) meant for the
  first, whose line number is 2 lines from the *second*: the number is garbage, the hunk
  must not land at the second (GNU patch does).
- ``anchor-twice``: a Codex ``@@`` anchor line that occurs twice; the hunk is exactly in the
  body after the second occurrence and, drifted in layout, after the first: the exact fit wins.
- ``elision``: an old text with an elision line (``# ... existing code ...``) standing for
  the middle of a block: never matched as text; nbedit refuses it (expanding it is not done).

``python -m benchmarks.drift_rules`` prints the counts; ``tests/test_drift_rules.py`` runs a
sample and asserts 0 wrong.
"""

from __future__ import annotations

import importlib
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from nbedit.errors import NbeditError
from nbedit.workspace import Workspace

__all__ = ["RuleCase", "cases", "judge", "main", "sources"]

PROJECTS = ("traitlets", "tornado", "jupyter_client", "pygments")


@dataclass(frozen=True, slots=True)
class RuleCase:
    rule: str
    path: str
    before: str
    change: str  # a patch text (plan_patch)
    expected: str  # the file after the change at the meant place


def sources(limit_per_project: int = 12) -> dict[str, str]:
    """Python modules of the projects, ``project/relative/path.py`` -> text (sorted, the first few)."""
    found: dict[str, str] = {}
    for name in PROJECTS:
        try:
            package = importlib.import_module(name)
        except ImportError:
            continue
        root = Path(package.__file__).parent  # type: ignore[arg-type]
        files = sorted(path for path in root.rglob("*.py") if path.stat().st_size < 200_000)
        taken = 0
        for path in files:
            text = path.read_text(encoding="utf-8", errors="replace")
            if "\r" in text or "\t" in text or len(text.splitlines()) < 60:
                continue
            found[f"{name}/{path.relative_to(root).as_posix()}"] = text
            taken += 1
            if taken >= limit_per_project:
                break
    return found


def _far_line_number(path: str, text: str, rng: random.Random) -> Iterator[RuleCase]:
    lines = text.split("\n")
    seen: dict[str, list[int]] = {}
    for number, line in enumerate(lines):
        if len(line.strip()) >= 12 and not line.strip().startswith("#"):
            seen.setdefault(line, []).append(number)
    repeated = [
        (line, places) for line, places in seen.items() if len(places) == 2 and places[1] - places[0] > 8
    ]
    for line, (first, second) in rng.sample(repeated, min(3, len(repeated))):
        new_line = line + "  # changed"
        claimed = second + 1 - 2  # 1-based, two lines above the second place: garbage for the first
        change = f"--- a/{path}\n+++ b/{path}\n@@ -{claimed},1 +{claimed},1 @@\n-{line}\n+{new_line}\n"
        expected = "\n".join(lines[:first] + [new_line] + lines[first + 1 :])
        yield RuleCase("far-line-number", path, text, change, expected)


def _anchor_twice(path: str, text: str, rng: random.Random) -> Iterator[RuleCase]:
    lines = text.split("\n")
    heads: dict[str, list[int]] = {}
    for number, line in enumerate(lines):
        if line.lstrip().startswith("def ") and line.rstrip().endswith(":"):
            heads.setdefault(line, []).append(number)
    for head, places in heads.items():
        if len(places) < 2:
            continue
        second = places[1]
        body = lines[second + 1 : second + 4]
        if (
            len(body) < 3
            or not all(line.strip() for line in body)
            or any('"""' in line or "'''" in line for line in body)
        ):
            continue
        first_body = lines[places[0] + 1 : places[0] + 4]
        if first_body == body:
            continue
        new_body = [body[0], body[1] + "  # changed", body[2]]
        chunk = "".join(f" {body[0]}\n-{body[1]}\n+{new_body[1]}\n {body[2]}\n")
        change = f"*** Begin Patch\n*** Update File: {path}\n@@ {head.strip()}\n{chunk}*** End Patch\n"
        expected = "\n".join(lines[: second + 1] + new_body + lines[second + 4 :])
        yield RuleCase("anchor-twice", path, text, change, expected)
        if rng.random() < 0.5:
            break


def _elision(path: str, text: str, rng: random.Random) -> Iterator[RuleCase]:
    lines = text.split("\n")
    starts = [
        n
        for n, line in enumerate(lines[:-8])
        if line.startswith("def ") and all(lines[n + k].strip() for k in range(8))
    ]
    for start in rng.sample(starts, min(2, len(starts))):
        block = lines[start : start + 8]
        old = [*block[:2], "    # ... existing code ...", *block[6:8]]
        new = [block[0], "    import logging", *old[1:]]
        change = (
            f"{path}\n<<<<<<< SEARCH\n"
            + "\n".join(old)
            + "\n=======\n"
            + "\n".join(new)
            + "\n>>>>>>> REPLACE\n"
        )
        expected = "\n".join(lines[: start + 1] + ["    import logging"] + lines[start + 1 :])
        yield RuleCase("elision", path, text, change, expected)


def cases(files: dict[str, str], seed: int = 21) -> list[RuleCase]:
    rng = random.Random(seed)
    made: list[RuleCase] = []
    for path, text in sorted(files.items()):
        for maker in (_far_line_number, _anchor_twice, _elision):
            made.extend(maker(path, text, rng))
    return made


def judge(case: RuleCase, root: Path) -> str:
    root.mkdir(parents=True, exist_ok=True)
    target = root / case.path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(case.before, encoding="utf-8")
    workspace = Workspace(root, history=False, live=None)
    try:
        plan = workspace.plan_patch(case.change)
        workspace.apply(plan)
    except NbeditError:
        return "refused" if target.read_text(encoding="utf-8") == case.before else "wrong"
    finally:
        workspace.close()
    return "right" if target.read_text(encoding="utf-8") == case.expected else "wrong"


def main() -> int:
    made = cases(sources())
    tally: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for number, case in enumerate(made):
            root = Path(folder) / str(number)
            root.mkdir()
            tally.setdefault(case.rule, Counter())[judge(case, root)] += 1
    print("| rule | cases | right | refused | wrong |")
    print("|---|---|---|---|---|")
    for rule, count in tally.items():
        print(
            f"| {rule} | {sum(count.values())} | {count['right']} | {count['refused']} | {count['wrong']} |"
        )
    return 1 if any(count["wrong"] for count in tally.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
