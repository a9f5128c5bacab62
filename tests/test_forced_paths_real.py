"""Real release patches through every size-dependent path: the same bytes, history and refusals.

nbedit reads a big patch, splices a big file, streams a very big one and records big
payloads by other code than it uses for small ones (``tests/forced_paths.py`` lists them).
Here each real ``diff -ruN`` between two releases (``tests/data/real-history``) is applied
with those paths forced on for its small files, and every result is held to the ordinary
path's: the tree must be the next release byte for byte, and what ``git apply`` (the real
binary) makes of it; with history on, ``undo`` must bring back the old release exactly and
``restore(after)`` the new one. Files are also turned CRLF and given a byte-order mark, the
patch turned alike (``tests/line_variants.py``): a BOM file never takes the streamed path
(not ASCII), a CRLF file may (it is ASCII) and must give the same bytes. The failure paths
too: a file changed between plan and apply (same size and time, or longer), a write that
fails at the last file, a hunk that does not apply, files drifted from the patch's base:
each gives the ordinary path's outcome (the same error class, every file as it was; or the
same bytes). ``scripts/forced_paths`` runs all of it on every step, with git's own diffs too.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

import line_variants
import pytest
from forced_paths import Reached, forced
from real_history_data import ARCHIVES, tree, unpack

from nbedit.errors import NbeditError
from nbedit.workspace import Workspace


def _patches() -> list[tuple[str, str]]:
    found = []
    for archive_path in ARCHIVES:
        project = archive_path.name[: -len("-history.tar.xz")]
        with tarfile.open(archive_path) as archive:
            found += [(project, name) for name in sorted(archive.getnames()) if name.startswith("patches/")]
    return found


PATCHES = _patches()


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each project's archive, unpacked once for the module."""
    return unpack(tmp_path_factory)


def same_tree(actual: dict[str, bytes], expected: dict[str, bytes], old: dict[str, bytes]) -> list[str]:
    """Paths that differ; an empty file may keep the existence it had (``diff -ruN`` cannot say)."""
    wrong = []
    for path in sorted(set(actual) | set(expected)):
        if actual.get(path) == expected.get(path):
            continue
        one_side = path not in actual or path not in expected
        if one_side and actual.get(path, expected.get(path)) == b"" and old.get(path) == actual.get(path):
            continue
        wrong.append(path)
    return wrong


class Step:
    """One release patch: the old tree, the new one, the patch text."""

    def __init__(self, folder: Path, member: str) -> None:
        _, old, new = Path(member).stem.split("-", 2)
        self.name = f"{folder.name}:{old}-{new}"
        self.old = tree(folder / "trees" / old)
        self.new = tree(folder / "trees" / new)
        self.patch = (folder / member).read_text(encoding="utf-8")

    def narrowed(self) -> Step:
        """The same step with only the files its patch names (a file written anywhere else, a
        temporary copy left behind say, still shows: the whole work folder is compared)."""
        named = set(_patched_files(self.patch))
        other = object.__new__(Step)
        other.name, other.patch = self.name, self.patch
        other.old = {path: data for path, data in self.old.items() if path in named}
        other.new = {path: data for path, data in self.new.items() if path in named}
        return other

    def turned(self, variant: str) -> Step:
        """The same step with every file CRLF, or with a BOM (``tests/line_variants.py``)."""
        turn = {"crlf": line_variants.crlf, "bom": line_variants.bom}[variant]
        other = object.__new__(Step)
        other.name = f"{self.name}:{variant}"
        if variant == "bom":
            other.old, other.patch = line_variants.bom(self.old, self.patch, self.new)
        else:
            other.old, other.patch = turn(self.old, self.patch)
        other.new, _ = turn(self.new, "")
        return other


def write_tree(files: dict[str, bytes], root: Path) -> None:
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


Outcome = tuple[str, object]  # ("applied", the tree) or ("refused", the error's class name)


