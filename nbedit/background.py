"""One call run on another thread, joined where its result is needed.

What a first edit waits for (a new history store, a big file's flush, a notebook's read) is
started early and joined later; this small class is how, shared by the workspace, its root
file source and the apply pipeline. It holds no nbedit state, so any layer may use it; the
``threading`` import is paid only when a call is started.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Background"]


class Background:
    """One call run on another thread; ``result`` joins it and returns its value or raises its
    error here. No thread to be had (a process at its limit): the call runs at once."""

    def __init__(self, call: Callable[[], object], name: str, *, daemon: bool = False) -> None:
        import threading

        self._outcome: list[object] = []
        self._failed = False

        def run() -> None:
            try:
                self._outcome.append(call())
            except BaseException as error:  # handed to the joining thread
                self._failed = True
                self._outcome.append(error)

        self._thread = threading.Thread(target=run, name=name, daemon=daemon)
        try:
            self._thread.start()
        except RuntimeError:
            run()

    def wait(self) -> None:
        if self._thread.ident is not None:
            self._thread.join()

    def result(self) -> object:
        """The call's value (None if it never ran here: a process forked meanwhile)."""
        self.wait()
        if not self._outcome:
            return None
        if self._failed:
            raise self._outcome[0]  # type: ignore[misc]
        return self._outcome[0]
