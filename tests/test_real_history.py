"""Real release history: every ``diff -ruN`` between consecutive sdists applies byte-exact.

Synthetic patches only exercise the shapes we thought of; released projects
bring what we did not (new and deleted files, files without a final newline,
CRLF files, hunks at the very start and end of a file, long changelogs). Each
step applies the patch from version N to N+1 through ``Workspace.plan_patch`` +
``apply`` on the text tree of version N and compares the whole tree with version
N+1, byte for byte, including which files exist. The data and how it was made
are described in ``tests/data/real-history/SOURCE.md``.

``diff -ruN`` cannot express an *empty* file appearing or vanishing (absent and
empty compare equal, so it prints nothing), so an empty file may keep the
existence it had in the old tree; every other difference fails.
"""

from __future__ import annotations

import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from real_history_data import ARCHIVES, tree, unpack

from nbedit.engine.models import Tier
from nbedit.workspace import Workspace


@dataclass(frozen=True, slots=True)
class Step:
    project: str
    old: str
    new: str
    patch: str  # member name of the patch in the archive

    def __str__(self) -> str:
        return f"{self.project}-{self.old}-to-{self.new}"


def _steps() -> list[Step]:
    steps = []
    for archive_path in ARCHIVES:
        project = archive_path.name[: -len("-history.tar.xz")]
        with tarfile.open(archive_path) as archive:
            names = sorted(name for name in archive.getnames() if name.startswith("patches/"))
        for name in names:
            _, old, new = Path(name).stem.split("-", 2)
            steps.append(Step(project, old, new, name))
    return steps


STEPS = _steps()

# Temporary: the unified parser does not yet read diff -N's epoch-dated header
# ("+++ b/f\t1970-01-01 00:00:00 +0000" with "@@ -1,N +0,0 @@") as a deletion, so
# the file is left empty instead of removed (GNU patch removes it). Remove an entry
# as soon as it passes: the marks are strict.
KNOWN_FAILURES: dict[str, str] = {}  # step -> reason, for a temporary strict xfail


def _parameters() -> list[object]:
    marked = []
    for step in STEPS:
        reason = KNOWN_FAILURES.get(str(step))
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        marked.append(pytest.param(step, marks=marks, id=str(step)))
    return marked


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each project's archive, unpacked once for the module."""
    return unpack(tmp_path_factory)


def test_the_data_is_there() -> None:
    """Guards against an empty parametrization passing silently."""
    assert len(ARCHIVES) >= 1
    assert len(STEPS) >= 15


@pytest.mark.parametrize("step", _parameters())
def test_release_patch_reproduces_the_next_release(
    step: Step, unpacked: dict[str, Path], tmp_path: Path
) -> None:
    folder = unpacked[step.project]
    work = tmp_path / "work"
    shutil.copytree(folder / "trees" / step.old, work)
    patch = (folder / step.patch).read_text(encoding="utf-8")

    workspace = Workspace(work, history=False)
    plan = workspace.plan_patch(patch)
    workspace.apply(plan)

    old = tree(folder / "trees" / step.old)
    expected = tree(folder / "trees" / step.new)
    actual = tree(work)
    unexpressible = {
        path
        for path in set(actual) ^ set(expected)
        if actual.get(path, expected.get(path)) == b"" and old.get(path) == actual.get(path)
    }
    extra = sorted(set(actual) - set(expected) - unexpressible)
    missing = sorted(set(expected) - set(actual) - unexpressible)
    assert not extra, f"files that should not exist after the patch: {extra[:10]}"
    assert not missing, f"files the patch should have created: {missing[:10]}"
    wrong = [path for path in expected if path in actual and actual[path] != expected[path]]
    assert not wrong, f"files differ from the release: {wrong[:10]}"
    # a release diff is made from the very files it is applied to: nothing needs a lenient tier
    lenient = [(f.path, h.tier.value) for f in plan.files for h in f.hunks if h.tier is not Tier.EXACT]
    assert not lenient, f"hunks located by a lenient tier: {lenient[:10]}"
