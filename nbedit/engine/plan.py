"""Planning: a parsed ``Change`` plus the files as they are now -> a ``Plan``.

Nothing is written here. The planner asks a ``FileSource`` (provided by the
workspace, which owns all I/O) for bytes, decodes them, has every hunk of a file
located against the *original* text and the replacements spliced in
(``engine/locate_hunks.py``; a diff exactly in place takes ``engine/exact_run.py``;
a notebook goes to ``engine/notebook/``), runs the syntax guard
(``engine/syntax_guard.py``), and plans adds, deletes and moves. The result holds
the exact before and after bytes and the fingerprint the writer re-checks, so what
is previewed is exactly what is written.

The stages go one way: the matcher and the hunk locator never import this module.
"""

from __future__ import annotations

from nbedit._dataclass import replace
from nbedit._gc import paused
from nbedit.engine.exact_run import edit_bytes
from nbedit.engine.models import (
    Change,
    FileChange,
    FilePlan,
    LocatedHunk,
    Plan,
    context_free,
    decoded_when_read,
    digested_when_read,
    is_notebook_path,
    joined_when_read,
)
from nbedit.engine.text import UTF8, Codec, canonical_encoding, decode, encode, fingerprint
from nbedit.engine.text_edit import (  # moved; still importable from here
    DEFAULT_MAX_CELLS,
    DEFAULT_MAX_HUNKS,
    GUARD_SUFFIXES,
    PlanOptions,
    TextEdit,
    splice,
)
from nbedit.engine.written_paths import resolve_backslashes
from nbedit.errors import (
    FileExists,
    FileMissing,
    FileTooLarge,
    NoMatch,
    NotAFile,
    NotebookError,
    PartlyApplied,
    option,
)

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from nbedit.engine.source import FileSource

__all__ = [
    "DEFAULT_MAX_CELLS",
    "DEFAULT_MAX_HUNKS",
    "FileSource",
    "PlanOptions",
    "TextEdit",
    "edit_text",  # noqa: F822 - given by the module __getattr__ (the matcher loads when first used)
    "exclude_hunks",
    "plan_change",
    "splice",
    "text_diff",  # noqa: F822 - given by the module __getattr__ (nbedit.engine.whole_diff)
]


# From this size a file's fingerprint is hashed on another thread while the hunks are located:
# OpenSSL hashes it (``nbedit._hashing``: from 256 KiB) and releases the GIL meanwhile; 256 KiB
# take 0.1 ms (a CPU with SHA instructions) to 0.7 ms (one without), a thread ~0.05 ms. Below
# it the interpreter's own SHA-256 holds the GIL, so a thread would only add its start.
HASH_MEANWHILE = 256 << 10
# bytes; from this size an updated file whose source can stream it (``storage.root_source``) is
# first read in chunks, its hunks located as they go by (``engine.streamed_splice``): when all are
# exactly in place in ASCII bytes the plan never holds the file, only its size and SHA-256, and
# the writer and the history read it again (``storage.streamed_file``). Each such reading costs
# a pass of SHA-256 (~0.25 s a 80 MB file on a CPU without SHA instructions), so files that
# are cheap to hold are held as before.
STREAMED_FILE_FROM = 16 << 20


def plan_change(change: Change, source: FileSource, options: PlanOptions, *, root: str = ".") -> Plan:
    """Plan every file of a change; a later change to the same path builds on the earlier one."""
    with paused():  # a big notebook or patch becomes many objects: see nbedit._gc
        return _plan_change(change, source, options, root)


