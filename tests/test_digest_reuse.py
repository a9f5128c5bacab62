"""The fingerprints of big buffers reuse earlier hashing only where the bytes were compared equal.

``engine.digest`` keeps the SHA-256 state every ``CHECKPOINT`` bytes of the last buffers it
hashed, so the "after" of an edit is hashed from the edited place on and the next "before"
(the same bytes read again) not at all. Every result here is checked against ``hashlib``
on the real bytes: a reuse that trusted a size or a prefix it did not compare would show.
"""

from __future__ import annotations

import hashlib
import os
import random
import threading
from pathlib import Path

import pytest
from fork_support import reported_by_child

from nbedit import _hashing
from nbedit.engine import digest
from nbedit.engine.digest import IN_BACKGROUND, KEEP_BUFFERS, fingerprint_meanwhile

# the module's checkpoints are 4 MiB apart (fewer waits for the GIL); the logic is the same at any
# spacing, and at 1 MiB these buffers hash four times faster
CHECKPOINT = 1 << 20


@pytest.fixture(autouse=True)
def _nothing_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(digest, "CHECKPOINT", CHECKPOINT)
    digest._recent.clear()
    yield
    digest._recent.clear()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_chain_of_edits_and_rereads_always_hashes_to_sha256() -> None:
    rng = random.Random(27)
    data = os.urandom(3 * CHECKPOINT + 999)
    for step in range(40):
        assert fingerprint_meanwhile(data)() == sha(data), step
        choice = rng.random()
        if choice < 0.25:
            data = bytes(bytearray(data))  # the same bytes read again, another object
            continue
        if choice < 0.3:
            data = data[: 2 * CHECKPOINT]  # ends exactly on a checkpoint
            continue
        if choice < 0.35:
            data = data + os.urandom(CHECKPOINT + 5)  # grows past the remembered checkpoints
            continue
        position = rng.randrange(len(data))
        inserted = os.urandom(rng.choice((0, 1, 40, CHECKPOINT + 3)))
        data = data[:position] + inserted + data[position + rng.randrange(0, 60) :]
        if len(data) < IN_BACKGROUND:
            data += os.urandom(IN_BACKGROUND)


def test_same_size_but_other_bytes_is_hashed_not_reused() -> None:
    first = os.urandom(2 * CHECKPOINT)
    assert fingerprint_meanwhile(first)() == sha(first)
    for position in (0, CHECKPOINT - 1, CHECKPOINT, len(first) - 1):  # first chunk, a boundary, last byte
        changed = bytearray(first)
        changed[position] ^= 1
        assert fingerprint_meanwhile(bytes(changed))() == sha(bytes(changed))
        assert fingerprint_meanwhile(first)() == sha(first)


def test_the_after_of_an_edit_is_hashed_from_its_last_shared_checkpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    before = os.urandom(8 * CHECKPOINT + 17)
    assert fingerprint_meanwhile(before)() == sha(before)
    hashed: list[int] = []
    real = hashlib.sha256

    class Counting:
        def __init__(self, state: object) -> None:
            self.state = state

        def update(self, data: memoryview) -> None:
            hashed.append(len(data))
            self.state.update(data)  # type: ignore[attr-defined]

        def copy(self) -> Counting:
            return Counting(self.state.copy())  # type: ignore[attr-defined]

        def hexdigest(self) -> str:
            return self.state.hexdigest()  # type: ignore[attr-defined,no-any-return]

    for entry in digest._recent:
        entry.states = [Counting(state) for state in entry.states]
    monkeypatch.setattr(digest, "openssl_sha256", lambda *a: Counting(real(*a)))
    edited = before[: 6 * CHECKPOINT + 10] + b"edited" + before[6 * CHECKPOINT + 10 :]
    assert fingerprint_meanwhile(edited)() == sha(edited)
    assert sum(hashed) == len(edited) - 6 * CHECKPOINT  # six checkpoints reused, the rest hashed
    hashed.clear()
    again = bytes(bytearray(edited))  # the next edit's "before": the file as the edit wrote it
    assert fingerprint_meanwhile(again)() == sha(again)
    assert hashed == []  # compared equal, not hashed


