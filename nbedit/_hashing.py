"""sha256 digests without loading OpenSSL for small inputs, and without ``hashlib`` for large ones.

Why: ``import hashlib`` loads OpenSSL's ``libcrypto``, about 3 ms of every ``nbedit`` call, while the
interpreter's own sha256 module loads in a fraction of that. For the few kilobytes of a typical edit
the built-in one is as quick; for large inputs OpenSSL's is several times faster per byte (and
releases the GIL while it hashes), so inputs from 256 KiB on go to OpenSSL's (loaded then). That is
``_hashlib.openssl_sha256`` itself, the constructor ``hashlib.sha256`` names: ``hashlib``'s own
module would also set up and try every other algorithm it offers (~0.7 ms of a first call). Where
that constructor is missing or refuses (an interpreter built without OpenSSL, a FIPS-restricted
OpenSSL), :mod:`hashlib` decides, as it would. All compute the same digest: the history written by
either reads the same. Where the interpreter has no built-in sha256 (a build without it), OpenSSL's
does everything.

``HashedBeside`` updates digests on a thread of its own while the caller goes on reading: a big
file planned in chunks (``engine.plan``, ``storage.streamed_file``) is hashed at no wall time on a
second core.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Callable
    from hashlib import sha256 as openssl_sha256
    from hashlib import sha256 as sha256
    from queue import Queue

    def load_openssl() -> None: ...
else:
    _LARGE = 256 * 1024  # from here on OpenSSL's speed pays for loading it

    import sys

    # the module this Python has asked first: a name that is not there is looked for on every
    # folder of the path before the ImportError (start-up)
    try:
        if sys.version_info >= (3, 12):
            from _sha2 import sha256 as _built_in  # Python 3.12 and later
        else:
            from _sha256 import sha256 as _built_in  # Python 3.10 and 3.11
    except ImportError:
        try:
            from _sha256 import sha256 as _built_in
        except ImportError:
            try:
                from _sha2 import sha256 as _built_in
            except ImportError:
                _built_in = None

    _openssl = None  # OpenSSL's constructor, once loaded

    def _load_openssl():
        global _openssl
        if _openssl is None:
            try:
                from _hashlib import openssl_sha256 as found

                found()  # as hashlib tries each constructor once: a restricted OpenSSL may refuse
            except (ImportError, ValueError):
                from hashlib import sha256 as found
            _openssl = found
        return _openssl

    def load_openssl():
        """Load OpenSSL's SHA-256 now, on this thread (it holds the GIL while it loads)."""
        _load_openssl()

    def openssl_sha256(data=b""):
        """``hashlib.sha256(data)`` by OpenSSL (the GIL released while a large buffer is hashed)."""
        return (_openssl or _load_openssl())(data)

    def sha256(data=b""):
        """``hashlib.sha256(data)``: the same object interface (``hexdigest``, ``digest``, ``update``)."""
        if _built_in is not None and len(data) < _LARGE:
            return _built_in(data)
        return openssl_sha256(data)


class HashedBeside:
    """Digests updated on a thread of their own while the caller goes on (OpenSSL's and BLAKE2b's
    ``update`` let go of the interpreter's lock for big buffers): a few buffers queued at most, so
    a slow hasher holds the caller back rather than the buffers piling up. No thread to be had (a
    process at its limit): each buffer is hashed as it is given. ``close`` waits for the last one."""

    __slots__ = ("_done", "_failure", "_queue", "_updates")

    def __init__(self, updates: tuple[Callable[[bytes], object], ...]) -> None:
        import _thread
        from queue import Queue

        self._updates = updates
        self._failure: BaseException | None = None
        self._queue: Queue[bytes | None] | None = Queue(maxsize=4)
        self._done = _thread.allocate_lock()
        self._done.acquire()  # released when the thread has hashed everything it was given
        try:
            _thread.start_new_thread(self._run, (self._queue,))
        except RuntimeError:
            self._queue = None
            self._done.release()

    def _run(self, queue: Queue[bytes | None]) -> None:
        try:
            while (block := queue.get()) is not None:
                if self._failure is None:  # after a failure the queue is still drained: put never blocks
                    try:
                        for update in self._updates:
                            update(block)
                    except BaseException as error:  # raised by close, on the reader's thread
                        self._failure = error
        finally:
            self._done.release()

    def update(self, block: bytes) -> None:
        if self._queue is None:
            for update in self._updates:
                update(block)
        else:
            self._queue.put(block)

    def close(self) -> None:
        """Wait until every chunk put is hashed (the digests are complete then)."""
        if self._queue is not None:
            self._queue.put(None)
            self._queue = None
        with self._done:
            pass
        if self._failure is not None:
            raise self._failure
