"""Fingerprints of big buffers: hashed on another core, and never twice for the same bytes.

``hashlib`` releases the GIL while it hashes a large buffer, and the SHA-256 of a 50 MB
notebook takes 30 to 130 ms (this depends on whether the CPU has SHA instructions): as
long as scanning its images, or writing and flushing the edited copy. The notebook
planner hashes the "before" while it scans it; ``Workspace.apply`` hashes the "after"
while it checks the file, takes the lock, writes the temporary copy and links the old
copy into the history, and asks for the result only when the entry names the new
version. Buffers under ``HASHED_APART`` are hashed at once (a thread costs more than it saves).

An edit of one cell changes a few bytes of 50 MB, and the next edit starts from the
bytes the last one wrote, so most of that hashing is done twice. SHA-256 reads its
input front to back, so the hasher's state after the first ``n`` bytes is the same
for every buffer that starts with those bytes: each big buffer hashed here keeps a
copy of the state every ``CHECKPOINT`` bytes (a few hundred bytes each), and the last
``KEEP_BUFFERS`` buffers are remembered (with their bytes, at most ``KEEP_BYTES``).
A new buffer is then hashed only from the last checkpoint it shares with a
remembered one: the "after" of an edit from the edited cell on, and the "before" of
the next edit (the file as the last edit wrote it) not at all. Nothing is trusted
that was not compared: a shared prefix is proved equal chunk by chunk with
``memcmp`` (``bytes.startswith``), the same bytes by ``==``, so the result is always
``sha256(data)``, bit for bit (a file's name, size or time is never consulted).
"""

from __future__ import annotations

import _thread
import os

from nbedit._hashing import load_openssl, openssl_sha256
from nbedit.engine.text import fingerprint

__all__ = [
    "CHECKPOINT",
    "HASHED_APART",
    "IN_BACKGROUND",
    "KEEP_BUFFERS",
    "KEEP_BYTES",
    "fingerprint_meanwhile",
    "forget",
]

# bytes from which a buffer is hashed on another thread: OpenSSL hashes it (``nbedit._hashing``: from
# 256 KiB) with the GIL released, 0.1-0.7 ms for 256 KiB (with or without SHA instructions), a thread
# ~0.05 ms; below it the interpreter's own SHA-256 holds the GIL, and a thread would only add its start
HASHED_APART = 256 << 10
IN_BACKGROUND = 1 << 20  # bytes from which a buffer's hashing is remembered (checkpoints, below)
# the hasher's state is kept every this many bytes of a remembered buffer. Each stretch is one
# ``update`` with the GIL released, but storing the state after it needs the GIL back, and a main
# thread inside a long C call (a 50 MB decode, join or compare holds the GIL for 20-35 ms) or in
# Python code (it lets go every 5 ms switch interval) keeps it that long: with 1 MiB stretches
# (2.6 ms of SHA-256 here) the "before" of a cold 50 MB notebook edit waited for the GIL more than
# it hashed (135 ms of CPU over 350 ms) and was late for the history entry. 4 MiB: a quarter of
# the waits; the "after" hashes at most 4 MiB more (the edited place's stretch).
CHECKPOINT = 4 << 20
KEEP_BUFFERS = 2  # buffers whose hashing is remembered (a notebook's "before" and "after")
KEEP_BYTES = 128 << 20  # at most this many bytes of them are kept alive for it

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from nbedit.engine.spliced import Spliced


class _Hashed:
    """One buffer's SHA-256, being computed or done, with the hasher's state at every checkpoint.

    ``states[i]`` is the hasher after ``data[: i * CHECKPOINT]``; a state is never
    updated once stored (hashing goes on in a copy), so buffers share them freely.
    """

    __slots__ = ("data", "done", "states", "value", "wait")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.wait: Callable[[], None] | None = None  # waits for the thread hashing it (``_start``)
        self.states: list[Any] = []
        self.value: str | None = None
        self.done = _new_event()


_recent: list[_Hashed] = []  # newest first
_lock = _thread.allocate_lock()  # what ``threading.Lock`` is
# a new checkpoint or a finished buffer: the "after" of an edit needs the "before"'s checkpoints only
# up to the edited place, so it starts from there while the "before" is still being hashed. A
# ``threading.Condition``, made with the first remembered buffer (``_new_event``): a small edit never
# needs one, and ``threading`` costs a command a millisecond to import (tests/test_startup.py)
_progress: Any = None
_setting_up = _thread.allocate_lock()
# the hashing threads not finished yet, each by the lock it holds until it ends (``_start``)
_running: set[Any] = set()