def run(
    files: dict[str, bytes],
    patch: str,
    work: Path,
    path_name: str,
    *,
    home: Path | None = None,
    between: Callable[[Path], None] | None = None,
) -> tuple[Outcome, Reached]:
    """Apply ``patch`` to ``files`` written at ``work`` with ``path_name`` forced. With a
    ``home`` the history is on, and undo and restore must give back the old and the new bytes;
    ``between`` changes the files after the plan is made, before it is applied."""
    write_tree(files, work)
    workspace = Workspace(work, history=home is not None, home=home, live=None)
    with forced(path_name), Reached() as reached:
        try:
            plan = workspace.plan_patch(patch)
            if between is not None:
                between(work)
            before = tree(work)
            result = workspace.apply(plan)
        except NbeditError as error:
            now = tree(work)
            assert now == (before if between is not None else files), f"{path_name}: a refusal changed files"
            workspace.close()
            return ("refused", type(error).__name__), reached
        after = tree(work)
        if home is not None and result.entry_id is not None:
            workspace.undo()
            assert tree(work) == files, f"{path_name}: undo did not bring back the old bytes"
            workspace.restore(result.entry_id, which="after")
            assert tree(work) == after, f"{path_name}: restore did not bring back the new bytes"
    workspace.close()
    return ("applied", after), reached


def describe(outcome: Outcome) -> str:
    return f"refused ({outcome[1]})" if outcome[0] == "refused" else "applied"


def expect_next(step: Step, outcome: Outcome, path_name: str) -> None:
    kind, result = outcome
    assert kind == "applied", f"{path_name}: refused with {result}"
    assert isinstance(result, dict)
    wrong = same_tree(result, step.new, step.old)
    assert not wrong, f"{path_name}: files differ from the next release: {wrong[:10]}"


PATCH_IDS = [f"{project}-{Path(member).stem}" for project, member in PATCHES]
# steps with new and deleted files, files without a final newline, non-ASCII files, a tiny one
SAMPLE = [
    "click-014-8.1.4-8.1.5",
    "click-015-8.1.5-8.1.6",
    "packaging-002-20.1-20.2",
    "packaging-006-20.5-20.6",
]


def step_of(identifier: str, unpacked: dict[str, Path]) -> Step:
    project, member = PATCHES[PATCH_IDS.index(identifier)]
    return Step(unpacked[project], member)


@pytest.mark.parametrize("identifier", PATCH_IDS)
def test_every_forced_path_makes_the_next_release(
    identifier: str, unpacked: dict[str, Path], tmp_path: Path
) -> None:
    step = step_of(identifier, unpacked).narrowed()
    # every step on "all" (each path forced at once; it reads by hand) and on one path alone, in turn,
    # so each lone path meets a third of the steps (``scripts/forced_paths`` runs every pair)
    alone = ("indexed", "arrays", "streamed-97")[PATCH_IDS.index(identifier) % 3]
    for index, path_name in enumerate((alone, "all")):
        outcome, reached = run(step.old, step.patch, tmp_path / f"work-{index}", path_name)
        expect_next(step, outcome, path_name)
        assert sum(reached.counts.values()) > 0, f"{path_name} was never reached"
    if shutil.which("git") is not None:  # and the real git, where it applies the patch
        by_git = git_apply(step.old, step.patch, tmp_path / "git")
        if by_git is not None:
            wrong = same_tree(by_git, step.new, step.old)
            assert not wrong, f"git apply and nbedit differ: {wrong[:10]}"


def git_apply(files: dict[str, bytes], patch: str, work: Path) -> dict[str, bytes] | None:
    """The tree ``git apply`` makes of ``files`` with ``patch``; None when git refuses the patch."""
    write_tree(files, work)
    (work.parent / "change.diff").write_text(patch, encoding="utf-8")
    environment = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(work.parent)}
    subprocess.run(["git", "init", "-q"], cwd=work, check=True, env=environment)
    applied = subprocess.run(
        ["git", "apply", "--whitespace=nowarn", str(work.parent / "change.diff")],
        cwd=work,
        capture_output=True,
        env=environment,
    )
    shutil.rmtree(work / ".git")
    return tree(work) if applied.returncode == 0 else None


