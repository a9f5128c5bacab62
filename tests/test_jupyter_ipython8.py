"""The Jupyter tests again under IPython 8, whose input transformers and counters differ from 9's.

IPython 8 bumps ``execution_count`` after a cell runs (9 before) and strips
doctest prompts by other rules, so the byte-exact transformer and the ``In[n]``
bookkeeping are worth running on both. The second interpreter lives outside
this environment; point ``NBEDIT_IPYTHON8_PYTHON`` at it to run this test::

    python -m venv "$TMPDIR"/ipython8
    "$TMPDIR"/ipython8/bin/pip install "ipython<9" ipywidgets ipykernel nbclient rapidfuzz rich nbformat pytest
    NBEDIT_IPYTHON8_PYTHON="$TMPDIR"/ipython8/bin/python pytest tests/test_jupyter_ipython8.py
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYTHON = os.environ.get("NBEDIT_IPYTHON8_PYTHON")
TEST_FILES = [
    "tests/test_jupyter_magics.py",
    "tests/test_jupyter_review.py",
    "tests/test_jupyter_history.py",
    "tests/test_jupyter_kernel.py",
]


@pytest.mark.slow
@pytest.mark.skipif(not PYTHON, reason="set NBEDIT_IPYTHON8_PYTHON to an interpreter with ipython<9")
def test_jupyter_suite_under_ipython_8() -> None:
    assert PYTHON is not None
    version = subprocess.run(
        [PYTHON, "-c", "import IPython; print(IPython.version_info[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version == "8", f"{PYTHON} has IPython {version}, not 8"
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}  # the kernel subprocess must import this nbedit
    environment.pop("NBEDIT_IPYTHON8_PYTHON")
    finished = subprocess.run(
        [PYTHON, "-m", "pytest", *TEST_FILES, "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert finished.returncode == 0, finished.stdout[-4000:] + finished.stderr[-2000:]