def test_remembered_buffers_are_bounded_and_forgettable() -> None:
    buffers = [os.urandom(IN_BACKGROUND + number) for number in range(KEEP_BUFFERS + 2)]
    for data in buffers:
        assert fingerprint_meanwhile(data)() == sha(data)
    assert len(digest._recent) <= KEEP_BUFFERS
    assert sum(len(entry.data) for entry in digest._recent) <= digest.KEEP_BYTES
    digest.forget(buffers[-1])
    assert all(entry.data is not buffers[-1] for entry in digest._recent)
    assert fingerprint_meanwhile(buffers[-1])() == sha(buffers[-1])


def test_a_buffer_whose_thread_never_started_is_no_base_to_wait_for(monkeypatch: pytest.MonkeyPatch) -> None:
    data = os.urandom(2 * CHECKPOINT)

    def refuse(*arguments: object) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(digest._thread, "start_new_thread", refuse)  # a process at its thread limit
    assert fingerprint_meanwhile(data)() == sha(data)
    monkeypatch.undo()
    edited = data[:-1] + b"!"
    join = fingerprint_meanwhile(edited)
    result: list[str] = []
    waiter = threading.Thread(target=lambda: result.append(join()))
    waiter.start()
    waiter.join(timeout=20)
    assert result == [sha(edited)]


def test_a_failed_hash_falls_back_to_hashing_on_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    data = os.urandom(2 * CHECKPOINT)

    def broken(*arguments: object) -> object:
        raise MemoryError

    monkeypatch.setattr(_hashing, "_openssl", broken)  # what hashlib.sha256 is: OpenSSL's constructor
    join = fingerprint_meanwhile(data)
    with pytest.raises(MemoryError):  # hashing itself fails: the caller hears it
        join()
    monkeypatch.undo()
    assert fingerprint_meanwhile(data)() == sha(data)
    assert all(entry.value is not None or not entry.done.is_set() for entry in digest._recent)


def test_a_raw_json_patch_of_a_big_notebook_names_the_sha256_of_its_bytes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from nbedit.workspace import Workspace

    cells = [
        {"cell_type": "code", "execution_count": n, "id": f"c{n}", "metadata": {},
         "outputs": [{"name": "stdout", "output_type": "stream", "text": ["x" * 60 + "\n"] * 300}],
         "source": f"value_{n} = {n}"}
        for n in range(80)
    ]  # fmt: skip
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    before = json.dumps(notebook, indent=1, sort_keys=True) + "\n"
    after = before.replace('"value_40 = 40"', '"value_40 = 41"')
    assert len(before) > IN_BACKGROUND
    (tmp_path / "big.ipynb").write_text(before)
    lines = before.splitlines(keepends=True)
    changed = next(number for number, line in enumerate(lines) if '"value_40 = 40"' in line)
    context = lines[changed - 3 : changed + 4]
    diff = (
        f"--- a/big.ipynb\n+++ b/big.ipynb\n@@ -{changed - 2},7 +{changed - 2},7 @@\n"
        + "".join(" " + line for line in context[:3])
        + "-" + context[3] + "+" + context[3].replace('"value_40 = 40"', '"value_40 = 41"')
        + "".join(" " + line for line in context[4:])
    )  # fmt: skip
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(diff)
    assert plan.files[0].hunks == ()  # planned on the raw JSON (``notebook.raw``)
    assert plan.files[0].fingerprint == sha(before.encode())
    workspace.apply(plan)
    assert (tmp_path / "big.ipynb").read_text() == after


def test_the_after_starts_from_the_befores_checkpoint_while_the_before_is_still_hashed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the "before" of a cold edit is hashed from the first byte while the plan scans; the "after"
    # needs its checkpoints only up to the edited place, so it is not held up by the rest of it
    before = os.urandom(10 * CHECKPOINT + 5)
    release = threading.Event()
    real = hashlib.sha256
    mebibytes_of_before: list[int] = []

    class Gated:  # holds up the "before"'s hashing past its sixth mebibyte until released
        def __init__(self, state: object) -> None:
            self.state = state

        def update(self, data: memoryview) -> None:
            if data.obj is before:
                mebibytes_of_before.append(len(data))
                if len(mebibytes_of_before) > 6:
                    assert release.wait(30), "the before was never released"
            self.state.update(data)  # type: ignore[attr-defined]

        def copy(self) -> Gated:
            return Gated(self.state.copy())  # type: ignore[attr-defined]

        def hexdigest(self) -> str:
            return self.state.hexdigest()  # type: ignore[attr-defined,no-any-return]

    monkeypatch.setattr(digest, "openssl_sha256", lambda *a: Gated(real(*a)))
    before_digest = fingerprint_meanwhile(before)
    edited = before[: 3 * CHECKPOINT + 7] + b"edited" + before[3 * CHECKPOINT + 7 :]
    after_digest = fingerprint_meanwhile(edited)
    finished: list[str] = []
    waiter = threading.Thread(target=lambda: finished.append(after_digest()), daemon=True)
    waiter.start()
    waiter.join(10)
    assert finished == [sha(edited)]  # done while the before is still held at its sixth mebibyte
    assert len(mebibytes_of_before) == 7
    release.set()
    assert before_digest() == sha(before)
    # a before whose hashing ended early (failed) gives the checkpoints it stored, no more
    failed = digest._Hashed(before)
    failed.states = [real()]
    digest._finished(failed)
    assert digest._reached(failed, 4) == 0