@pytest.mark.parametrize("identifier", SAMPLE)
def test_history_on_forced_paths_undoes_and_restores_exactly(
    identifier: str, unpacked: dict[str, Path], tmp_path: Path
) -> None:
    step = step_of(identifier, unpacked)
    for index, path_name in enumerate(("reference", "streamed-97", "storage", "all")):
        home = tmp_path / f"h{index}"
        outcome, reached = run(step.old, step.patch, tmp_path / f"work-{index}", path_name, home=home)
        expect_next(step, outcome, path_name)
        assert (sum(reached.counts.values()) == 0) == (path_name in ("reference", "storage")), path_name


@pytest.mark.parametrize("variant", ["crlf", "bom"])
@pytest.mark.parametrize("identifier", SAMPLE)
def test_crlf_and_bom_files_give_the_ordinary_bytes(
    identifier: str, variant: str, unpacked: dict[str, Path], tmp_path: Path
) -> None:
    step = step_of(identifier, unpacked).turned(variant)
    reference, _ = run(step.old, step.patch, tmp_path / "reference", "reference")
    expect_next(step, reference, "reference")
    chunked = ("streamed-1",) if len(step.patch) < 4000 else ()
    for index, path_name in enumerate(("arrays", "streamed-97", "all", *chunked)):
        outcome, reached = run(step.old, step.patch, tmp_path / f"work-{index}", path_name)
        assert outcome == reference, f"{path_name}: not the ordinary path's result"
        if variant == "bom":  # not ASCII: the streamed path leaves every file to the ordinary one
            assert reached.counts["_plan_streamed"] == 0
    if shutil.which("git") is not None:
        by_git = git_apply(step.old, step.patch, tmp_path / "git")
        assert by_git is not None, "git apply refuses the turned step"
        assert not same_tree(by_git, step.new, step.old), "git apply does not make the turned next release"


def _patched_files(patch: str) -> list[str]:
    return [line.split()[-1][2:] for line in patch.splitlines() if line.startswith("diff -ruN ")]


def _changed_in_place(name: str) -> Callable[[Path], None]:
    """A change to ``name`` that keeps its size and modification time (one byte swapped)."""

    def change(root: Path) -> None:
        target = root / name
        info = target.stat()
        data = bytearray(target.read_bytes())
        data[len(data) // 2] = ord("#") if data[len(data) // 2] != ord("#") else ord("%")
        target.write_bytes(bytes(data))
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))

    return change


