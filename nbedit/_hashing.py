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
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from hashlib import sha256 as openssl_sha256
    from hashlib import sha256 as sha256

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
