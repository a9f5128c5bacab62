"""Issue 21 item 5: "already applied", in every dialect, on strong evidence only.

One change (a real ``git diff`` with context, made in a real repository, LF and a CRLF checkout)
is written in each dialect nbedit reads: old/new, SEARCH/REPLACE, apply_patch, aider's unified
diff without line numbers, the unified diff itself. Sent again after it was made, each is
"already applied" (nothing written; exit 0 from ``nbedit apply --yes``); half made, it is
``PartlyApplied``; with the new text standing elsewhere and the old text mis-copied, it is not
"applied". Added-only hunks (aider's append) already at the end of the file are applied; a short
one that may end a file by chance is appended again as asked. Every refusal leaves the bytes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import nbedit
from nbedit.errors import MatchError, PartlyApplied

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

BEFORE = (
    "import os\n\n\n"
    "def load(path):\n    with open(path) as handle:\n        return handle.read()\n\n\n"
    + "".join(f"def helper_{n}():\n    return {n}\n\n\n" for n in range(6))
    + "def save(path, text):\n    with open(path, 'w') as handle:\n        handle.write(text)\n"
)
AFTER = BEFORE.replace(
    "    with open(path) as handle:\n        return handle.read()\n",
    "    with open(path, encoding='utf-8') as handle:\n        return handle.read()\n",
).replace("    with open(path, 'w') as handle:\n", "    with open(path, 'w', encoding='utf-8') as handle:\n")

OLD_1 = "def load(path):\n    with open(path) as handle:\n"
NEW_1 = "def load(path):\n    with open(path, encoding='utf-8') as handle:\n"
OLD_2 = "def save(path, text):\n    with open(path, 'w') as handle:\n"
NEW_2 = "def save(path, text):\n    with open(path, 'w', encoding='utf-8') as handle:\n"


def git(folder: Path, *arguments: str) -> str:
    command = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t", "-c", "core.autocrlf=false"]
    command += ["-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "-c", "color.ui=never"]
    return subprocess.run([*command, *arguments], cwd=folder, capture_output=True, text=True, check=True).stdout


def git_diff(tmp_path: Path, crlf: bool) -> str:
    """``git diff`` (3 lines of context) of BEFORE -> AFTER, made in a real repository."""
    folder = tmp_path / ("crlf-repo" if crlf else "repo")
    folder.mkdir()
    git(folder, "init", "-q")
    if crlf:
        (folder / ".gitattributes").write_text("*.py text eol=crlf\n")
    (folder / "io_utils.py").write_text(BEFORE)
    git(folder, "add", ".")
    git(folder, "commit", "-qm", "base")
    (folder / "io_utils.py").write_text(AFTER)
    return git(folder, "diff", "--", "io_utils.py")


def replies(tmp_path: Path, crlf: bool) -> dict[str, str]:
    """The change in every dialect (keyed by dialect)."""
    search_replace = "".join(
        f"io_utils.py\n```python\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n```\n"
        for old, new in ((OLD_1, NEW_1), (OLD_2, NEW_2))
    )

    def body(old: str, new: str) -> str:
        return "".join(f"-{line}\n" for line in old.splitlines()[1:]) + "".join(
            f"+{line}\n" for line in new.splitlines()[1:]
        )

    apply_patch = (
        "*** Begin Patch\n*** Update File: io_utils.py\n"
        f"@@ def load(path):\n{body(OLD_1, NEW_1)}@@ def save(path, text):\n{body(OLD_2, NEW_2)}"
        "*** End Patch\n"
    )
    aider = (
        "```diff\n--- io_utils.py\n+++ io_utils.py\n"
        f"@@ ... @@\n def load(path):\n{body(OLD_1, NEW_1)}@@ ... @@\n def save(path, text):\n{body(OLD_2, NEW_2)}"
        "```\n"
    )
    return {
        "search_replace": search_replace,
        "apply_patch": apply_patch,
        "aider-udiff": aider,
        "unified": git_diff(tmp_path, crlf),
    }


def write(path: Path, text: str, crlf: bool) -> bytes:
    data = (text.replace("\n", "\r\n") if crlf else text).encode()
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
def test_every_dialect_sent_again_is_already_applied(tmp_path: Path, crlf: bool) -> None:
    target = tmp_path / "work" / "io_utils.py"
    target.parent.mkdir()
    for dialect, reply in replies(tmp_path, crlf).items():
        write(target, BEFORE, crlf)
        ws = nbedit.Workspace(target.parent, history=False)
        first = ws.plan_patch(reply)
        assert first.files[0].after_bytes == write(tmp_path / "expected", AFTER, crlf), dialect
        ws.apply(first)
        made = target.read_bytes()
        again = ws.plan_patch(reply)
        assert again.already_applied and not again.files[0].changed, dialect
        assert target.read_bytes() == made
    # old/new pairs, one at a time
    for old, new in ((OLD_1, NEW_1), (OLD_2, NEW_2)):
        plan = nbedit.Workspace(target.parent, history=False).plan_edit("io_utils.py", old, new)
        assert plan.already_applied, (old, new)


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
@pytest.mark.parametrize("made", [0, 1], ids=["first-made", "second-made"])
def test_half_made_is_partly_applied_in_every_dialect(tmp_path: Path, crlf: bool, made: int) -> None:
    target = tmp_path / "work" / "io_utils.py"
    target.parent.mkdir()
    half = BEFORE.replace(*((OLD_1, NEW_1), (OLD_2, NEW_2))[made])
    for dialect, reply in replies(tmp_path, crlf).items():
        data = write(target, half, crlf)
        with pytest.raises(PartlyApplied):
            nbedit.Workspace(target.parent, history=False).plan_patch(reply)
        assert target.read_bytes() == data, dialect


def test_the_cli_exits_zero_on_a_git_diff_already_applied_to_a_crlf_file(tmp_path: Path) -> None:
    patch = replies(tmp_path, True)["unified"]
    work = tmp_path / "work"
    work.mkdir()
    (work / "change.diff").write_text(patch)
    data = write(work / "io_utils.py", AFTER, True)
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "nbedit.cli", "apply", "change.diff", "--yes"],
        cwd=work,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "already applied" in done.stdout
    assert (work / "io_utils.py").read_bytes() == data


def test_new_text_elsewhere_is_not_applied_in_any_dialect(tmp_path: Path) -> None:
    # the new text stands in a copy of the function further down; where the old text would be
    # (the first 'load', which the reply mis-copies: 'pth') it has not been made
    copy = "def load(path):\n    with open(path, encoding='utf-8') as handle:\n        return handle.read()\n"
    text = BEFORE + "\n\n" + copy
    target = tmp_path / "io_utils.py"
    target.write_text(text)
    old = "def load(path):\n    with open(pth) as handle:\n        return handle.read()\n"
    new = copy
    minus = "".join(f"-{line}\n" for line in old.splitlines()[1:2])
    plus = "".join(f"+{line}\n" for line in new.splitlines()[1:2])
    attempts = {
        "search_replace": f"io_utils.py\n```python\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n```\n",
        "apply_patch": f"*** Begin Patch\n*** Update File: io_utils.py\n@@\n def load(path):\n{minus}{plus}"
        "         return handle.read()\n*** End Patch\n",
        "aider-udiff": f"--- io_utils.py\n+++ io_utils.py\n@@ ... @@\n def load(path):\n{minus}{plus}"
        "         return handle.read()\n",
    }
    ws = nbedit.Workspace(tmp_path, history=False)
    for dialect, reply in attempts.items():
        with pytest.raises(MatchError):
            plan = ws.plan_patch(reply)
            assert not plan.already_applied, dialect  # never reached: it is refused
    with pytest.raises(MatchError):
        ws.plan_edit("io_utils.py", old, new)
    assert target.read_text() == text


APPENDED = "\n\ndef close_all(handles):\n    for handle in handles:\n        handle.close()\n"


def _plus(text: str) -> str:
    return "".join(f"+{line}\n" for line in text.split("\n"))


@pytest.mark.parametrize(
    "reply",
    [
        "```diff\n--- io_utils.py\n+++ io_utils.py\n@@ ... @@\n" + _plus(APPENDED[1:-1]) + "```\n",
        "io_utils.py\n```python\n<<<<<<< SEARCH\n=======\n" + APPENDED[2:] + ">>>>>>> REPLACE\n```\n",
        "*** Begin Patch\n*** Update File: io_utils.py\n@@\n" + _plus(APPENDED[2:-1]) + "*** End Patch\n",
    ],
    ids=["aider-udiff", "search-replace", "apply-patch"],
)
def test_an_append_sent_again_is_already_applied(tmp_path: Path, reply: str) -> None:
    target = tmp_path / "io_utils.py"
    target.write_text(BEFORE)
    ws = nbedit.Workspace(tmp_path, history=False)
    ws.apply(ws.plan_patch(reply))
    made = target.read_bytes()
    assert made.decode().endswith("        handle.close()\n")
    again = ws.plan_patch(reply)
    assert again.already_applied and not again.files[0].changed
    assert target.read_bytes() == made


def test_a_short_append_is_appended_again(tmp_path: Path) -> None:
    # one short line may end a file by chance: appending it again is what the reply asks
    target = tmp_path / "style.css"
    target.write_text("body {\n  margin: 0;\n}\n")
    reply = "style.css\n```css\n<<<<<<< SEARCH\n=======\n}\n>>>>>>> REPLACE\n```\n"
    plan = nbedit.Workspace(tmp_path, history=False).plan_patch(reply)
    assert not plan.already_applied and plan.files[0].after == "body {\n  margin: 0;\n}\n}\n"


def test_an_added_only_hunk_before_edits_is_refused_not_appended(tmp_path: Path) -> None:
    target = tmp_path / "io_utils.py"
    target.write_text(BEFORE)
    reply = (
        "```diff\n--- io_utils.py\n+++ io_utils.py\n"
        "@@ ... @@\n+import io\n"  # meant at the top, next to 'import os'? aider would append it
        f"@@ ... @@\n def save(path, text):\n-{OLD_2.splitlines()[1]}\n+{NEW_2.splitlines()[1]}\n```\n"
    )
    with pytest.raises(MatchError) as caught:
        nbedit.Workspace(tmp_path, history=False).plan_patch(reply)
    assert "hunk 1 only adds lines" in str(caught.value) and "context line" in str(caught.value)
    assert target.read_text() == BEFORE


def test_an_apply_patch_chunk_of_added_lines_under_an_anchor_mid_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "io_utils.py"
    target.write_text(BEFORE)
    reply = (
        "*** Begin Patch\n*** Update File: io_utils.py\n@@ def load(path):\n"
        "+    # read as text\n*** End Patch\n"
    )
    with pytest.raises(MatchError) as caught:
        nbedit.Workspace(tmp_path, history=False).plan_patch(reply)
    assert "outside that block" in str(caught.value)
    assert target.read_text() == BEFORE
    # under the last function, the end of the file is the end of its block: appended
    last = reply.replace("@@ def load(path):\n", "@@ def save(path, text):\n")
    plan = nbedit.Workspace(tmp_path, history=False).plan_patch(last)
    assert plan.files[0].after == BEFORE + "    # read as text\n"
