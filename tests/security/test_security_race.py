"""Issue 10 proof: links and modes swapped between plan and apply (and during it) never reach outside the root.

A randomized run: each iteration plans one operation (edit, add, delete, move,
in the root or in a subfolder), then swaps something in the tree the way an
attacker would during the review (a folder or the file replaced by a link to an
outside folder or file holding the same bytes, a dangling link planted where an
add lands, a chmod, the root itself renamed away and replaced by a link to the outside
folder), sometimes with a thread that keeps swapping a folder for a
link while the apply runs, then applies. The apply may succeed or refuse; either
way nothing outside the root may change. ``NBEDIT_RACE_ITERATIONS`` (default 2000,
about 15 s) and ``NBEDIT_RACE_SEED`` reproduce or widen a run.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import threading
from pathlib import Path

from security_support import snapshot

import nbedit
from nbedit.errors import NbeditError

ITERATIONS = int(os.environ.get("NBEDIT_RACE_ITERATIONS", "2000"))
SEED = int(os.environ.get("NBEDIT_RACE_SEED", str(random.randrange(1 << 30))))
CONTENT = b"value = 1\n"

OPERATIONS = {
    "edit-top": "*** Begin Patch\n*** Update File: conf.txt\n@@\n-value = 1\n+value = 2\n*** End Patch\n",
    "edit-sub": "*** Begin Patch\n*** Update File: sub/conf.txt\n@@\n-value = 1\n+value = 2\n*** End Patch\n",
    "add-top": "*** Begin Patch\n*** Add File: new.txt\n+payload\n*** End Patch\n",
    "add-sub": "*** Begin Patch\n*** Add File: sub/new.txt\n+payload\n*** End Patch\n",
    "add-deep": "*** Begin Patch\n*** Add File: sub/deeper/new.txt\n+payload\n*** End Patch\n",
    "delete-top": "*** Begin Patch\n*** Delete File: conf.txt\n*** End Patch\n",
    "delete-sub": "*** Begin Patch\n*** Delete File: sub/conf.txt\n*** End Patch\n",
    "move": "*** Begin Patch\n*** Update File: sub/conf.txt\n*** Move to: sub/moved.txt\n@@\n-value = 1\n"
    "+value = 3\n*** End Patch\n",
    "mode": "diff --git a/sub/conf.txt b/sub/conf.txt\nold mode 100644\nnew mode 100755\n",
}


def _reset(root: Path) -> None:
    aside = root.with_name("root.real")
    if root.is_symlink():  # the root itself was swapped for a link: put the real one back
        root.unlink()
        aside.rename(root)
    if root.exists():
        shutil.rmtree(root)
    (root / "sub").mkdir(parents=True)
    for name in ("conf.txt", "sub/conf.txt"):
        (root / name).write_bytes(CONTENT)
        (root / name).chmod(0o644)


def _replace_with_link(path: Path, target: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


def _swap(root: Path, outside: Path, choice: str, chance: random.Random) -> None:
    if choice == "folder-link":
        _replace_with_link(root / "sub", outside / "sub")
    elif choice == "file-link-top":
        _replace_with_link(root / "conf.txt", outside / "conf.txt")
    elif choice == "file-link-sub":
        _replace_with_link(root / "sub" / "conf.txt", outside / "sub" / "conf.txt")
    elif choice == "dangling-top":
        _replace_with_link(root / "new.txt", outside / "planted.txt")
    elif choice == "dangling-sub":
        _replace_with_link(root / "sub" / "new.txt", outside / "planted.txt")
    elif choice == "deep-link":
        _replace_with_link(root / "sub" / "deeper", outside / "sub")
    elif choice == "root-link":  # mv root root.real; ln -s outside root
        root.rename(root.with_name("root.real"))
        root.symlink_to(outside)
    elif choice == "chmod":
        (root / chance.choice(["conf.txt", "sub/conf.txt"])).chmod(chance.choice([0o600, 0o755, 0o444]))


def _keep_swapping(root: Path, outside: Path, stop: threading.Event) -> None:
    """Flip ``sub`` between the real folder (moved aside inside the root) and a link to outside."""
    while not stop.is_set():
        with contextlib.suppress(OSError):
            os.rename(root / "sub", root / ".sub-aside")
            os.symlink(outside / "sub", root / "sub")
            os.unlink(root / "sub")
            os.rename(root / ".sub-aside", root / "sub")


def test_nothing_outside_the_root_changes_under_random_swaps(tmp_path: Path) -> None:
    chance = random.Random(SEED)
    root, outside = tmp_path / "root", tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    for name in ("conf.txt", "sub/conf.txt"):
        (outside / name).write_bytes(CONTENT)  # the same bytes: a stale check alone would pass
        (outside / name).chmod(0o644)
    untouched = snapshot(outside)
    swaps = ["none", "folder-link", "file-link-top", "file-link-sub", "dangling-top", "dangling-sub",
             "deep-link", "chmod", "root-link"]  # fmt: skip
    outcomes: dict[str, int] = {"applied": 0, "refused": 0}
    for iteration in range(ITERATIONS):
        _reset(root)
        operation = chance.choice(sorted(OPERATIONS))
        history = iteration % 25 == 0
        ws = nbedit.Workspace(root, history=history, session=f"race-{iteration}")
        plan = ws.plan_patch(OPERATIONS[operation])
        swap = chance.choice(swaps)
        _swap(root, outside, swap, chance)
        stop = threading.Event()
        swapper = None
        if chance.random() < 0.15:
            swapper = threading.Thread(target=_keep_swapping, args=(root, outside, stop))
            swapper.start()
        try:
            ws.apply(plan)
            outcomes["applied"] += 1
            if history:
                with contextlib.suppress(NbeditError):
                    ws.undo(force=True)
        except NbeditError:
            outcomes["refused"] += 1
        finally:
            stop.set()
            if swapper is not None:
                swapper.join()
        assert snapshot(outside) == untouched, (
            f"seed {SEED}, iteration {iteration}: {operation} after {swap} changed the outside folder"
        )
        _reset(root)
        assert sorted(path.name for path in tmp_path.iterdir()) == ["outside", "root"], f"seed {SEED}"
    assert outcomes["applied"] and outcomes["refused"], outcomes