def fingerprint_meanwhile(data: bytes | Spliced, *, minimum: int = HASHED_APART) -> Callable[[], str]:
    """A function returning ``fingerprint(data)``, hashed on another thread from now on.

    The result is the same as ``fingerprint(data)`` in every case: if the thread
    failed, the call hashes here (and raises here if hashing itself fails).
    ``minimum``: the size from which a thread is worth it, for a caller that
    knows how much work of its own it does meanwhile. From ``IN_BACKGROUND`` bytes
    on, the work already done for a remembered buffer is reused (module docstring).
    """
    # unjoined new bytes (``engine.spliced.Spliced``) are hashed piece by piece
    spliced = not isinstance(data, (bytes, bytearray, memoryview))
    known = getattr(data, "known_fingerprint", None) if spliced else None
    if known is not None:  # hashed by the planner as it made them (``engine.streamed_splice``)
        return lambda: known
    digest: Callable[[], str] = data.fingerprint if spliced else (lambda: fingerprint(data))  # type: ignore[union-attr]
    if len(data) < minimum:
        value = digest()
        return lambda: value
    # OpenSSL is loaded here, if it is not yet: loading it holds the GIL wherever it runs, and on
    # the hashing thread it would stop this one at some random point instead (and for longer)
    load_openssl()
    result: list[str] = []
    entry: _Hashed | None = None
    if (
        spliced or len(data) < IN_BACKGROUND
    ):  # pieces, or under IN_BACKGROUND: a thread, nothing remembered
        target: Callable[[], object] = lambda: result.append(digest())  # noqa: E731
    else:
        with _lock:
            # the very object hashed already, or being hashed (a file's bytes, hashed by the thread that
            # read them, and asked for again by its plan): its digest, and no second thread
            started = next((kept for kept in _recent if kept.data is data), None)
            if started is None:
                entry = hashed = _Hashed(data)
                bases = list(_recent)
                _remember(hashed)
        if started is not None:
            return lambda: _joined(started)
        target = lambda: _hash(hashed, bases)  # noqa: E731
    try:
        wait = _start(target)
    except BaseException:  # an interrupt while the thread is started: remembered, so let it go
        if entry is not None:  # (no later buffer may wait for a hashing that may never run)
            forget(data)
            _finished(entry)
        raise
    if entry is not None:
        entry.wait = wait
    if wait is None:  # no thread to be had (a process at its thread limit): hash here
        if entry is not None:
            forget(data)
            _finished(entry)  # a later buffer that took it as a base does not wait for it
        value = digest()
        return lambda: value

    def join() -> str:
        wait()
        if entry is not None:
            return entry.value if entry.value is not None else fingerprint(data)
        return result[0] if result else digest()

    return join


def _new_event() -> Any:
    """A ``threading.Event`` for a remembered buffer; ``_progress`` is made with the first one."""
    global _progress
    import threading

    with _setting_up:
        if _progress is None:
            _progress = threading.Condition()
    return threading.Event()


def _joined(entry: _Hashed) -> str:
    """``entry``'s digest once its thread is done (hashed here if that thread failed, or is gone:
    in a child forked meanwhile the wait returns at once and ``value`` is still None)."""
    wait = entry.wait
    if wait is not None:
        wait()
    else:  # its thread not started yet (it is being started), or none to be had (done is set then)
        entry.done.wait()
    return entry.value if entry.value is not None else fingerprint(entry.data)


def _start(target: Callable[[], object]) -> Callable[[], None] | None:
    """Run ``target`` on a new thread; return a function that waits for it to end (None: no thread).

    ``threading.Thread.start`` waits until the new thread has run: on a machine whose cores are
    all busy that is a wait for the scheduler, milliseconds, as long as the hashing it would save.
    This starts the thread and goes on. The thread is a daemon (nothing waits for it at exit);
    ``target``'s error is left to the caller, who hashes again and hears it.
    """
    finished = _thread.allocate_lock()
    finished.acquire()

    def run() -> None:
        try:
            target()
        except BaseException:  # noqa: BLE001, S110 - the joining caller hashes again and hears it
            pass
        finally:
            finished.release()
            with _lock:
                _running.discard(finished)

    with _lock:
        _running.add(finished)
    try:
        _thread.start_new_thread(run, ())
    except RuntimeError:
        with _lock:
            _running.discard(finished)
        return None
    except BaseException:  # an interrupt: not left listed as running (the caller lets the buffer go)
        with _lock:
            _running.discard(finished)
        raise

    def wait() -> None:
        with finished:  # released when the thread ends (or, in a forked child, at once)
            pass

    return wait


