"""Real notebooks, changed the way Jupyter saves them, diffed by git, replayed by nbedit.

``git diff`` of an ``.ipynb`` is a diff of its raw JSON, and that is what people
commit and paste. This builds a real git history for each notebook in
``tests/data/notebooks`` (shipped in the sdists of nbformat, nbconvert and
nbclient; see its SOURCE.md): the notebook is committed as shipped, then a fixed
sequence of realistic changes is made and committed, each written by
``nbformat.write`` as Jupyter would (edit a line of a code cell, add, delete and
move cells, change markdown, clear or add outputs, renumber execution counts,
change notebook and cell metadata). Every ``git diff`` between consecutive commits
(with 3, 1 and 0 lines of context) is then applied to the earlier version through
``Workspace.plan_patch`` + ``apply``: the result must be the later version byte for
byte. A refusal must leave the file as it was.

Drifted notebooks too: each step's diff is applied to its before version after
a colleague added two lines to a cell the step leaves alone, so the hunks below
it sit at an offset. The intended result is the after version with the same two lines;
nbedit must write exactly that or refuse. ``git apply`` runs on the same bytes
for comparison.

Run ``python -m benchmarks.notebook_history`` for the table; the test suite runs
the same replay (``tests/test_notebook_history.py``).
"""

from __future__ import annotations

import json
import random
import subprocess
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CONTEXTS",
    "NOTEBOOKS",
    "Outcome",
    "Step",
    "drift_summary",
    "drifted",
    "drifted_outcomes",
    "history",
    "outcomes",
    "replay",
    "summary",
]

NOTEBOOKS = Path(__file__).resolve().parent.parent / "tests" / "data" / "notebooks"
CONTEXTS = (3, 1, 0)
_GIT = (
    "git",
    "-c",
    "user.name=nbedit",
    "-c",
    "user.email=nbedit@example.invalid",
    "-c",
    "core.autocrlf=false",
)


@dataclass(frozen=True, slots=True)
class Step:
    """One committed change: the notebook before and after, and git's diff of it at each context size."""

    notebook: str
    change: str
    before: bytes
    after: bytes
    diffs: dict[int, str]


@dataclass(frozen=True, slots=True)
class Outcome:
    step: Step
    context: int
    result: str  # "applied" (exactly the next version), "wrong", "refused", "refused-changed"
    detail: str = ""


# -- the changes, as a person in Jupyter would make them ----------------------------------------


def _cells(notebook: Any, cell_type: str | None = None) -> list[int]:
    return [
        index
        for index, cell in enumerate(notebook.cells)
        if cell_type is None or cell.get("cell_type") == cell_type
    ]


def _source_lines(cell: Any) -> list[str]:
    source = cell.get("source", "")
    return ("".join(source) if isinstance(source, list) else source).split("\n")


def _set_source(cell: Any, lines: list[str]) -> None:
    cell["source"] = "\n".join(lines)


def _new_cell(notebook: Any, cell_type: str, source: str, rng: random.Random) -> Any:
    import nbformat

    maker = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell}[cell_type]
    cell = maker(source)
    if notebook.get("nbformat_minor", 0) >= 5:
        cell["id"] = f"{rng.getrandbits(32):08x}"
    else:
        cell.pop("id", None)
    return cell


def edit_code_line(notebook: Any, rng: random.Random) -> bool:
    code = [index for index in _cells(notebook, "code") if any(_source_lines(notebook.cells[index]))]
    if not code:
        return False
    cell = notebook.cells[rng.choice(code)]
    lines = _source_lines(cell)
    number = rng.randrange(len(lines))
    lines[number] = lines[number] + "  # checked" if lines[number].strip() else "x = 1"
    _set_source(cell, lines)
    return True


def edit_markdown(notebook: Any, rng: random.Random) -> bool:
    markdown = _cells(notebook, "markdown")
    if not markdown:
        return False
    cell = notebook.cells[rng.choice(markdown)]
    lines = _source_lines(cell)
    lines.insert(rng.randrange(len(lines) + 1), "A sentence added in review, with “quotes” and café.")
    _set_source(cell, lines)
    return True


