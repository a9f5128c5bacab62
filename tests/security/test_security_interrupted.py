"""Issue 22 item 9 and 8 (the command line's part): an undo or restore killed halfway is
finished by one more undo/restore (or ``nbedit doctor --repair``), never left "nothing to
undo" with a file still edited; and an input without end is refused, not read until memory
runs out.

The kill -9 runs at random moments of an undo and of a restore of a multi-file entry
(``NBEDIT_CRASH_TRIALS``, default 16 of each: half killed by the test at a random
moment, half killing themselves at a random rename, where a multi-file write is cut in
two): every file holds its old or
its new bytes, never a mix, and one more undo or restore, without ``--force``, brings
every file to where the interrupted one was taking it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import nbedit
from nbedit.errors import FileTooLarge, NothingToUndo

context = multiprocessing.get_context("fork")
REPOSITORY = str(Path(nbedit.__file__).parents[1])
NAMES = ("a.txt", "b.txt", "c.txt")
PATCH = (
    "*** Begin Patch\n"
    + "".join(f"*** Update File: {name}\n@@\n-{name} old\n+{name} new\n" for name in NAMES)
    + "*** End Patch\n"
)


def _three_files(root: Path, body: bytes = b"") -> dict[str, tuple[bytes, bytes]]:
    root.mkdir(exist_ok=True)
    sides = {}
    for name in NAMES:
        before = f"{name} old\n".encode() + body
        (root / name).write_bytes(before)
        sides[name] = (before, f"{name} new\n".encode() + body)
    return sides


def _holding(root: Path, sides: dict[str, tuple[bytes, bytes]]) -> list[str]:
    """Per file: "before" or "after"; a file holding anything else fails the test (a mix)."""
    states = []
    for name, (before, after) in sides.items():
        data = (root / name).read_bytes()
        assert data in (before, after), f"{name} holds neither side: {data[:60]!r}... ({len(data)} bytes)"
        states.append("before" if data == before else "after")
    return states


CUT_SHORT = """
import os, signal, sys
sys.path.insert(0, {repository!r})
import nbedit
ws = nbedit.Workspace({root!r}, home={home!r}, session="crash")
real_replace = os.replace
def replace(*args, **kwargs):
    if args[1] == "b.txt":
        os.kill(os.getpid(), signal.SIGKILL)  # killed between the first and the second rename
    return real_replace(*args, **kwargs)
