"""Replies whose quotes a chat interface curled, applied to real files and notebooks: never wrong.

Chat interfaces render a reply's straight quotes as typographic ones (``"x"`` as ``“x”``,
``it's`` as ``it’s``); a user who copies the reply copies the curled text. nbedit finds
the old text through its quote tier; this replay checks that what it *writes* is the
file's spelling too, so no ``print("hello", end=“”)`` lands in code.

Three sources, every edit real or made on real code, every reply curled by ``curl``:

- ``real-replies``: the real model edits of ``tests/data/real-replies`` whose target is
  a ``.py`` file and whose reply holds a quote (SEARCH/REPLACE replies and old/new pairs),
  judged against the committed result as ``benchmarks.real_replies`` judges them;
- ``python``: the ``.py`` files those edits were made to, with three edits per line that
  holds a string (its text changed, a keyword argument with a string added to a call,
  a line with a string added after it);
- ``notebooks``: the same edits on the code cells of the real notebooks in
  ``tests/data/notebooks``, judged on the cell sources read back with ``json``.

The expected result of a made edit is ``text.replace(old, new, 1)`` of the *straight*
edit (never nbedit's output). Outcomes: **right** (the expected bytes or cell sources),
**refused** (an ``NbeditError``; nothing written), **wrong** (anything else, and whether
the wrong Python still compiles). ``python -m benchmarks.bench_curled_replies`` prints
the table; ``tests/test_curled_replies.py`` runs a sample.
"""

from __future__ import annotations

import ast
import json
import re
import tempfile
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.real_replies import RealCase, load_cases, replay_case
from nbedit.errors import NbeditError
from nbedit.workspace import Workspace

__all__ = ["CurledCase", "curl", "made_cases", "real_reply_cases", "run", "tally"]

NOTEBOOKS = Path(__file__).resolve().parent.parent / "tests" / "data" / "notebooks"
_OPENERS = " \t\n([{=,:;<>+-*/%!&|^~@"
_STRING = re.compile(r"""(?<![\w'"])(?:[rbuRBUfF]{0,2})("[^"\\\n]*"|'[^'\\\n]*')""")


def curl(text: str) -> str:
    """``text`` with straight quotes typographic, as chat interfaces render them.

    A quote after a space, an opening bracket or an operator (or at the start) opens;
    any other closes; an apostrophe inside a word is a closing single quote.
    """
    out: list[str] = []
    previous = "\n"
    for char in text:
        if char == '"':
            out.append("\u201c" if previous in _OPENERS else "\u201d")
        elif char == "'":
            out.append("\u2018" if previous in _OPENERS else "\u2019")
        else:
            out.append(char)
        previous = char
    return "".join(out)


@dataclass(frozen=True, slots=True)
class CurledCase:
    source: str  # real-replies | python | notebooks
    kind: str  # the edit: reply | string-changed | argument-added | line-added
    path: str
    before: str  # the file text (a notebook: its JSON)
    old: str  # straight
    new: str
    real: RealCase | None = None

    @property
    def expected(self) -> str:
        return self.before.replace(self.old, self.new, 1)


def _compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _edits(source: str) -> Iterator[tuple[str, str, str]]:
    """(kind, old, new) edits of the lines of ``source`` that hold a one-line string."""
    lines = source.split("\n")
    for number, line in enumerate(lines):
        found = _STRING.search(line)
        if found is None or '"""' in line or "'''" in line or line.lstrip().startswith("#"):
            continue
        quote = found.group(1)[0]
        body = found.group(1)[1:-1]
        yield (
            "string-changed",
            line,
            line[: found.start(1)] + quote + body + " (edited)" + quote + line[found.end(1) :],
        )
        stripped = line.rstrip()
        if stripped.endswith(")") and "(" in stripped and not stripped.endswith("()"):
            yield (
                "argument-added",
                line,
                stripped[:-1] + f", label={quote}new{quote})" + line[len(stripped) :],
            )
        indent = line[: len(line) - len(line.lstrip())]
        if (
            number + 1 < len(lines)
            and lines[number + 1].strip()
            and not stripped.endswith((":", ",", "(", "[", "{", "\\"))
        ):
            following = lines[number + 1]
            yield (
                "line-added",
                f"{line}\n{following}",
                f'{line}\n{indent}print("checked {number}")\n{following}',
            )


def _usable(before: str, old: str, new: str) -> bool:
    if before.count(old) != 1 or curl(old) == old:
        return False
    return _compiles(before.replace(old, new, 1))  # an edit of ours that is not Python is not a case


