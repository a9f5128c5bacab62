"""One call run on another thread, joined where its result is needed.

What a first edit waits for (a new history store, a big file's flush, a notebook's read) is
started early and joined later; this small class is how, shared by the workspace, its root
file source and the apply pipeline. It holds no nbedit state, so any layer may use it.

The thread is started without waiting for it to run. ``threading.Thread.start`` waits until the
new thread has been scheduled and has run its first steps: on a machine whose cores are all busy
that is a wait for the scheduler, 2-12 ms for the history's opening at load 3-4 (measured), on
the path a person waits on. Here the caller goes on at once and waits only in ``result``. What
``threading`` did besides is kept: a call that is not a daemon's is waited for when the
interpreter exits (an ``atexit`` hook, run after ``threading``'s own wait), and in a forked
child, which does not have its parent's threads, ``result`` returns None at once instead of
waiting for a thread that is not there.
"""

from __future__ import annotations

import _thread
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Background"]

# calls started and not finished yet (a set's add and discard are atomic under the GIL)
_running: set[Background] = set()
_exit_hook: list[bool] = []  # the atexit hook, once registered


class Background:
    """One call run on another thread; ``result`` joins it and returns its value or raises its
    error here. No thread to be had (a process at its limit): the call runs at once."""

    __slots__ = ("_daemon", "_failed", "_finished", "_outcome", "name")

    def __init__(self, call: Callable[[], object], name: str, *, daemon: bool = False) -> None:
        self.name = name  # what the thread does (a ``threading`` name before; kept for readers)
        self._daemon = daemon
        self._outcome: list[object] = []
        self._failed = False
        self._finished = _thread.allocate_lock()
        self._finished.acquire()  # released when the call has ended

        def run() -> None:
            try:
                self._outcome.append(call())
            except BaseException as error:  # handed to the joining thread
                self._failed = True
                self._outcome.append(error)
            finally:
                self._finished.release()
                _running.discard(self)

        if not daemon and not _exit_hook:
            import atexit

            atexit.register(_wait_at_exit)
            _exit_hook.append(True)
        _running.add(self)
        try:
            _thread.start_new_thread(run, ())
        except RuntimeError:
            run()
        except BaseException:  # an interrupt while it is started: the exit never waits for a call
            _running.discard(self)  # that may not run (its thread, if it runs, ends as usual)
            raise

    def running(self) -> bool:
        """Whether the call has not ended yet."""
        return self._finished.locked()

    def wait(self) -> None:
        with self._finished:  # released when the call ends (in a forked child: at once)
            pass

    def result(self) -> object:
        """The call's value (None if it never ran here: a process forked meanwhile)."""
        self.wait()
        if not self._outcome:
            return None
        if self._failed:
            raise self._outcome[0]  # type: ignore[misc]
        return self._outcome[0]


def _wait_at_exit() -> None:
    """The interpreter waits for calls that are not daemons' at exit, as for such threads."""
    for background in list(_running):
        if not background._daemon:
            background.wait()


def _after_fork_in_child() -> None:
    # the parent's threads are not in the child: nothing may wait for them there
    for background in list(_running):
        if background._finished.locked():
            background._finished.release()
    _running.clear()


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_after_fork_in_child)