os.replace = replace
{operation}
"""


def _cut_short(tmp_path: Path, operation: str) -> tuple[Path, Path, dict[str, tuple[bytes, bytes]], str]:
    root, home = tmp_path / "root", tmp_path / "home"
    sides = _three_files(root)
    ws = nbedit.Workspace(root, home=home, session="crash")
    entry = ws.apply(ws.plan_patch(PATCH)).entry_id
    assert entry is not None
    ws.close()
    script = CUT_SHORT.format(
        repository=REPOSITORY, root=str(root), home=str(home), operation=operation.format(entry=entry)
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert completed.returncode == -signal.SIGKILL, completed.stderr
    assert _holding(root, sides) == ["before", "after", "after"]  # a.txt was reverted, the rest not
    return root, home, sides, entry


@pytest.mark.parametrize("finish", ["undo", "undo entry", "doctor --repair"])
def test_an_undo_cut_short_by_a_crash_is_finished(tmp_path: Path, finish: str) -> None:
    root, home, sides, entry = _cut_short(tmp_path, "ws.undo()")
    if finish == "doctor --repair":
        completed = subprocess.run(
            [sys.executable, "-m", "nbedit", "doctor"],
            cwd=tmp_path, env={**os.environ, "NBEDIT_HOME": str(home)}, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert "left pending by writers that died" in completed.stdout, completed.stdout
        completed = subprocess.run(
            [sys.executable, "-m", "nbedit", "doctor", "--repair"],
            cwd=tmp_path, env={**os.environ, "NBEDIT_HOME": str(home)}, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert completed.returncode == 0, completed.stdout + completed.stderr
        assert f"finished the undo of entry {entry}" in completed.stdout, completed.stdout
    else:
        ws = nbedit.Workspace(root, home=home, session="crash")
        result = ws.undo() if finish == "undo" else ws.undo(entry)
        assert result.written == ("b.txt", "c.txt")
        ws.close()
    assert _holding(root, sides) == ["before", "before", "before"]
    ws = nbedit.Workspace(root, home=home, session="crash")
    with pytest.raises(NothingToUndo):  # the entry counts as undone now, once
        ws.undo()
    [first, *_] = [e for e in ws.history() if e.undoes == entry and not e.partial]
    assert first.undoes == entry


def test_a_finished_undo_does_not_overwrite_a_file_changed_since(tmp_path: Path) -> None:
    root, home, sides, entry = _cut_short(tmp_path, "ws.undo()")
    (root / "c.txt").write_bytes(b"typed after the crash\n")
    ws = nbedit.Workspace(root, home=home, session="crash")
    with pytest.raises(nbedit.StaleFile, match="c.txt"):
        ws.undo()
    assert (root / "c.txt").read_bytes() == b"typed after the crash\n"
    assert (root / "b.txt").read_bytes() == sides["b.txt"][1]  # all or nothing: b.txt untouched too


def test_a_restore_cut_short_by_a_crash_is_finished_by_one_more_restore(tmp_path: Path) -> None:
    root, home, sides, entry = _cut_short(tmp_path, "ws.restore({entry!r})")
    ws = nbedit.Workspace(root, home=home, session="crash")
    result = ws.restore(entry)  # no force: each file holds what nbedit last recorded for it
    assert result.written == ("b.txt", "c.txt")
    assert _holding(root, sides) == ["before", "before", "before"]


# -- kill -9 at random moments of an undo or restore of a multi-file entry -----------------------


def _undo_or_restore(root: str, home: str, session: str, operation: str, entry: str, at_rename: int) -> None:
    if at_rename:  # this child kills itself at its n-th rename: the rename phase is a few microseconds
        real_replace, calls = os.replace, [0]

        def replace(*args: object, **kwargs: object) -> None:
            calls[0] += 1
            if calls[0] == at_rename:
                os.kill(os.getpid(), signal.SIGKILL)
            real_replace(*args, **kwargs)  # type: ignore[arg-type]

        os.replace = replace  # type: ignore[assignment]
    ws = nbedit.Workspace(root, home=home, session=session)
    if operation == "undo":
        ws.undo()
    else:
        ws.restore(entry)
    os._exit(0)


@pytest.mark.slow
@pytest.mark.parametrize("operation", ["undo", "restore"])
def test_kill_9_during_undo_or_restore_of_a_multi_file_entry_is_finished_by_one_more(
    tmp_path: Path, operation: str
) -> None:
    trials = int(os.environ.get("NBEDIT_CRASH_TRIALS", "16"))
    rng = random.Random(int(os.environ.get("NBEDIT_CRASH_SEED", str(random.randrange(1 << 30)))))
    body = b"".join(b"line %d of a body big enough to take a moment to write\n" % i for i in range(4000))
    root, home = tmp_path / "root", tmp_path / "home"
    outcomes: dict[str, int] = {}
    duration = 0.0  # of an undo/restore left to finish: the kills land anywhere in it
    for trial in range(trials + 2):
        sides = _three_files(root, body)
        session = f"trial-{trial}"
        ws = nbedit.Workspace(root, home=home, session=session)
        entry = ws.apply(ws.plan_patch(PATCH)).entry_id
        assert entry is not None
        ws.close()
        # odd trials: killed by the test at a random moment; even ones: at a random rename
        at_rename = rng.randint(1, 4) if trial >= 2 and trial % 2 == 0 else 0
        child = context.Process(
            target=_undo_or_restore, args=(str(root), str(home), session, operation, entry, at_rename)
        )
        started = time.monotonic()
        child.start()
        if trial < 2:  # the first two run to the end and time it
            child.join(60)
            duration = max(duration, time.monotonic() - started)
            assert child.exitcode == 0 and _holding(root, sides) == ["before"] * 3
            continue
        if not at_rename:
            time.sleep(rng.uniform(0.0, duration))
            os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
        child.join(30)
        states = _holding(root, sides)
        key = "".join(state[0] for state in states)  # "aaa" untouched ... "bbb" done
        outcomes[key] = outcomes.get(key, 0) + 1
        ws = nbedit.Workspace(root, home=home, session=session)
        if operation == "undo":
            with contextlib.suppress(NothingToUndo):  # the killed undo had finished
                ws.undo()
        else:
            ws.restore(entry)
        assert _holding(root, sides) == ["before"] * 3, f"trial {trial}: killed at {key}"
        assert not [path.name for path in root.iterdir() if path.name not in NAMES], "leftovers"
        ws.close()
    assert len(outcomes) > 2, f"the kills all landed at one or two moments: {outcomes}"


# -- item 8: bounded input -----------------------------------------------------------------


def test_apply_of_an_endless_input_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "nbedit", "apply", "/dev/zero", "--yes"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 2, completed.stderr[-2000:]
    assert "over 67,108,864 bytes" in completed.stderr and "Traceback" not in completed.stderr
    assert list(tmp_path.iterdir()) == []


def test_stdin_and_old_file_are_capped_too(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old\n")
    environment = {**os.environ, "NBEDIT_MAX_INPUT_BYTES": "1000"}
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+" + "x" * 2000 + "\n*** End Patch\n"
    completed = subprocess.run(
        [sys.executable, "-m", "nbedit", "apply", "-", "--yes", "--no-history"],
        cwd=tmp_path, input=patch, env=environment, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 2 and "stdin is over 1,000 bytes" in completed.stderr, completed.stderr
    (tmp_path / "new.txt").write_bytes(b"y" * 2000)
    completed = subprocess.run(
        [sys.executable, "-m", "nbedit", "edit", "a.txt", "--old", "old", "--new-file", "new.txt", "--yes",
         "--no-history"],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 2 and "over 1,000 bytes" in completed.stderr, completed.stderr
    assert (tmp_path / "a.txt").read_bytes() == b"old\n"


def test_a_change_text_over_the_size_limit_is_refused_by_the_api(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old\n")
    ws = nbedit.Workspace(tmp_path, history=False, max_file_size=1000)
    with pytest.raises(FileTooLarge, match="the change text is 2,0"):
        ws.plan_patch(
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+" + "x" * 2000 + "\n*** End Patch\n"
        )
    with pytest.raises(FileTooLarge, match="the new text"):
        ws.plan_edit("a.txt", "old", "x" * 2000)
    assert (tmp_path / "a.txt").read_bytes() == b"old\n"