def test_a_thread_that_cannot_be_started_hashes_on_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    for data in (os.urandom(digest.HASHED_APART + 1), os.urandom(IN_BACKGROUND + 1)):  # both paths

        def refused(*arguments: object) -> object:
            raise RuntimeError("can't start new thread")

        monkeypatch.setattr(digest._thread, "start_new_thread", refused)
        assert fingerprint_meanwhile(data)() == sha(data)
        monkeypatch.undo()
        assert not digest._running
        assert all(entry.data is not data for entry in digest._recent)  # never remembered half-done


def test_an_interrupt_while_the_thread_is_started_leaves_nothing_to_wait_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C (a kernel interrupt) arriving while the hashing thread is being started: the buffer,
    already remembered, must not stay a base that the next edit's hashing (or the same bytes asked
    again) waits for forever."""
    data = os.urandom(3 * CHECKPOINT + 5)

    def interrupted(*arguments: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(digest._thread, "start_new_thread", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fingerprint_meanwhile(data)
    monkeypatch.undo()
    assert not digest._running and all(entry.data is not data for entry in digest._recent)
    edited = data[: 2 * CHECKPOINT] + b"edited" + data[2 * CHECKPOINT + 6 :]
    results: dict[str, str] = {}

    def later() -> None:
        results["same object"] = fingerprint_meanwhile(data)()
        results["same bytes"] = fingerprint_meanwhile(bytes(bytearray(data)))()
        results["edited"] = fingerprint_meanwhile(edited)()

    waiting = threading.Thread(target=later, daemon=True)
    waiting.start()
    waiting.join(30)
    assert not waiting.is_alive(), "a later fingerprint waits for a hashing that never started"
    assert results == {"same object": sha(data), "same bytes": sha(data), "edited": sha(edited)}


def test_a_hash_that_fails_on_its_thread_is_done_again_by_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    data = os.urandom(digest.HASHED_APART + 10)  # under IN_BACKGROUND: the thread hashes it whole
    calls: list[int] = []

    def flaky(*arguments: object) -> str:
        calls.append(1)
        if len(calls) == 1:
            raise MemoryError  # on the thread
        return sha(data)

    monkeypatch.setattr(digest, "fingerprint", flaky)
    assert fingerprint_meanwhile(data)() == sha(data)
    assert len(calls) == 2 and not digest._running


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_forked_child_does_not_wait_for_its_parents_hashing_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hashing thread is the parent's: a child forked while it runs hashes again itself, and
    never waits for a thread it does not have (nor for a lock that thread held)."""
    data = os.urandom(digest.HASHED_APART + 5)
    release = threading.Event()
    real = digest.fingerprint

    def gated(value: bytes) -> str:
        if threading.current_thread() is not threading.main_thread():
            assert release.wait(30)
        return real(value)

    monkeypatch.setattr(digest, "fingerprint", gated)
    join = fingerprint_meanwhile(data)
    assert digest._running  # the thread is held
    try:
        reported = reported_by_child(join, "its parent's hashing thread")
    finally:
        release.set()
    assert reported == sha(data)  # hashed again in the child
    assert join() == sha(data)  # and in the parent, by its own thread
    assert not digest._running


