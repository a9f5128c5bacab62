"""Issue 21 item 4: a context-free hunk (``git diff -U0``) applies only where evidence places it.

The diffs here are made by real git in a real repository: ``git diff -U0`` with its ``index
<pre>..<post>`` line, the same diff with that line lost (as it is when a model or a chat pastes
only the hunks), and a CRLF checkout (``.gitattributes`` ``eol=crlf``, as on Windows), whose
blob is the LF text. A pure insertion has nothing of its own to check: it applies when git's
index line says the file is the diff's base, or when every other hunk of the diff found by its
own lines stands at its number (offset 0; or the same offset on both sides of it). Otherwise it
is refused, the file byte-identical, with the advice to regenerate the diff with context.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import nbedit
from nbedit.errors import AmbiguousMatch

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

BASE = "".join(f"setting_{n} = {n}\n" for n in range(1, 31))


def git(folder: Path, *arguments: str) -> str:
    command = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t", "-c", "core.autocrlf=false"]
    command += ["-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "-c", "color.ui=never"]
    done = subprocess.run([*command, *arguments], cwd=folder, capture_output=True, text=True, check=True)
    return done.stdout


def repository(folder: Path, text: str = BASE, *, crlf: bool = False) -> Path:
    """A repository holding ``config.py`` = ``text`` (checked out with CRLF endings if ``crlf``)."""
    folder.mkdir()
    git(folder, "init", "-q")
    if crlf:
        (folder / ".gitattributes").write_text("*.py text eol=crlf\n")
    (folder / "config.py").write_bytes(text.encode())
    git(folder, "add", ".")
    git(folder, "commit", "-qm", "base")
    if crlf:
        (folder / "config.py").unlink()
        git(folder, "checkout", "--", "config.py")
    return folder / "config.py"


def diff_u0(folder: Path, after: str) -> str:
    """``git diff -U0`` of config.py changed to ``after`` (in the checkout's line endings); the
    file is put back as it was."""
    path = folder / "config.py"
    before = path.read_bytes()
    newline = "\r\n" if b"\r\n" in before else "\n"
    path.write_bytes(after.replace("\n", newline).encode())
    patch = git(folder, "diff", "-U0", "--", "config.py")
    path.write_bytes(before)
    return patch


def without_index_line(patch: str) -> str:
    lines = patch.splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith(("diff ", "index ")))


INSERTED = BASE.replace("setting_12 = 12\n", "setting_12 = 12\nsetting_12b = 120\n")


def test_an_insertion_on_its_base_by_git_index_line(tmp_path: Path) -> None:
    path = repository(tmp_path / "repo")
    patch = diff_u0(tmp_path / "repo", INSERTED)
    assert "\nindex " in patch and "@@ -12,0 +13 @@" in patch
    plan = nbedit.Workspace(path.parent, history=False).plan_patch(patch)
    assert plan.files[0].after == INSERTED


def test_an_insertion_on_a_crlf_checkout_of_its_base(tmp_path: Path) -> None:
    path = repository(tmp_path / "repo", crlf=True)
    before = path.read_bytes()
    assert b"\r\n" in before
    patch = diff_u0(tmp_path / "repo", INSERTED)
    assert "\r" not in patch  # git diffs the LF text; its blob is the LF text
    ws = nbedit.Workspace(path.parent, history=False)
    plan = ws.plan_patch(patch)
    assert plan.files[0].after_bytes == INSERTED.replace("\n", "\r\n").encode()
    ws.apply(plan)
    assert path.read_bytes() == INSERTED.replace("\n", "\r\n").encode()


def test_a_lone_insertion_without_the_index_line_is_refused_with_advice(tmp_path: Path) -> None:
    path = repository(tmp_path / "repo")
    patch = without_index_line(diff_u0(tmp_path / "repo", INSERTED))
    with pytest.raises(AmbiguousMatch) as caught:
        nbedit.Workspace(path.parent, history=False).plan_patch(patch)
    assert "git diff -U3" in str(caught.value) and "nothing confirms" in str(caught.value)
    assert path.read_text() == BASE


def test_an_insertion_confirmed_by_the_other_hunks_of_its_diff(tmp_path: Path) -> None:
    path = repository(tmp_path / "repo")
    after = INSERTED.replace("setting_3 = 3\n", "setting_3 = 33\n").replace("setting_25 = 25\n", "")
    patch = without_index_line(diff_u0(tmp_path / "repo", after))
    assert patch.count("@@ -") == 3
    plan = nbedit.Workspace(path.parent, history=False).plan_patch(patch)
    assert plan.files[0].after == after


def test_an_insertion_between_hunks_that_moved_differently_is_refused(tmp_path: Path) -> None:
    path = repository(tmp_path / "repo")
    after = INSERTED.replace("setting_3 = 3\n", "setting_3 = 33\n").replace("setting_25 = 25\n", "")
    patch = without_index_line(diff_u0(tmp_path / "repo", after))
    # the file is not the base: two lines added between the first hunk and the insertion, two
    # removed after it; the hunks around it are found at their numbers + 0 and + 2
    edited = BASE.replace("setting_5 = 5\n", "setting_5 = 5\nextra_1 = 1\nextra_2 = 2\n")
    path.write_text(edited)
    with pytest.raises(AmbiguousMatch) as caught:
        nbedit.Workspace(path.parent, history=False).plan_patch(patch)
    assert "other hunks stand at other lines" in str(caught.value)
    assert path.read_text() == edited
    # the same diff with its index line: the file is not its base, also refused
    with pytest.raises(AmbiguousMatch):
        nbedit.Workspace(path.parent, history=False).plan_patch(diff_u0_of(tmp_path, after))
    assert path.read_text() == edited


def diff_u0_of(tmp_path: Path, after: str) -> str:
    """The diff made against the base in a second repository (the edited file is not its base)."""
    other = tmp_path / "base-repo"
    if not other.exists():
        repository(other)
    return diff_u0(other, after)


def test_an_insertion_in_a_file_with_lines_added_above_is_refused(tmp_path: Path) -> None:
    path = repository(tmp_path / "repo")
    patch = diff_u0(tmp_path / "repo", INSERTED)
    shifted = "# header\n# added\n" + BASE
    path.write_text(shifted)
    for attempt in (patch, without_index_line(patch)):
        with pytest.raises(AmbiguousMatch) as caught:
            nbedit.Workspace(path.parent, history=False).plan_patch(attempt)
        assert "git diff -U3" in str(caught.value)
    assert path.read_text() == shifted
