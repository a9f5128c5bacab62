"""Every size-dependent path of nbedit, forced on for small real inputs (``tests/test_forced_paths_real.py``).

nbedit takes other code paths for big inputs: a patch of 1 MiB is read through a line index
and its hunks kept as places (``formats.unified_runs``), a file of 4 MiB is spliced as arrays
(``exact_run.located_table``), one of 16 MiB is never held (``storage.streamed_file``), a
notebook of 4 MiB is read by msgspec, history payloads change compressor and are streamed
into their rows, and so on. The data tests use are small, so they never reach those paths.
Each ``PATHS`` entry here names module constants (and chunk sizes given as default arguments)
and the values that send a small input down one such path, with chunk sizes so small and odd
that their ends fall inside hunks, lines, CRLF pairs and multi-byte characters. ``REFERENCE``
sends everything down the ordinary path, whatever the process loaded before (``worth_it``
also says yes once msgspec is imported).

``forced(name)`` applies one entry for the span of a ``with`` block and forgets what the
module caches remember across calls (digest checkpoints, a notebook's derived successor), so
nothing kept under one setting is read under another. ``Reached`` counts the calls into the
forced paths, so a test can prove it reached them (a differential test that never takes the
other path proves nothing).
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

__all__ = ["PATHS", "REFERENCE", "Reached", "forced", "streamed"]

HUGE = 1 << 62

# (module, name) -> value; a name "func.__defaults__" replaces a function's default arguments
Setting = dict[tuple[str, str], Any]

REFERENCE: Setting = {
    ("nbedit.engine.formats.unified_runs", "INDEXED_FROM"): HUGE,
    ("nbedit.engine.exact_run", "STREAMED_FROM"): HUGE,
    ("nbedit.engine.plan", "STREAMED_FILE_FROM"): HUGE,
    ("nbedit.engine.plan", "HASH_MEANWHILE"): HUGE,
    ("nbedit.storage.atomic", "WRITTEN_BESIDE"): HUGE,
    ("nbedit.engine.digest", "IN_BACKGROUND"): HUGE,
    ("nbedit.engine.notebook.successor", "DERIVED_FROM"): HUGE,
    ("nbedit.engine.notebook.fast", "worth_it"): lambda size: False,
    ("nbedit.engine.notebook.scan", "worth_it"): lambda size: False,  # imported by name there
    ("nbedit.storage.versions", "ZSTD_FROM"): HUGE,
    ("nbedit.storage.versions", "ZSTD_COLD_FROM"): HUGE,
    ("nbedit.storage.versions", "ZSTD_FAST_FROM"): HUGE,
    ("nbedit.storage.versions", "BLOB_STREAM_FROM"): HUGE,
    ("nbedit.storage.versions", "LINK_FROM"): HUGE,
    ("nbedit.storage.root_source", "_IDENTIFIED_FROM"): HUGE,
    ("nbedit.storage.root_source", "_SYNCED_FROM"): HUGE,
}

# a big patch: read through a LineIndex a few lines at a time, its hunks kept as places
INDEXED: Setting = {
    ("nbedit.engine.formats.unified_runs", "INDEXED_FROM"): 1,
    ("nbedit.engine.formats.unified_runs", "RUN_LINES"): 3,
    ("nbedit.engine.formats.unified_runs", "_CHUNK"): 61,
}

# a patch read by hand to its end (what a fresh process does until ``re`` is imported), or by the
# compiled patterns from its first character
BY_HAND: Setting = {
    ("nbedit.engine.formats.unified_runs", "_hand_read"): lambda: HUGE,
    ("nbedit.engine.formats.unified", "HAND_READ"): HUGE,
}
BY_PATTERN: Setting = {
    ("nbedit.engine.formats.unified_runs", "_hand_read"): lambda: -1,
    ("nbedit.engine.formats.unified", "HAND_READ"): -1,
}

# a big held file: hunks located and spliced as arrays, new bytes a Spliced never joined
ARRAYS: Setting = {
    ("nbedit.engine.exact_run", "STREAMED_FROM"): 1,
    ("nbedit.engine.exact_run", "_WINDOW"): 5,
    ("nbedit.engine.spliced", "Spliced.chunks.__defaults__"): (7,),
}


def streamed(chunk: int) -> Setting:
    """A very big file: never held, read ``chunk`` bytes at a time, proved unchanged by digest."""
    return {
        ("nbedit.engine.plan", "STREAMED_FILE_FROM"): 1,
        ("nbedit.storage.streamed_file", "CHUNK"): chunk,
        ("nbedit.engine.streamed_splice", "_BATCH"): 5,
        ("nbedit.engine.plan", "HASH_MEANWHILE"): 1,
        ("nbedit.engine.spliced", "Spliced.chunks.__defaults__"): (chunk,),
    }


# the history and the writer of big payloads
STORAGE: Setting = {
    ("nbedit.storage.atomic", "WRITTEN_BESIDE"): 1,
    ("nbedit.engine.digest", "IN_BACKGROUND"): 1,
    ("nbedit.engine.digest", "CHECKPOINT"): 64,
    ("nbedit.engine.digest", "fingerprint_meanwhile.__kwdefaults__"): {"minimum": 1},
    ("nbedit.storage.versions", "ZSTD_FROM"): 1,
    ("nbedit.storage.versions", "ZSTD_COLD_FROM"): 1,
    ("nbedit.storage.versions", "ZSTD_FAST_FROM"): 1,
    ("nbedit.storage.versions", "BLOB_STREAM_FROM"): 29,
    ("nbedit.storage.versions", "LINK_FROM"): 1,
    ("nbedit.storage.root_source", "_IDENTIFIED_FROM"): 1,
    ("nbedit.storage.root_source", "_SYNCED_FROM"): 1,
    ("nbedit.storage.content_identity", "holds_bytes.__defaults__"): (13,),
    ("nbedit.storage.delta", "Regions.chunks.__defaults__"): (11,),
}

# a big notebook: msgspec reads it (cells decoded whole or by stretches), the scanner's windows
# and chunks are tiny, the next document is derived from the last edit, writes go by stretches
NOTEBOOK: Setting = {
    ("nbedit.engine.notebook.fast", "worth_it"): lambda size: True,
    ("nbedit.engine.notebook.scan", "worth_it"): lambda size: True,
    ("nbedit.engine.notebook.fast", "_WHOLE_FROM"): 0,
    ("nbedit.engine.notebook.fast", "_STRETCH"): 7,
    ("nbedit.engine.notebook.fast", "_BATCH"): 2,
    ("nbedit.engine.notebook.scan", "_CHUNK"): 97,
    ("nbedit.engine.notebook.scan", "_WINDOW"): 64,
    ("nbedit.engine.notebook.scan", "_MARGIN"): 16,
    ("nbedit.engine.notebook.scan", "_BATCH"): 2,
    ("nbedit.engine.notebook.successor", "DERIVED_FROM"): 1,
    ("nbedit.engine.notebook.successor", "_first_difference.__defaults__"): (5,),
    ("nbedit.engine.notebook.write", "_STRETCH"): 7,
    ("nbedit.engine.notebook.view", "_CHUNK"): 2,
}

# the scanner alone, msgspec left out (a process without it reads a big notebook so)
NOTEBOOK_SCAN: Setting = {
    **{key: value for key, value in NOTEBOOK.items() if key[0] != "nbedit.engine.notebook.fast"},
    ("nbedit.engine.notebook.fast", "worth_it"): lambda size: False,
    ("nbedit.engine.notebook.scan", "worth_it"): lambda size: False,
}

PATHS: dict[str, Setting] = {
    "reference": REFERENCE,
    "indexed": {**REFERENCE, **INDEXED},
    "by-hand": {**REFERENCE, **BY_HAND},
    "by-pattern": {**REFERENCE, **BY_PATTERN},
    "arrays": {**REFERENCE, **ARRAYS},
    "streamed-1": {**REFERENCE, **streamed(1)},
    "streamed-97": {**REFERENCE, **streamed(97)},
    "storage": {**REFERENCE, **STORAGE},
    "all": {**REFERENCE, **INDEXED, **BY_HAND, **ARRAYS, **streamed(97), **STORAGE, **NOTEBOOK},
    "notebook": {**REFERENCE, **NOTEBOOK},
    "notebook-batches": {**REFERENCE, **NOTEBOOK, ("nbedit.engine.notebook.fast", "_WHOLE_FROM"): HUGE},
    "notebook-scan": {**REFERENCE, **NOTEBOOK_SCAN},
    "notebook-all": {**REFERENCE, **NOTEBOOK, **STORAGE},
}


def _target(module: Any, name: str) -> tuple[Any, str]:
    """The object and attribute a dotted ``name`` sets (``Spliced.chunks.__defaults__``)."""
    *path, attribute = name.split(".")
    holder = module
    for part in path:
        holder = getattr(holder, part)
    return holder, attribute


def _forget_caches() -> None:
    from nbedit.engine import digest
    from nbedit.engine.notebook import successor

    successor.forget()
    with digest._lock:
        digest._recent.clear()


@contextmanager
def forced(name: str) -> Iterator[None]:
    """Every setting of ``PATHS[name]`` in force inside the block (restored after, even on errors)."""
    with pytest.MonkeyPatch.context() as patch:
        for (module_name, attribute), value in PATHS[name].items():
            holder, leaf = _target(importlib.import_module(module_name), attribute)
            patch.setattr(holder, leaf, value)
        _forget_caches()
        try:
            yield
        finally:
            _forget_caches()


class Reached:
    """Counts the calls into the forced paths while the block runs (``with Reached() as reached``)."""

    SPIES: tuple[tuple[str, str, Callable[[Any], bool]], ...] = (
        ("nbedit.engine.formats.unified", "text_lines", lambda result: not isinstance(result, list)),
        ("nbedit.engine.exact_run", "located_table", lambda result: result is not None),
        ("nbedit.engine.plan", "_plan_streamed", lambda result: result is not None),
        ("nbedit.engine.notebook.scan", "cell_bytes", lambda result: result is not None),
        ("nbedit.engine.notebook.planning", "recall", lambda result: result is not None),
    )

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._patch = pytest.MonkeyPatch()

    def __enter__(self) -> Reached:
        for module_name, attribute, counted in self.SPIES:
            module = importlib.import_module(module_name)
            original = getattr(module, attribute)
            self._patch.setattr(module, attribute, self._spy(attribute, original, counted))
        return self

    def _spy(self, name: str, original: Any, counted: Callable[[Any], bool]) -> Any:
        def spy(*arguments: Any, **keywords: Any) -> Any:
            result = original(*arguments, **keywords)
            if counted(result):
                self.counts[name] += 1
            return result

        return spy

    def __exit__(self, *exception: object) -> None:
        self._patch.undo()
