"""Fingerprints of big buffers, hashed on another core while this one does other work.

``hashlib`` releases the GIL while it hashes a large buffer, and the SHA-256 of a
50 MB notebook takes about 30 ms: as long as scanning its images, or writing and
flushing the edited copy. The notebook planner hashes the "before" while it scans
it; ``Workspace.apply`` hashes the "after" while it checks the file, takes the lock,
writes the temporary copy, counts the changed lines and links the old copy into the
history, and asks for the result only when the entry names the new version (a 4 MB
source file's 2 ms of hashing then costs the caller nothing). Small buffers are
hashed at once (a thread costs more than it saves).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from nbedit.engine.text import fingerprint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from nbedit.engine.spliced import Spliced

__all__ = ["IN_BACKGROUND", "fingerprint_meanwhile"]

IN_BACKGROUND = 1 << 20  # bytes from which a buffer is hashed on another thread (about 0.5 ms of SHA-256)


def fingerprint_meanwhile(data: bytes | Spliced, *, minimum: int = IN_BACKGROUND) -> Callable[[], str]:
    """A function returning ``fingerprint(data)``, hashed on another thread from now on.

    The result is the same as ``fingerprint(data)`` in every case: if the thread
    failed, the call hashes here (and raises here if hashing itself fails).
    ``minimum``: the size from which a thread is worth it, for a caller that
    knows how much work of its own it does meanwhile.
    """
    # unjoined new bytes (``engine.spliced.Spliced``) are hashed piece by piece
    digest: Callable[[], str] = (
        (lambda: fingerprint(data)) if isinstance(data, (bytes, bytearray, memoryview)) else data.fingerprint
    )
    if len(data) < minimum:
        value = digest()
        return lambda: value
    result: list[str] = []
    thread = threading.Thread(target=lambda: result.append(digest()), name="nbedit-fingerprint", daemon=True)
    try:
        thread.start()
    except RuntimeError:  # no thread to be had (a process at its thread limit): hash here
        value = digest()
        return lambda: value

    def join() -> str:
        thread.join()
        return result[0] if result else digest()

    return join