def _plan_change(change: Change, source: FileSource, options: PlanOptions, root: str) -> Plan:
    _check_hunk_count(change, options.max_hunks)
    plans: list[FilePlan] = []
    positions: dict[str, int] = {}
    for file_change in change.files:
        path = source.normalise(resolve_backslashes(file_change, source))
        if file_change.new_path is not None:
            file_change = replace(file_change, new_path=source.normalise(file_change.new_path))
        file_change = replace(file_change, path=path)
        if path in positions:
            earlier = plans[positions[path]]
            chained = _ChainedSource(source, path, earlier.after_bytes)
            later = _plan_file(file_change, chained, options, change.dialect)
            plans[positions[path]] = _merge(earlier, later)
            continue
        positions[path] = len(plans)
        plans.append(_plan_file(file_change, source, options, change.dialect))
    plans = _check_targets(plans, source, options)
    _check_whole_change_applied(plans)
    return Plan(tuple(plans), dialect=change.dialect, root=root)


def _check_hunk_count(change: Change, limit: int) -> None:
    count = sum(len(file_change.hunks) for file_change in change.files)
    if count > limit:
        path = change.files[0].path if len(change.files) == 1 else None
        raise FileTooLarge(
            f"the change has {count:,} hunks, over the {limit:,}-hunk limit; nothing was located or written. "
            "Split it into several changes (one per file or per part of a file), or raise max_hunks "
            "(Workspace(max_hunks=...)) if you really mean to apply it at once",
            path=path,
            size=count,
            limit=limit,
            unit="hunks",
        )


def _check_whole_change_applied(plans: Sequence[FilePlan]) -> None:
    """A change is already applied as a whole or not at all: a mix is refused."""
    applied = [file_plan.path for file_plan in plans if file_plan.already_applied]
    pending = [file_plan.path for file_plan in plans if file_plan.changed and not file_plan.already_applied]
    if applied and pending:
        raise PartlyApplied(
            f"the change is already applied to {', '.join(applied)} but not to {', '.join(pending)}: "
            "the files have drifted or part of this change was made already",
            path=applied[0],
        )


def _check_targets(plans: list[FilePlan], source: FileSource, options: PlanOptions) -> list[FilePlan]:
    """Moves must not land on an existing file unless overwriting is allowed; a move that may
    overwrite one records its fingerprint, so the writer replaces only the file the preview saw."""
    for index, file_plan in enumerate(plans):
        if file_plan.new_path is None or file_plan.new_path == file_plan.path:
            continue
        existing = source.read(file_plan.new_path)
        if existing is not None and not options.overwrite:
            raise FileExists(
                f"{file_plan.new_path}: the move target already exists; "
                f"remove it first or allow overwrite ({option('overwrite')})",
                path=file_plan.new_path,
            )
        if existing is not None:
            plans[index] = replace(file_plan, target_fingerprint=fingerprint(existing))
    return plans


class _ChainedSource:
    """A source that sees one path as an earlier part of the same change left it."""

    def __init__(self, inner: FileSource, path: str, data: bytes | None) -> None:
        self.inner, self.path, self.data = inner, path, data

    def normalise(self, path: str) -> str:
        return self.inner.normalise(path)

    def read(self, path: str) -> bytes | None:
        return self.data if path == self.path else self.inner.read(path)

    def mode(self, path: str) -> int | None:
        return self.inner.mode(path)


def _merge(earlier: FilePlan, later: FilePlan) -> FilePlan:
    return replace(
        later,
        before=earlier.before,
        before_bytes=earlier.before_bytes,
        fingerprint=earlier.fingerprint,
        operation="add" if earlier.operation == "add" and later.operation != "delete" else later.operation,
        hunks=(),  # the hunks of the two parts refer to different texts; previews diff the whole file
        display_before=earlier.display_before,
        notes=(*earlier.notes, *later.notes, "changed by more than one part of the patch"),
    )


def _edit_text() -> Callable[..., TextEdit]:
    """The text stage's ``edit_text`` (``engine/locate_hunks.py``), imported when a file needs it: a
    diff whose hunks all stand where they say is spliced by ``exact_run`` and never imports the
    matcher (start-up time of a small ``nbedit apply``)."""
    from nbedit.engine.locate_hunks import edit_text

    return edit_text


