"""The checks on what a caller hands the workspace, before anything is parsed or planned.

Options (the fuzzy threshold, a declared encoding) are checked where they are given and refused
with an ``OptionError`` naming the option; a text that cannot be written as UTF-8 (a terminal's
stray bytes) is refused with a hint; a ``cell=`` / ``replace_all=`` given with a change is
folded into its parsed files. The workspace, the apply pipeline and the front ends share them.
"""

from __future__ import annotations

from nbedit.engine.models import CellSelector, FileChange
from nbedit.engine.text import canonical_encoding
from nbedit.errors import OptionError, PatchSyntaxError

__all__ = ["cell_selector", "check_text", "encodable", "refine", "valid_encoding", "valid_limit", "valid_threshold"]


def check_text(text: str, what: str) -> None:
    """Text with lone surrogates (bytes that were not UTF-8, e.g. from a Latin-1 terminal) cannot be written."""
    if text.isascii():
        return  # known without a look (the string says so): no copy of a 36 MB patch made to check it
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        piece = text[error.start : error.end]
        try:  # a byte that was not UTF-8, smuggled in as a surrogate (surrogateescape)
            shown = repr(piece.encode("utf-8", "surrogateescape"))
        except UnicodeEncodeError:  # a lone surrogate of another kind (e.g. half of a broken pair)
            shown = repr(piece)
        raise PatchSyntaxError(
            f"{what} contains bytes that are not UTF-8 ({shown} at character {error.start + 1}), "
            "probably typed in a terminal that does not use UTF-8",
            dialect="edit",
            hint="pass the text as UTF-8 (set LANG to a UTF-8 locale, or read it from a UTF-8 file "
            "with --old-file/--new-file)",
        ) from None


def encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def valid_threshold(threshold: object) -> float:
    """The fuzzy threshold as a float in (0, 1]; anything else is an ``OptionError``."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise OptionError(
            f"threshold must be a number in (0, 1], not {threshold!r}; 0.9 is the default "
            "(lower accepts looser fuzzy matches, 1 accepts only identical lines)",
            option="threshold",
        )
    if not 0.0 < threshold <= 1.0:  # also false for NaN
        raise OptionError(
            f"threshold {threshold!r} is outside (0, 1]; pass a similarity such as 0.9 "
            "(lower accepts looser fuzzy matches, 1 accepts only identical lines)",
            option="threshold",
        )
    return float(threshold)


def valid_encoding(encoding: object) -> str | None:
    """A declared encoding by Python's canonical name (None: detect); ``OptionError`` if unknown."""
    if encoding is None:
        return None
    if not isinstance(encoding, str):
        raise OptionError(f"encoding must be a name such as 'cp1252', not {encoding!r}", option="encoding")
    return canonical_encoding(encoding)


def cell_selector(cell: str | int) -> CellSelector:
    if isinstance(cell, int):
        return CellSelector(index=cell)
    text = str(cell).strip()
    if text.lstrip("-").isdigit():
        return CellSelector(index=int(text))
    return CellSelector(id=text)


def refine(file_change: FileChange, selector: CellSelector | None, replace_all: bool) -> FileChange:
    from nbedit._dataclass import replace

    if selector is not None:
        file_change = replace(file_change, cell=selector)
    if replace_all:
        file_change = replace(
            file_change, hunks=tuple(replace(h, replace_all=True) for h in file_change.hunks)
        )
    return file_change


def valid_limit(limit: object, name: str) -> int:
    """A cell or hunk limit: a positive whole number, else an ``OptionError``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise OptionError(f"{name} must be a whole number of at least 1, not {limit!r}", option=name)
    return limit