def add_code_cell(notebook: Any, rng: random.Random) -> bool:
    position = rng.randrange(len(notebook.cells) + 1)
    notebook.cells.insert(position, _new_cell(notebook, "code", "import math\nprint(math.pi)", rng))
    return True


def add_markdown_cell(notebook: Any, rng: random.Random) -> bool:
    position = rng.randrange(len(notebook.cells) + 1)
    notebook.cells.insert(position, _new_cell(notebook, "markdown", "## Notes\n\nMore to come.", rng))
    return True


def delete_cell(notebook: Any, rng: random.Random) -> bool:
    if len(notebook.cells) < 2:
        return False
    del notebook.cells[rng.randrange(len(notebook.cells))]
    return True


def move_cell(notebook: Any, rng: random.Random) -> bool:
    if len(notebook.cells) < 2:
        return False
    first = rng.randrange(len(notebook.cells) - 1)
    cells = notebook.cells
    cells[first], cells[first + 1] = cells[first + 1], cells[first]
    return True


def clear_outputs(notebook: Any, rng: random.Random) -> bool:
    changed = False
    for index in _cells(notebook, "code"):
        cell = notebook.cells[index]
        if cell.get("outputs") or cell.get("execution_count") is not None:
            cell["outputs"], cell["execution_count"] = [], None
            changed = True
    return changed


def add_output(notebook: Any, rng: random.Random) -> bool:
    import nbformat

    code = _cells(notebook, "code")
    if not code:
        return False
    cell = notebook.cells[rng.choice(code)]
    cell["outputs"] = [
        *cell.get("outputs", []),
        nbformat.v4.new_output("stream", name="stdout", text="3.141592653589793\nok\n"),
    ]
    cell["execution_count"] = rng.randrange(1, 40)
    return True


def renumber(notebook: Any, rng: random.Random) -> bool:
    code = _cells(notebook, "code")
    for count, index in enumerate(code, start=1):
        notebook.cells[index]["execution_count"] = count
        for output in notebook.cells[index].get("outputs", []):
            if output.get("output_type") == "execute_result":
                output["execution_count"] = count
    return bool(code)


def change_metadata(notebook: Any, rng: random.Random) -> bool:
    metadata = notebook.setdefault("metadata", {})
    metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    info = metadata.setdefault("language_info", {"name": "python"})
    info["version"] = "3.12.4"
    if notebook.cells:
        cell = notebook.cells[rng.randrange(len(notebook.cells))]
        cell.setdefault("metadata", {})["tags"] = ["parameters"]
    return True


CHANGES: tuple[Callable[[Any, random.Random], bool], ...] = (
    edit_code_line,
    add_code_cell,
    edit_markdown,
    delete_cell,
    add_output,
    change_metadata,
    move_cell,
    renumber,
    add_markdown_cell,
    clear_outputs,
)


def _git(folder: Path, *arguments: str) -> str:
    done = subprocess.run([*_GIT, *arguments], cwd=folder, capture_output=True, check=True)
    return done.stdout.decode("utf-8", "surrogateescape")


def history(source: Path, folder: Path) -> Iterator[Step]:
    """Commit ``source`` as shipped, then each change of ``CHANGES``; yield every step with git's diffs."""
    import nbformat

    rng = random.Random(source.name)
    folder.mkdir(parents=True, exist_ok=True)
    _git(folder, "init", "-q")
    target = folder / source.name
    target.write_bytes(source.read_bytes())
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "as shipped")
    # the first save in Jupyter rewrites the file in nbformat's canonical layout
    changes: list[tuple[str, Callable[[Any, random.Random], bool] | None]] = [("save in Jupyter", None)]
    changes += [(change.__name__.replace("_", " "), change) for change in CHANGES]
    changes += [("edit code and markdown", None)]
    for name, change in changes:
        before = target.read_bytes()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            notebook = nbformat.reads(before.decode("utf-8"), as_version=nbformat.NO_CONVERT)
            if change is not None and not change(notebook, rng):
                continue
            if name == "edit code and markdown":
                edit_code_line(notebook, rng)
                edit_markdown(notebook, rng)
            nbformat.write(notebook, str(target), version=nbformat.NO_CONVERT)
        after = target.read_bytes()
        if after == before:
            continue
        diffs = {context: _git(folder, "diff", f"-U{context}") for context in CONTEXTS}
        _git(folder, "commit", "-q", "-am", name)
        yield Step(source.name, name, before, after, diffs)


