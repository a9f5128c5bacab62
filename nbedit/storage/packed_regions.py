"""``PackedRegions``: a version as a packed region delta, what ``versions.pack_regions`` gives.

In a module of its own because a ``NamedTuple`` is made with ``collections.namedtuple``, which
compiles the class's ``__new__`` (a quarter of a millisecond): only a change new to the history
packs a region delta, so a command that records a change the history already holds never makes
the class. ``nbedit.storage.versions.PackedRegions`` is this class (loaded when first named).
"""

from __future__ import annotations

from nbedit._dataclass import NamedTuple

__all__ = ["PackedRegions"]


class PackedRegions(NamedTuple):
    """A version as a region delta, packed (``pack_regions``): what ``store_version`` stores."""

    packing: int  # RAW, ZLIB or ZSTD
    data: bytes
    size: int  # the delta's size before packing: its replacements and its table