def _after_fork_in_child() -> None:
    """A forked child has none of its parent's hashing threads: their callers hash again
    (``join`` finds no value), nothing waits for them, and no lock they held stays held."""
    global _lock, _progress, _setting_up
    _lock, _setting_up = _thread.allocate_lock(), _thread.allocate_lock()
    if _progress is not None:  # (then threading is imported)
        import threading

        _progress = threading.Condition()
    for finished in _running:
        if finished.locked():  # (a thread may have ended just before the fork, still listed)
            finished.release()
    _running.clear()
    _recent.clear()


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_after_fork_in_child)


def forget(data: bytes) -> None:
    """Stop remembering ``data`` (the same object): its bytes are no longer kept alive here."""
    with _lock:
        _recent[:] = [entry for entry in _recent if entry.data is not data]


def _remember(entry: _Hashed) -> None:
    """Put ``entry`` first among the remembered buffers (under ``_lock``), within the limits."""
    _recent.insert(0, entry)
    total = 0
    for index, kept in enumerate(_recent):
        total += len(kept.data)
        if index >= KEEP_BUFFERS or total > KEEP_BYTES:
            del _recent[index:]
            break


def _hash(entry: _Hashed, bases: list[_Hashed]) -> None:
    """Hash ``entry.data``, from the furthest checkpoint it shares with one of ``bases``."""
    try:
        data = entry.data
        best: _Hashed | None = None
        shared = 0
        for base in bases:
            if base.data is data or (len(base.data) == len(data) and base.data == data):
                base.done.wait()  # the same bytes: their digest, once it is done
                if base.value is None:
                    continue  # its hashing failed
                entry.states, entry.value = base.states, base.value
                _drop(base)  # the same bytes, read again: remembered once, under the newer object
                return
            # a "before" still being hashed: its checkpoints up to where the bytes part are all
            # the "after" needs, so only those are waited for
            count = _reached(base, _shared_checkpoints(base, data))
            if count > shared:
                best, shared = base, count
        states = best.states[: shared + 1] if best is not None else []
        if best is not None:
            _drop(best)  # superseded: the file holds the new bytes now (they stay a base for the next)
        if not states:
            states = [openssl_sha256()]  # (the built-in one would hold the GIL while it hashes)
        entry.states = states  # published as they are made (``_reached``); never changed once stored
        hasher = states[-1].copy()
        view = memoryview(data)
        position = (len(states) - 1) * CHECKPOINT
        while position < len(data):
            hasher.update(view[position : position + CHECKPOINT])  # the GIL is released meanwhile
            position += CHECKPOINT
            if position < len(data):
                with _progress:
                    states.append(hasher.copy())
                    _progress.notify_all()
        entry.value = hasher.hexdigest()
    except Exception:  # noqa: BLE001 - the caller hashes again, and hears the error itself
        entry.value = None
        forget(entry.data)
    finally:
        _finished(entry)


def _finished(entry: _Hashed) -> None:
    with _progress:
        entry.done.set()
        _progress.notify_all()


def _reached(base: _Hashed, count: int) -> int:
    """``count``, once ``base``'s checkpoint ``count`` is stored; fewer if its hashing ended before it."""
    with _progress:
        while len(base.states) <= count and not base.done.is_set():
            _progress.wait(0.05)
        return min(count, len(base.states) - 1)


def _shared_checkpoints(base: _Hashed, data: bytes) -> int:
    """How many of ``base``'s checkpoints after the first also hold for ``data`` (compared, not assumed).

    Checkpoint ``i`` holds when ``data`` starts with the same ``i * CHECKPOINT`` bytes.
    """
    other = memoryview(base.data)
    count = 0
    # the checkpoints ``base`` has or will have (one per ``CHECKPOINT`` bytes before its end)
    limit = min((len(base.data) - 1) // CHECKPOINT, len(data) // CHECKPOINT)
    while count < limit:
        start = count * CHECKPOINT
        if not data.startswith(other[start : start + CHECKPOINT], start):
            break
        count += 1
    return count


def _drop(old: _Hashed) -> None:
    with _lock:
        _recent[:] = [entry for entry in _recent if entry is not old]