def made_cases(
    python_files: dict[str, str], notebooks: Sequence[Path], per_file: int = 40
) -> list[CurledCase]:
    cases: list[CurledCase] = []
    for path, text in sorted(python_files.items()):
        if not _compiles(text):
            continue
        taken = 0
        for kind, old, new in _edits(text):
            if taken >= per_file:
                break
            if _usable(text, old, new):
                cases.append(CurledCase("python", kind, path, text, old, new))
                taken += 1
    for notebook in notebooks:
        data = notebook.read_bytes().decode("utf-8")
        document = json.loads(data)
        language = (document.get("metadata", {}).get("kernelspec", {}) or {}).get("language", "python")
        if language != "python":
            continue
        sources = _sources(document.get("cells", []))
        joined = "\n".join(sources)
        taken = 0
        for cell, source in zip(document.get("cells", []), sources, strict=False):
            if cell.get("cell_type") != "code" or not _compiles(source):
                continue
            for kind, old, new in _edits(source):
                if taken >= per_file:
                    break
                if joined.count(old) == 1 and curl(old) != old and _compiles(source.replace(old, new, 1)):
                    cases.append(CurledCase("notebooks", kind, notebook.name, data, old, new))
                    taken += 1
    return cases


def real_reply_cases(cases: Sequence[RealCase] | None = None) -> list[RealCase]:
    """Right-labelled real edits of ``.py`` files whose reply holds a quote, the reply curled."""
    chosen = []
    for case in cases if cases is not None else load_cases():
        if not case.right_labelled or case.dialect == "udiff":
            continue
        if not all(path.endswith(".py") for path in case.before):
            continue
        text = case.text if case.text is not None else f"{case.old}\n{case.new}"
        if curl(text) == text:
            continue
        chosen.append(case)
    return chosen


def _curled_real(case: RealCase) -> RealCase:
    from dataclasses import replace

    if case.text is not None:
        return replace(case, text=curl(case.text))
    return replace(case, old=curl(case.old or ""), new=curl(case.new or ""))


@dataclass(frozen=True, slots=True)
class CurledOutcome:
    source: str
    kind: str
    outcome: str  # right | refused | wrong
    reason: str = ""
    compiles: bool | None = None  # for a wrong Python result: does it still compile?
    label: str = ""


def _sources(cells: Sequence[dict]) -> list[str]:
    sources = []
    for cell in cells:
        value = cell.get("source", "")
        sources.append("".join(value) if isinstance(value, list) else str(value))
    return sources


def _run_made(case: CurledCase, root: Path) -> CurledOutcome:
    target = root / case.path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(case.before.encode("utf-8"))
    workspace = Workspace(root, history=False, live=None)
    try:
        plan = workspace.plan_edit(case.path, curl(case.old), curl(case.new))
        workspace.apply(plan)
    except NbeditError as error:
        if target.read_bytes() != case.before.encode("utf-8"):
            return CurledOutcome(case.source, case.kind, "wrong", "a refusal changed the file")
        return CurledOutcome(case.source, case.kind, "refused", type(error).__name__)
    finally:
        workspace.close()
    got = target.read_bytes().decode("utf-8")
    label = f"{case.path}: {case.old!r} -> {case.new!r}"
    if case.source == "notebooks":
        before_cells = json.loads(case.before)["cells"]
        after_cells = json.loads(got)["cells"]
        wanted = _sources(before_cells)
        for number, source in enumerate(wanted):
            if case.old in source:
                wanted[number] = source.replace(case.old, case.new, 1)
                break
        have = _sources(after_cells)
        if have == wanted:
            return CurledOutcome(case.source, case.kind, "right")
        changed = [source for source, expected in zip(have, wanted, strict=False) if source != expected]
        return CurledOutcome(
            case.source, case.kind, "wrong", "cell sources differ", all(_compiles(s) for s in changed), label
        )
    if got == case.expected:
        return CurledOutcome(case.source, case.kind, "right")
    return CurledOutcome(case.source, case.kind, "wrong", "bytes differ", _compiles(got), label)


def run(made: Sequence[CurledCase], real: Sequence[RealCase]) -> list[CurledOutcome]:
    outcomes: list[CurledOutcome] = []
    with tempfile.TemporaryDirectory() as folder:
        for number, case in enumerate(made):
            root = Path(folder) / f"m{number}"
            root.mkdir()
            outcomes.append(_run_made(case, root))
    for case in real:
        judged = replay_case(_curled_real(case))
        kind = {"right": "right", "already-applied": "right", "refused": "refused"}.get(judged.kind, "wrong")
        compiles = None
        outcomes.append(CurledOutcome("real-replies", "reply", kind, judged.reason, compiles, case.id))
    return outcomes


def tally(outcomes: Sequence[CurledOutcome]) -> dict[tuple[str, str], Counter[str]]:
    table: dict[tuple[str, str], Counter[str]] = {}
    for outcome in outcomes:
        table.setdefault((outcome.source, outcome.kind), Counter())[outcome.outcome] += 1
        if outcome.outcome == "wrong" and outcome.compiles is False:
            table[(outcome.source, outcome.kind)]["wrong, does not compile"] += 1
    return table