def __getattr__(name: str) -> object:
    if name == "edit_text":  # still importable from here
        return _edit_text()
    if name == "FileSource":  # moved to nbedit.engine.source (a Protocol: loaded when named)
        from nbedit.engine.source import FileSource

        return FileSource
    if name == "text_diff":  # moved to nbedit.engine.whole_diff; still importable from here
        from nbedit.engine.whole_diff import text_diff

        return text_diff
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _plan_file(change: FileChange, source: FileSource, options: PlanOptions, dialect: str = "") -> FilePlan:
    path = change.path
    if (
        change.operation == "update"
        and change.hunks
        and change.cell is None
        and not change.sequential
        and options.encoding is None
        and not is_notebook_path(path)
    ):
        streamed = getattr(source, "streamed", None)  # a source that can read a big file in chunks
        opened = streamed(path, STREAMED_FILE_FROM) if streamed is not None else None
        if opened is not None:
            planned = _plan_streamed(change, source, *opened)
            if planned is not None:
                return planned  # else: not every hunk exactly in place, or not ASCII: read it whole
    data = source.read(path)
    if is_notebook_path(path) and change.operation == "update" and data is not None:
        from nbedit.engine.notebook import plan_notebook

        return plan_notebook(
            path,
            data,
            change,
            options=options,
            mode=source.mode(path),
            dialect=dialect,
            edit_text=_edit_text(),
        )
    if change.cell is not None:
        raise NotebookError(
            f"{path}: a cell ({change.cell}) was given, but cell= / --cell applies only to notebooks "
            "(.ipynb files) that exist; drop the cell to edit this file as text; nothing was changed",
            path=path,
        )
    if change.operation == "add":
        return _plan_add(change, data, source, options)
    if change.operation == "delete":
        return _plan_delete(change, data, source, options)
    if data is None:
        if change.hunks and all(not hunk.old for hunk in change.hunks):
            content = "".join(hunk.new for hunk in change.hunks)
            return _plan_add(
                replace(change, operation="add", content=content, hunks=()), None, source, options
            )
        raise FileMissing(
            f"{path}: cannot update a file that does not exist; check the path "
            "(relative to the workspace root) or create it with an add",
            path=path,
        )
    digest = None
    if len(data) >= HASH_MEANWHILE:
        # the SHA-256 of the bytes the writer re-checks, on another core while this one locates the
        # hunks (imported here: a small file, the usual agent call, needs no thread)
        from nbedit.engine.digest import fingerprint_meanwhile

        digest = fingerprint_meanwhile(data, minimum=HASH_MEANWHILE)
    text: str | None
    dropped = False
    try:
        if options.encoding is None and data.isascii() and b"\x00" not in data:
            # what ``decode`` says of ASCII bytes without NULs (UTF-8, no BOM), without making the
            # text: the bytes are the text, at the same offsets
            text, codec = None, UTF8
        else:
            text, codec = decode(data, path, options.encoding)
            if codec.bom:  # a diff of the bytes shows the BOM as part of line 1 (engine.bom_hunks)
                from nbedit.engine.bom_hunks import as_decoded

                hunks, codec = as_decoded(change.hunks, codec)
                change = replace(change, hunks=tuple(hunks)) if hunks is not change.hunks else change
                dropped = not codec.bom  # the diff takes the BOM away
        base = _is_base(change, data)
        in_place = not change.sequential and base is not False  # not the base: every hunk is checked
        spliced = None
        if in_place and codec == UTF8 and (text is None or len(text) == len(data)):
            # ASCII: the hunks are found and spliced in the bytes, and the text is not held while
            # the new bytes are joined (a big file is then held twice at most, not three times)
            text = None  # the bytes are ASCII: checked above, or the text was as long as they are
            spliced = edit_bytes(None, data, codec, change.hunks, ascii_bytes=True)
        if spliced is None and text is None:
            text = data.decode()
        edit = None
        if spliced is None:
            assert text is not None
            edit_text = _edit_text()
            edit = edit_text(text, change.hunks, options, path=path, sequential=change.sequential, base=base)
            if path.lower().endswith(GUARD_SUFFIXES):  # the guard's module loads for these only
                from nbedit.engine.syntax_guard import guard

                edit = guard(path, text, edit)
    except BaseException:
        if digest is not None:
            digest()  # a refused change leaves no thread behind
        raise
    # the plan is handed back while the digest is still being hashed: the field joins it when
    # first read (by ``apply``'s history entry, usually while the new copy is being flushed)
    before_fingerprint = digested_when_read(digest) if digest is not None else None
    if edit is not None:
        assert text is not None
        unchanged = edit.after == text and not dropped
        after_bytes = data if unchanged else encode(edit.after, codec, change.path)
        return _file_plan(
            change, source, data, text, codec, edit.after, after_bytes, edit, before_fingerprint
        )
    assert spliced is not None
    located, new_bytes = spliced
    # the new text is decoded from the new bytes only if something reads it: writing the file and
    # recording it take the bytes alone
    after = decoded_when_read(new_bytes)
    if isinstance(new_bytes, bytes):
        after_bytes = data if new_bytes == data else new_bytes
    elif new_bytes.same_as(data):
        after_bytes = data
    else:  # a big file's new bytes stay unjoined: written and recorded piece by piece (engine.spliced)
        after_bytes = joined_when_read(new_bytes)
    # and the old text (ASCII: the bytes at the same offsets) is decoded again only if something
    # reads it: the history and the counts read the bytes (``models.undecoded_before``)
    before = decoded_when_read(data)
    return _file_plan(change, source, data, before, codec, after, after_bytes, located, before_fingerprint)


