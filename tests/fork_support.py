"""Run a call in a forked child and read what it reports, failing if the child hangs.

The background calls and hashing threads of nbedit must never make a forked child wait for a thread
its parent had (the child does not have it): both the tests of ``nbedit.background`` and of
``nbedit.engine.digest`` fork while a parent's thread is held and read the child's answer here.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

import pytest


def reported_by_child(call: Callable[[], str], what: str, *, seconds: float = 20) -> str:
    """``call()`` run in a forked child, its text reported through a pipe; a child still running
    after ``seconds`` is killed and the test fails, naming ``what`` it waited for."""
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.write(writer, call().encode())
        finally:
            os._exit(0)
    os.close(writer)
    try:
        deadline = time.monotonic() + seconds
        while not os.waitpid(child, os.WNOHANG)[0]:
            if time.monotonic() > deadline:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
                pytest.fail(f"the child waited for {what}")
            time.sleep(0.01)
        return os.read(reader, 100).decode()
    finally:
        os.close(reader)