def test_the_same_object_asked_for_again_joins_the_hashing_already_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A notebook's bytes are hashed by the thread that read them and asked for again by the plan:
    one hashing, both answers its SHA-256; a failed one is hashed by the asker, and a thread that
    never started leaves no one waiting."""
    started: list[int] = []
    real_hash = digest._hash
    monkeypatch.setattr(digest, "_hash", lambda entry, bases: started.append(1) or real_hash(entry, bases))
    data = os.urandom(3 * CHECKPOINT + 5)
    first, second = fingerprint_meanwhile(data), fingerprint_meanwhile(data)
    assert second() == first() == sha(data) and started == [1]
    assert [entry.data is data for entry in digest._recent].count(True) == 1
    # an equal object read again is compared, not assumed: hashed (from the same states) once more
    again = bytes(bytearray(data))
    assert fingerprint_meanwhile(again)() == sha(data) and started == [1, 1]

    def broken(*arguments: object) -> object:
        raise MemoryError

    digest._recent.clear()
    other = os.urandom(2 * CHECKPOINT)
    monkeypatch.setattr(_hashing, "_openssl", broken)  # what hashlib.sha256 is: OpenSSL's constructor
    failing = fingerprint_meanwhile(other)
    with pytest.raises(MemoryError):
        failing()
    monkeypatch.setattr(_hashing, "_openssl", _real_openssl)
    assert fingerprint_meanwhile(other)() == sha(other)  # forgotten when it failed: hashed again

    digest._recent.clear()
    refused = os.urandom(2 * CHECKPOINT)
    real_start = digest._thread.start_new_thread
    monkeypatch.setattr(digest._thread, "start_new_thread", lambda *a: (_ for _ in ()).throw(RuntimeError("limit")))
    assert fingerprint_meanwhile(refused)() == sha(refused)  # hashed at once, remembered by no one
    monkeypatch.setattr(digest._thread, "start_new_thread", real_start)
    assert fingerprint_meanwhile(refused)() == sha(refused)


_real_openssl = _hashing._openssl


_FIRST_NOTEBOOK_PLAN = r"""
import json, sys, threading
from nbedit.engine import digest
from nbedit.workspace import Workspace
root, home = sys.argv[1:3]
asked = []  # which thread started each hashing, of how many bytes
real_init = digest._Hashed.__init__
def init(entry, data):
    asked.append((threading.current_thread().name, len(data)))
    real_init(entry, data)
digest._Hashed.__init__ = init
workspace = Workspace(root, history=True, home=home)
plan = workspace.plan_edit("big.ipynb", "x_5000 = 5000", "x_5000 = 5001")
file_plan = plan.files[0]
kept = ["before" if entry.data is file_plan.before_bytes else "after" if entry.data is file_plan.after_bytes
        else "other" for entry in digest._recent]
workspace.apply(plan)
print(json.dumps({"asked": asked, "fingerprint": plan.files[0].fingerprint, "kept": kept,
                  "msgspec": "msgspec" in sys.modules}))
"""


def test_the_first_notebook_plan_of_a_process_hashes_the_file_from_the_moment_it_is_read(
    tmp_path: Path,
) -> None:
    """The workspace reads a notebook on another thread while it imports the notebook engine (the
    first notebook plan of a process); that thread starts the SHA-256 as soon as the bytes are
    there, and the plan joins that one hashing instead of starting its own. With the history on,
    the new bytes' SHA-256 starts as the plan is handed back; apply joins it."""
    import json
    import subprocess
    import sys

    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{n}", "metadata": {}, "outputs": [],
              "source": [f"x_{n} = {n}  # " + "pad " * 40]} for n in range(6_000)]  # fmt: skip
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "big.ipynb"
    path.write_text(json.dumps(notebook, indent=1) + "\n")
    data = path.read_bytes()
    assert len(data) >= IN_BACKGROUND
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_NOTEBOOK_PLAN, str(tmp_path), str(tmp_path / "home")],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["fingerprint"] == sha(data)
    # by the reading thread (nbedit's threads start without the threading module's bookkeeping)
    assert result["asked"][0][0] != "MainThread" and result["asked"][0][1] == len(data)
    # one hashing of the "before" (the plan's), and the "after" hashed from the moment the plan is
    # made (the history will name it), joined by apply
    assert result["kept"] == ["after", "before"]
    assert [name == "MainThread" for name, _ in result["asked"]] == [False, True]
    assert path.read_bytes() == data.replace(b'"x_5000 = 5000', b'"x_5000 = 5001')
    assert result["msgspec"] is False  # under fast.MIN_BYTES: not imported while the file is read