def _plan_streamed(change: FileChange, source: FileSource, content: Any, chunks: Any) -> FilePlan | None:
    """The plan of a big file read once in chunks (``content``: the stand-in for its bytes,
    ``storage.streamed_file``; ``chunks``: its first pass, which hashes them): every hunk
    located as it goes by (``engine.streamed_splice``) and the new bytes kept as trimmed spans
    of the old ones (``engine.spliced``). None when a hunk is not exactly in place, the bytes
    are not ASCII, or nothing would change: the caller plans the file read whole."""
    from nbedit._hashing import HashedBeside, openssl_sha256
    from nbedit.engine.spliced import Spliced
    from nbedit.engine.streamed_splice import located_in_chunks

    after = openssl_sha256()  # the new bytes' SHA-256, made on the way (no pass over them later)
    hashing = HashedBeside((after.update,))  # on another core while this one locates the hunks
    blob = None
    read = chunks
    if change.base_blob is not None:  # git's ``index`` line: is this file the diff's base (``_is_base``)?
        import hashlib

        blob = (hashlib.sha256 if len(change.base_blob) > 40 else hashlib.sha1)(b"blob %d\0" % content.size)
        read = _fed(chunks, blob.update)
    try:
        found = located_in_chunks(read, change.hunks, hashing, content.size)
    except OSError as error:
        raise NotAFile(f"{change.path}: cannot be read ({error.strerror or error})", path=change.path) from None
    finally:
        chunks.close()
        content.release()  # a pass that never started (the first hunk could not stream) still closes
        hashing.close()
    if found is None:
        return None
    if (
        blob is not None
        and not blob.hexdigest().startswith(change.base_blob)  # type: ignore[arg-type]
        and any(map(context_free, change.hunks))
    ):
        return None  # not the base: a context-free hunk's line number is no evidence here; the full search
    located, (starts, ends, inserted, cuts) = found
    if not inserted and starts == ends:
        return None  # every hunk's new text is its old one
    spliced = Spliced.of_spans(content, starts, ends, inserted, cuts)
    spliced.known_fingerprint = after.hexdigest()
    before_mode = source.mode(change.path)
    mode = change.new_mode if change.new_mode is not None else before_mode
    return FilePlan(
        path=change.path,
        operation="update",
        before=decoded_when_read(content),  # read again (and checked) only if something reads them
        after=decoded_when_read(spliced),
        before_bytes=joined_when_read(content),
        after_bytes=joined_when_read(spliced),
        fingerprint=content.fingerprint,
        hunks=located,
        new_path=change.new_path if change.new_path != change.path else None,
        mode=mode,
        before_mode=before_mode,
    )


