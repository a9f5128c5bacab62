"""``nbedit.background.Background``: a call on another thread, started without waiting for it to run.

What ``threading`` gave is kept: the value or the error comes back at ``result``; a call that is not
a daemon's is waited for when the interpreter exits; a forked child never waits for its parent's
threads; with no thread to be had the call runs at once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fork_support import reported_by_child

from nbedit import background
from nbedit.background import Background

REPO = Path(__file__).resolve().parents[1]


def test_the_value_and_the_error_come_back_at_result() -> None:
    assert Background(lambda: 42, "test").result() == 42

    def fails() -> object:
        raise ValueError("on the thread")

    failed = Background(fails, "test")
    with pytest.raises(ValueError, match="on the thread"):
        failed.result()
    assert not failed.running() and failed not in background._running


def test_the_caller_goes_on_before_the_thread_runs() -> None:
    """``start`` returns while the call has not begun: the caller holds what the call needs."""
    gate = threading.Lock()
    gate.acquire()
    began: list[bool] = []

    def call() -> str:
        began.append(True)
        with gate:
            return "done"

    started = Background(call, "test")
    assert started.running()  # the call waits for the gate the caller still holds
    gate.release()
    assert started.result() == "done" and began == [True]


def test_no_thread_to_be_had_runs_the_call_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*arguments: object) -> object:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(background._thread, "start_new_thread", refused)
    ran = Background(lambda: threading.current_thread() is threading.main_thread(), "test")
    assert ran.result() is True and not ran.running()


def test_the_interpreter_waits_for_a_call_that_is_not_a_daemons(tmp_path: Path) -> None:
    marker = tmp_path / "written"
    program = (
        "import sys, time\nfrom nbedit.background import Background\n"
        "def call():\n    time.sleep(0.3)\n    open(sys.argv[1], 'w').write('done')\n"
        "Background(call, 'test')\n"
        "Background(lambda: time.sleep(30), 'daemon', daemon=True)\n"  # not waited for
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", program, str(marker)], env=env, check=True, timeout=20)
    assert marker.read_text() == "done"  # the exit waited for the call
    assert time.monotonic() - start < 15  # and not for the daemon's


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_forked_child_does_not_wait_for_its_parents_call() -> None:
    gate = threading.Event()
    held = Background(lambda: gate.wait(30) and "parent", "test")
    try:
        reported = reported_by_child(lambda: repr(held.result()), "its parent's thread")
    finally:
        gate.set()
    assert reported == "None"  # never ran here
    assert held.result() == "parent"


def test_an_interrupt_while_the_thread_is_started_does_not_hold_up_the_exit(tmp_path: Path) -> None:
    """Ctrl-C arriving while a call's thread is being started: the interpreter still exits (it
    waited at exit for a call that never ran, for ever)."""
    program = (
        "from nbedit import background\n"
        "def interrupted(*arguments):\n    raise KeyboardInterrupt\n"
        "real = background._thread.start_new_thread\n"
        "background._thread.start_new_thread = interrupted\n"
        "try:\n    background.Background(lambda: None, 'test')\nexcept KeyboardInterrupt:\n    pass\n"
        "background._thread.start_new_thread = real\n"
        "assert not background._running\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    completed = subprocess.run([sys.executable, "-c", program], env=env, timeout=30, capture_output=True)
    assert completed.returncode == 0, completed.stderr