def _appended(name: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        with open(root / name, "ab") as handle:
            handle.write(b"# changed meanwhile\n")

    return change


@pytest.mark.parametrize("how", ["in-place", "appended"])
@pytest.mark.parametrize("identifier", SAMPLE[:3])
def test_a_file_changed_between_plan_and_apply_is_refused_alike(
    identifier: str, how: str, unpacked: dict[str, Path], tmp_path: Path
) -> None:
    step = step_of(identifier, unpacked)
    updated = [name for name in _patched_files(step.patch) if step.old.get(name) and name in step.new]
    name = max(updated, key=lambda name: len(step.old[name]))  # the file most likely streamed
    change = _changed_in_place(name) if how == "in-place" else _appended(name)
    outcomes = {}
    for index, path_name in enumerate(("reference", "arrays", "streamed-97", "storage", "all")):
        home = tmp_path / f"h{index}" if index % 2 == 0 else None
        work = tmp_path / f"w{index}"
        outcomes[path_name], _ = run(step.old, step.patch, work, path_name, home=home, between=change)
    assert outcomes["reference"][0] == "refused"
    assert all(outcome == outcomes["reference"] for outcome in outcomes.values()), outcomes


@pytest.mark.parametrize("step_name", ["verify", "replace"])
@pytest.mark.parametrize("identifier", SAMPLE[:3])
def test_a_write_that_fails_midway_rolls_every_file_back_alike(
    identifier: str,
    step_name: str,
    unpacked: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The writer fails at its last file (a disk error): files already replaced, added or
    deleted are put back, on every path, and no history entry is left."""
    from nbedit.storage import atomic

    step = step_of(identifier, unpacked)
    seen: list[str] = []
    last = max(len(_patched_files(step.patch)) - 1, 1)

    def fault(step_now: str, path: object) -> None:
        if step_now == step_name:
            seen.append(str(path))
            if len(seen) >= last:
                raise OSError(5, "Input/output error")

    monkeypatch.setattr(atomic, "apply_writes", functools.partial(atomic.apply_writes, fault=fault))
    outcomes = {}
    for index, path_name in enumerate(("reference", "arrays", "streamed-97", "storage", "all")):
        seen.clear()
        home = tmp_path / f"h{index}" if path_name in ("streamed-97", "all") else None
        outcomes[path_name], _ = run(step.old, step.patch, tmp_path / f"w{index}", path_name, home=home)
        if home is not None and outcomes[path_name][0] == "refused":
            assert not Workspace(tmp_path / f"w{index}", home=home, live=None).history(all_sessions=True)
    assert outcomes["reference"] == ("refused", "WriteError")
    assert all(outcome == outcomes["reference"] for outcome in outcomes.values()), outcomes


def _broken(patch: str, file_index: int) -> str:
    """``patch`` with one removed line of the ``file_index``-th file's first hunk changed."""
    lines = patch.splitlines(keepends=True)
    seen = -1
    for index, line in enumerate(lines):
        if line.startswith("diff -ruN "):
            seen += 1
        elif seen == file_index and line.startswith("-") and not line.startswith("--- "):
            text = line[1:].strip()
            lines[index] = "-" + line[1:].replace(text[:8], "XyZzY" + text[:3][::-1], 1)
            return "".join(lines)
    raise AssertionError("no removed line")


@pytest.mark.parametrize("identifier", SAMPLE)
def test_a_hunk_that_does_not_apply_has_the_ordinary_outcome(
    identifier: str, unpacked: dict[str, Path], tmp_path: Path
) -> None:
    step = step_of(identifier, unpacked)
    files = _patched_files(step.patch)
    index = max(
        (i for i, name in enumerate(files) if step.old.get(name) and name in step.new and name[-3:] == ".py"),
        key=lambda i: len(step.old[files[i]]),
        default=0,
    )
    patch = _broken(step.patch, index)
    reference, _ = run(step.old, patch, tmp_path / "reference", "reference")
    for number, path_name in enumerate(("indexed", "arrays", "streamed-97", "all")):
        outcome, _ = run(step.old, patch, tmp_path / f"w{number}", path_name, home=tmp_path / f"h{number}")
        assert outcome == reference, f"{path_name}: {describe(outcome)}, ordinary: {describe(reference)}"


def _drifted(step: Step, how: str) -> dict[str, bytes]:
    """The old tree with every updated file drifted from the patch's base: three lines put in
    front (every hunk then stands three lines below the line it names), or a copy of the first
    hunk's old text put in front (an exact occurrence before the one the patch means)."""
    files = dict(step.old)
    section = ""
    first_old: dict[str, list[str]] = {}
    hunks_seen: dict[str, int] = {}
    for line in step.patch.splitlines(keepends=True):
        if line.startswith("diff -ruN "):
            section = line.split()[-1][2:]
        elif line.startswith("@@ "):
            hunks_seen[section] = hunks_seen.get(section, 0) + 1
        elif hunks_seen.get(section) == 1 and line[:1] in " -" and not line.startswith("--- "):
            first_old.setdefault(section, []).append(line[1:])
    for name, old_lines in first_old.items():
        if files.get(name) and name in step.new:
            front = "".join(old_lines) if how == "duplicated" else "# drift 1\n# drift 2\n# drift 3\n"
            files[name] = front.encode() + files[name]
    return files


@pytest.mark.parametrize("how", ["shifted", "duplicated"])
@pytest.mark.parametrize("identifier", SAMPLE)
def test_files_drifted_from_the_patch_have_the_ordinary_outcome(
    identifier: str, how: str, unpacked: dict[str, Path], tmp_path: Path
) -> None:
    step = step_of(identifier, unpacked)
    files = _drifted(step, how)
    reference, _ = run(files, step.patch, tmp_path / "reference", "reference")
    for number, path_name in enumerate(("indexed", "arrays", "streamed-97", "all")):
        outcome, _ = run(files, step.patch, tmp_path / f"w{number}", path_name)
        assert outcome == reference, f"{path_name}: {describe(outcome)}, ordinary: {describe(reference)}"


def test_the_data_is_there() -> None:
    assert len(PATCHES) >= 30