def _fed(chunks: Any, update: Any) -> Any:
    """``chunks``, each also handed to ``update`` as it goes by."""
    for block in chunks:
        update(block)
        yield block


def _is_base(change: FileChange, data: bytes) -> bool | None:
    """Whether ``data`` is the diff's base by git's ``index`` line; None when that is not given or
    not needed (only a context-free hunk's line number depends on it, so only then is it hashed).

    git names a file's content by its blob hash, ``sha1(b"blob <size>\\0" + bytes)`` (sha256 in
    a repository of that object format, whose hashes are longer). A file checked out with CRLF
    line endings (``core.autocrlf``) is the base when its text with LF endings hashes to the
    blob: the same lines, so the same line numbers.
    """
    if change.base_blob is None or not any(map(context_free, change.hunks)):
        return None
    import hashlib

    algorithm = hashlib.sha256 if len(change.base_blob) > 40 else hashlib.sha1
    if algorithm(b"blob %d\0" % len(data) + data).hexdigest().startswith(change.base_blob):
        return True
    if b"\r\n" not in data:
        return False
    # checked out with CRLF line endings (core.autocrlf): the blob is the LF text, line for line
    stored = data.replace(b"\r\n", b"\n")
    return algorithm(b"blob %d\0" % len(stored) + stored).hexdigest().startswith(change.base_blob)


def _encoding_facts(codec: Codec) -> tuple[str | None, tuple[str, ...]]:
    """The plan's record of a non-UTF-8 codec, and a note saying how the file was read."""
    if codec.encoding == "utf-8":
        return None, ()
    how = "detected" if codec.detected else "declared" if not codec.bom else "by its byte-order mark"
    return codec.encoding, (f"read and written as {codec.encoding} ({how})",)


def _file_plan(
    change: FileChange,
    source: FileSource,
    data: bytes,
    text: str,
    codec: Codec,
    after: str,
    after_bytes: bytes,
    edit: TextEdit | tuple[LocatedHunk, ...],
    before_fingerprint: str | None = None,
) -> FilePlan:
    """The plan of an updated text file: ``edit`` gives its hunks, notes and verdict (spliced in bytes: its hunks)."""
    hunks, already_applied, notes = (
        (edit.hunks, edit.already_applied, edit.notes) if isinstance(edit, TextEdit) else (edit, False, ())
    )
    encoding, encoding_notes = _encoding_facts(codec)
    before_mode = source.mode(change.path)
    mode = change.new_mode if change.new_mode is not None else before_mode
    return FilePlan(
        path=change.path,
        operation="update",
        before=text,
        after=after,
        before_bytes=data,
        after_bytes=after_bytes,
        fingerprint=fingerprint(data) if before_fingerprint is None else before_fingerprint,
        hunks=hunks,
        new_path=change.new_path if change.new_path != change.path else None,
        mode=mode,
        before_mode=before_mode,
        already_applied=already_applied and mode == before_mode,
        notes=(*encoding_notes, *notes),
        encoding=encoding,
    )