def replay(step: Step, context: int, folder: Path) -> Outcome:
    """Apply one of the step's diffs to its before version in a fresh folder."""
    from nbedit.errors import NbeditError
    from nbedit.workspace import Workspace

    folder.mkdir(parents=True, exist_ok=True)
    target = folder / step.notebook
    target.write_bytes(step.before)
    workspace = Workspace(folder, history=False)
    try:
        workspace.apply(workspace.plan_patch(step.diffs[context]))
    except NbeditError as error:
        result = "refused" if target.read_bytes() == step.before else "refused-changed"
        return Outcome(step, context, result, error.message)
    result = "applied" if target.read_bytes() == step.after else "wrong"
    return Outcome(step, context, result)


def drift(before: bytes, after: bytes) -> tuple[bytes, bytes] | None:
    """The notebook as a colleague changed it meanwhile, before and after the step's change.

    Two lines are added to the source of a cell the step leaves alone (one that occurs
    exactly once in both versions, at the same position: the middle one of those), so every hunk below it sits
    at an offset and the step's own lines are untouched. Returns the drifted before
    version and the intended result (the step's after version with the same two lines),
    or None when the step leaves no cell alone.
    """
    import nbformat

    def key(cell: Any) -> str:
        return json.dumps(cell, sort_keys=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = nbformat.reads(before.decode("utf-8"), as_version=nbformat.NO_CONVERT)
        new = nbformat.reads(after.decode("utf-8"), as_version=nbformat.NO_CONVERT)
        old_keys, new_keys = [key(cell) for cell in old.cells], [key(cell) for cell in new.cells]
        alone = [
            k
            for index, k in enumerate(old_keys)
            if index < len(new_keys)
            and new_keys[index] == k
            and old_keys.count(k) == 1
            and new_keys.count(k) == 1
        ]
        if not alone:
            return None
        chosen = alone[len(alone) // 2]
        for notebook, keys in ((old, old_keys), (new, new_keys)):
            cell = notebook.cells[keys.index(chosen)]
            source = cell.get("source", "")
            text = "".join(source) if isinstance(source, list) else source
            cell["source"] = text + "\n# added meanwhile\n# by a colleague"
        return tuple(  # type: ignore[return-value]
            (nbformat.writes(notebook, version=nbformat.NO_CONVERT) + "\n").encode("utf-8")
            for notebook in (old, new)
        )


def drifted(step: Step, context: int, folder: Path) -> tuple[Outcome, str] | None:
    """Apply ``step``'s diff to a drifted copy of its before version.

    The intended result is the step's after version with the same two lines (see
    ``drift``); None when the step leaves no cell alone. nbedit's outcome is "applied" (exactly that),
    "refused" or "wrong"; the second value is what ``git apply`` did on the same
    bytes ("applied", "wrong" or "refused"), for comparison.
    """
    from nbedit.errors import NbeditError
    from nbedit.workspace import Workspace

    drifted_pair = drift(step.before, step.after)
    if drifted_pair is None:
        return None
    start, intended = drifted_pair
    oracle = folder / "git"
    oracle.mkdir(parents=True)
    (oracle / step.notebook).write_bytes(start)
    (oracle / "change.diff").write_text(step.diffs[context], encoding="utf-8")
    done = subprocess.run(
        ["git", "apply", "--unidiff-zero", "change.diff"], cwd=oracle, capture_output=True, check=False
    )
    git_result = "refused" if done.returncode else "applied"
    if done.returncode == 0 and (oracle / step.notebook).read_bytes() != intended:
        git_result = "wrong"
    mine = folder / "nbedit"
    mine.mkdir()
    target = mine / step.notebook
    target.write_bytes(start)
    workspace = Workspace(mine, history=False)
    try:
        workspace.apply(workspace.plan_patch(step.diffs[context]))
    except NbeditError as error:
        result = "refused" if target.read_bytes() == start else "refused-changed"
        return Outcome(step, context, result, error.message), git_result
    return Outcome(step, context, "applied" if target.read_bytes() == intended else "wrong"), git_result


def drifted_outcomes(notebooks: Path = NOTEBOOKS) -> list[tuple[Outcome, str]]:
    """Every step's diff (after the first save in Jupyter) applied to a drifted copy (see ``drifted``)."""
    results: list[tuple[Outcome, str]] = []
    with tempfile.TemporaryDirectory(prefix="nbedit-notebook-drift-") as scratch:
        root = Path(scratch)
        for number, source in enumerate(sorted(notebooks.glob("*.ipynb"))):
            for index, step in enumerate(history(source, root / f"git-{number}")):
                if step.change == "save in Jupyter":
                    continue  # a whole-file rewrite: its context is the old layout, not nbformat's
                for context in CONTEXTS:
                    outcome = drifted(step, context, root / f"drift-{number}-{index}-{context}")
                    if outcome is not None:
                        results.append(outcome)
    return results


def outcomes(notebooks: Path = NOTEBOOKS) -> list[Outcome]:
    results: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="nbedit-notebook-history-") as scratch:
        root = Path(scratch)
        for number, source in enumerate(sorted(notebooks.glob("*.ipynb"))):
            for step_number, step in enumerate(history(source, root / f"git-{number}")):
                for context in CONTEXTS:
                    results.append(replay(step, context, root / f"replay-{number}-{step_number}-{context}"))
    return results


def drift_summary(results: list[tuple[Outcome, str]]) -> str:
    """Counts per context size for nbedit and for ``git apply`` on the same drifted notebooks."""
    rows = [
        "drifted notebooks (2 lines added to a cell the change leaves alone; intended: the same change there)",
        "context  diffs  nbedit applied/wrong/refused  git apply applied/wrong/refused",
    ]
    for context in CONTEXTS:
        chosen = [(outcome, git) for outcome, git in results if outcome.context == context]
        mine = [
            sum(1 for o, _ in chosen if o.result.startswith(name)) for name in ("applied", "wrong", "refused")
        ]
        theirs = [sum(1 for _, g in chosen if g == name) for name in ("applied", "wrong", "refused")]
        rows.append(
            f"-U{context:<6} {len(chosen):>5}  {'/'.join(map(str, mine)):>28}  {'/'.join(map(str, theirs)):>31}"
        )
    changed = sum(1 for outcome, _ in results if outcome.result == "refused-changed")
    rows.append(f"refusals that changed the file: {changed}")
    return "\n".join(rows)


def summary(results: list[Outcome]) -> str:
    rows = ["context  diffs  applied  wrong  refused  refused-but-changed"]
    for context in CONTEXTS:
        chosen = [outcome for outcome in results if outcome.context == context]
        counts = {
            name: sum(1 for o in chosen if o.result == name) for name in ("applied", "wrong", "refused")
        }
        changed = sum(1 for o in chosen if o.result == "refused-changed")
        rows.append(
            f"-U{context:<6} {len(chosen):>5}  {counts['applied']:>7}  {counts['wrong']:>5}  "
            f"{counts['refused']:>7}  {changed:>19}"
        )
    applied = sum(1 for outcome in results if outcome.result == "applied")
    notebooks = len({outcome.step.notebook for outcome in results})
    rows.append(
        f"{notebooks} notebooks, {len(results)} real git diffs replayed: "
        f"{applied / max(len(results), 1):.1%} applied byte for byte"
    )
    for outcome in results:
        if outcome.result != "applied":
            rows.append(
                f"  {outcome.result}: {outcome.step.notebook} '{outcome.step.change}' -U{outcome.context}: "
                f"{outcome.detail[:160]}"
            )
    return "\n".join(rows)


if __name__ == "__main__":
    print(summary(outcomes()))
    print()
    print(drift_summary(drifted_outcomes()))
