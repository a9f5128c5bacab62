"""``nbedit._hashing.sha256`` is ``hashlib.sha256``: the same digests on both sides of the size switch.

The history stores these digests, so a file hashed by the built-in module (small) and by OpenSSL
(large) must read the same; a process that hashes only small data must not load OpenSSL.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nbedit import _hashing

REPO = Path(__file__).resolve().parents[1]
LARGE = 256 * 1024


@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 4096, LARGE - 1, LARGE, LARGE + 1, 3 * LARGE + 7])
def test_the_digest_is_hashlib_s_on_both_sides_of_the_switch(size: int) -> None:
    data = os.urandom(size)
    for value in (data, bytearray(data), memoryview(data)):
        ours = _hashing.sha256(value)
        assert ours.hexdigest() == hashlib.sha256(data).hexdigest()
        assert ours.digest() == hashlib.sha256(data).digest()
        assert ours.name == "sha256" and ours.digest_size == 32


def test_update_and_copy_work_as_hashlib_s() -> None:
    ours, theirs = _hashing.sha256(), hashlib.sha256()
    for piece in (b"abc", b"", os.urandom(LARGE + 5)):
        ours.update(piece)
        theirs.update(piece)
    assert ours.copy().hexdigest() == theirs.hexdigest()


def test_small_data_does_not_load_openssl_and_large_data_does() -> None:
    program = (
        "import sys; from nbedit import _hashing; _hashing.sha256(b'x' * int(sys.argv[1])).hexdigest();"
        "print('_hashlib' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    loaded = [
        subprocess.run(
            [sys.executable, "-c", program, str(size)], capture_output=True, text=True, env=env, check=True
        ).stdout.strip()
        for size in (1000, LARGE)
    ]
    if _hashing._built_in is None:  # type: ignore[attr-defined]  # an interpreter without its own sha256
        assert loaded == ["True", "True"]
    else:
        assert loaded == ["False", "True"]


def test_large_data_loads_openssl_without_hashlib_s_module() -> None:
    """OpenSSL's constructor is taken from ``_hashlib`` itself: ``hashlib``'s module (which sets up
    every algorithm it offers) is not loaded for it, and the digest is the same."""
    program = (
        "import sys; from nbedit import _hashing; data = b'x' * int(sys.argv[1]);"
        "print(_hashing.sha256(data).hexdigest(), _hashing.openssl_sha256(data).hexdigest(),"
        " '_hashlib' in sys.modules, 'hashlib' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", program, str(LARGE)], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    expected = hashlib.sha256(b"x" * LARGE).hexdigest()
    assert out[:2] == [expected, expected]
    assert out[2:] == ["True", "False"]


def test_without_openssl_s_module_hashlib_decides_and_the_digest_is_the_same() -> None:
    """An interpreter whose ``_hashlib`` cannot be imported (built without OpenSSL): ``hashlib``
    picks its own implementation, as it would for any caller."""
    program = (
        "import sys; sys.modules['_hashlib'] = None; from nbedit import _hashing;"
        "data = b'y' * int(sys.argv[1]);"
        "_hashing.load_openssl(); h = _hashing.openssl_sha256(); h.update(data);"
        "print(_hashing.sha256(data).hexdigest(), h.copy().hexdigest(), 'hashlib' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", program, str(LARGE + 3)], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    expected = hashlib.sha256(b"y" * (LARGE + 3)).hexdigest()
    assert out == [expected, expected, "True"]
