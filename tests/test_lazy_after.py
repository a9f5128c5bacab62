"""A plan spliced in the file's bytes decodes its new text only when something reads it.

``FilePlan.after`` of such a plan holds the new bytes until the field is first read
(``models.decoded_when_read``); applying the plan (the write, the history entry and
its counts) takes the bytes alone, so a 4 MB text nobody reads is never made. The
referee is the eager plan (the same planner with the text decoded at once): the same
plan by equality, the same diff, summary, review rows and entry, on the release
patches, the golden cases and the 918-hunk benchmark diff; and every way of reading
a field (attribute, equality, hashing, ``replace``, ``copy``, ``pickle``) sees the text.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import shutil
from pathlib import Path

import pytest

import nbedit
from nbedit._dataclass import replace
from nbedit.engine import plan as planner
from nbedit.engine.models import FilePlan, Plan, _TextWhenRead, decoded_when_read
from nbedit.storage.versions import joined
from tests.release_history import release_patches

DATA = Path(__file__).parent / "data"
_SLOT = FilePlan.__dict__["after"].slot


def stored(file_plan: FilePlan) -> object:
    """What the ``after`` slot holds now, without decoding it."""
    return _SLOT.__get__(file_plan, FilePlan)


def lazy(plan: Plan) -> list[FilePlan]:
    return [file_plan for file_plan in plan.files if stored(file_plan).__class__ is _TextWhenRead]


def plan_both_ways(monkeypatch: pytest.MonkeyPatch, root: Path, patch: str) -> tuple[object, object, int]:
    """(plan with the text decoded when read, plan decoded at once, lazy files); errors as text."""

    def outcome() -> object:
        try:
            return nbedit.Workspace(root, history=False).plan_patch(patch)
        except nbedit.NbeditError as error:
            return f"{type(error).__name__}: {error}"

    when_read = outcome()
    waiting = len(lazy(when_read)) if isinstance(when_read, Plan) else 0
    with monkeypatch.context() as patched:
        # at once: the new bytes, joined first when they are a big patch's pieces (``engine.spliced``)
        patched.setattr(planner, "decoded_when_read", lambda data: bytes.decode(joined(data)))
        eager = outcome()
    return when_read, eager, waiting


def assert_alike(when_read: object, eager: object) -> None:
    if not isinstance(eager, Plan):
        assert when_read == eager
        return
    assert isinstance(when_read, Plan)
    # everything that reads the text first, then the plans as values
    assert when_read.diff == eager.diff
    assert when_read.summary() == eager.summary()
    assert when_read.stats() == eager.stats()
    from nbedit.render.html import plan_to_html

    assert plan_to_html(when_read) == plan_to_html(eager)
    assert when_read == eager


def test_release_patches_plan_alike_decoded_when_read_and_at_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    waiting = 0
    for tree, patch in release_patches(tmp_path):
        when_read, eager, count = plan_both_ways(monkeypatch, tree, patch.read_text(encoding="utf-8"))
        waiting += count
        assert_alike(when_read, eager)
    assert waiting > 10, "the release patches' ASCII files are spliced in bytes"


@pytest.mark.parametrize("case", sorted(p.name for p in (DATA / "cases").iterdir()), ids=str)
def test_golden_cases_plan_alike_decoded_when_read_and_at_once(
    monkeypatch: pytest.MonkeyPatch, case: str, tmp_path: Path
) -> None:
    folder = DATA / "cases" / case
    work = tmp_path / "work"
    shutil.copytree(folder / "before", work)
    change = (folder / "change.txt").read_bytes().decode("utf-8")
    assert_alike(*plan_both_ways(monkeypatch, work, change)[:2])


def test_applying_the_918_hunk_diff_never_decodes_the_new_text(tmp_path: Path) -> None:
    from benchmarks.bench_patch import make_inputs

    before, after, patch = make_inputs(tmp_path)
    root = tmp_path / "work"
    root.mkdir()
    for history in (False, True, True):  # off, then a new history (cold), then warm
        (root / "big.py").write_text(before)
        workspace = nbedit.Workspace(root, history=history, home=tmp_path / "home")
        plan = workspace.plan_patch(patch)
        (file_plan,) = lazy(plan)
        result = workspace.apply(plan)
        assert (root / "big.py").read_bytes() == after.encode()
        assert [id(item) for item in lazy(result.plan)] == [id(file_plan)], "apply took the bytes alone"
        if history:
            assert result.entry_id is not None
            shown = workspace.show(result.entry_id)
            assert shown.count("\n+") - shown.count("\n+++") == plan.stats()["big.py"][0]
        assert file_plan.after == after
        assert stored(file_plan) == after and stored(file_plan).__class__ is str  # decoded once, kept


def test_a_stale_file_is_refused_with_the_text_still_waiting(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a = 1\nb = 2\nc = 3\n")
    workspace = nbedit.Workspace(tmp_path, history=True, home=tmp_path / "home")
    plan = workspace.plan_patch("--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n")
    assert len(lazy(plan)) == 1
    (tmp_path / "a.py").write_bytes(b"a = 1\nb = 2\nc = 3\nd = 4\n")
    with pytest.raises(nbedit.StaleFile):
        workspace.apply(plan)
    assert (tmp_path / "a.py").read_bytes() == b"a = 1\nb = 2\nc = 3\nd = 4\n"
    assert plan.files[0].after == "a = 1\nb = 20\nc = 3\n"


def test_every_way_of_reading_a_field_sees_the_text() -> None:
    def made() -> FilePlan:
        return FilePlan("f.py", "update", "é = 1\n", decoded_when_read("é = 2\n".encode()), b"", b"", None)

    eager = FilePlan("f.py", "update", "é = 1\n", "é = 2\n", b"", b"", None)
    assert made() == eager and eager == made()
    assert hash(made()) == hash(eager)
    assert made() != replace(eager, after="é = 3\n")
    assert replace(made(), path="g.py").after == "é = 2\n"
    assert copy.copy(made()).after == copy.deepcopy(made()).after == "é = 2\n"
    assert pickle.loads(pickle.dumps(made())) == eager
    assert dataclasses.asdict(made())["after"] == "é = 2\n"
    assert dataclasses.replace(made(), notes=("x",)).after == "é = 2\n"
    assert repr(made()) == repr(eager)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made().after = "x"  # type: ignore[misc]