def _plan_add(change: FileChange, data: bytes | None, source: FileSource, options: PlanOptions) -> FilePlan:
    path = change.path
    content = change.content or ""
    if data is not None:
        if not options.overwrite:
            raise FileExists(
                f"{path}: already exists, so it cannot be added; allow overwrite "
                f"({option('overwrite')}) to replace it, or send an update instead",
                path=path,
            )
        text, codec = decode(data, path, options.encoding)
        encoding, encoding_notes = _encoding_facts(codec)
        return FilePlan(
            path=path,
            operation="update",
            before=text,
            after=content,
            before_bytes=data,
            after_bytes=encode(content, codec, path),
            fingerprint=fingerprint(data),
            mode=change.new_mode if change.new_mode is not None else source.mode(path),
            notes=(*encoding_notes, "replaces an existing file (overwrite allowed)"),
            encoding=encoding,
        )
    notes: tuple[str, ...] = ()
    if path.lower().endswith(GUARD_SUFFIXES):
        from nbedit.engine.syntax_guard import new_file_quotes

        content, notes = new_file_quotes(path, content)
    return FilePlan(
        path=path,
        operation="add",
        before=None,
        after=content,
        before_bytes=None,
        after_bytes=encode(content, _new_file_codec(options.encoding), path),
        fingerprint=None,
        mode=change.new_mode,
        encoding=_encoding_facts(_new_file_codec(options.encoding))[0],
        notes=notes,
    )


def _new_file_codec(encoding: str | None) -> Codec:
    """How a new file is written: UTF-8 unless an encoding was declared (UTF-16 gets its BOM)."""
    if encoding is None:
        return UTF8
    name = canonical_encoding(encoding)
    if name == "utf-16":
        return Codec("utf-16-le", True)
    return Codec(name, False)


def _plan_delete(
    change: FileChange, data: bytes | None, source: FileSource, options: PlanOptions | None = None
) -> FilePlan:
    path = change.path
    if data is None:
        raise FileMissing(f"{path}: cannot delete a file that does not exist; check the path", path=path)
    text, codec = decode(data, path, options.encoding if options is not None else None)
    expected = "".join(hunk.old for hunk in change.hunks)
    if codec.bom:  # a diff of the bytes shows the BOM as part of line 1 (engine.bom_hunks)
        from nbedit.engine.bom_hunks import without_bom

        expected = without_bom(expected, codec)
    if change.hunks and not expected and text:
        raise NoMatch(
            f"{path}: the patch deletes this file as an empty file (no hunk), but the file has content; "
            "git refuses this too (removal patch leaves file contents). Use a diff whose hunk removes "
            "every line, or empty the file first",
            path=path,
        )
    if change.hunks and _loose(expected) != _loose(text):
        raise NoMatch(
            f"{path}: the file differs from what the patch expects to delete; "
            "re-create the patch against the current file",
            path=path,
        )
    return FilePlan(
        path=path,
        operation="delete",
        before=text,
        after=None,
        before_bytes=data,
        after_bytes=None,
        fingerprint=fingerprint(data),
        mode=source.mode(path),
    )


def _loose(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]


def exclude_hunks(plan: Plan, excluded: set[tuple[int, int]]) -> Plan:
    """The same plan with some hunks left out (the review widget's toggles).

    Hunks were located against the original text, so leaving one out is just
    not splicing it: the other replacements stay exactly where they were.
    """
    files: list[FilePlan] = []
    for file_number, file_plan in enumerate(plan.files):
        dropped = {hunk for (number, hunk) in excluded if number == file_number}
        if not dropped or not file_plan.hunks:
            files.append(file_plan)
            continue
        kept = tuple(item for n, item in enumerate(file_plan.hunks) if n not in dropped)
        if file_plan.notebook:
            from nbedit.engine.notebook import replan_notebook

            files.append(replan_notebook(file_plan, kept))
            continue
        assert file_plan.before is not None and file_plan.before_bytes is not None
        text = file_plan.before
        after = splice(text, kept)
        _, codec = decode(file_plan.before_bytes, file_plan.path, file_plan.encoding)
        files.append(
            replace(
                file_plan,
                after=after,
                after_bytes=file_plan.before_bytes if after == text else encode(after, codec, file_plan.path),
                hunks=kept,
            )
        )
    return replace(plan, files=tuple(files), _diff_cache=[])
