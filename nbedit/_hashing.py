"""sha256 digests without loading OpenSSL for small inputs.

Why: ``import hashlib`` loads OpenSSL's ``libcrypto``, about 3 ms of every ``nbedit`` call, while the
interpreter's own sha256 module loads in a fraction of that. For the few kilobytes of a typical edit
the built-in one is as quick; for large inputs OpenSSL's is several times faster per byte, so inputs
from 256 KiB on still go to :mod:`hashlib` (loaded then). Both compute the same digest: the history
written by either reads the same. Where the interpreter has no built-in sha256 (a build without it),
:mod:`hashlib` does everything.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from hashlib import sha256 as sha256
else:
    _LARGE = 256 * 1024  # from here on OpenSSL's speed pays for loading it

    try:
        from _sha2 import sha256 as _built_in  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256 as _built_in  # Python 3.10 and 3.11
        except ImportError:
            _built_in = None

    def sha256(data=b""):
        """``hashlib.sha256(data)``: the same object interface (``hexdigest``, ``digest``, ``update``)."""
        if _built_in is not None and len(data) < _LARGE:
            return _built_in(data)
        import hashlib

        return hashlib.sha256(data)
