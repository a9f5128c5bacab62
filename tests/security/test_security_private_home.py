"""Issue 22 items 1-3 and 10: the history home is private, trusts no planted link, no other
user's entries and no recorded path outside its root, and is created whole or not at all.

The history keeps the bytes of every edited file (a ``.env`` among them), so who may read
the home and whose entries it holds decide whether an edit leaks or is overwritten. The
cases about other users run a second, unprivileged user made for the test
(``conftest.other_user``) next to root.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import nbedit
from nbedit.errors import HistoryError

SECRET = b"API_KEY=hunter2-not-for-others\n"


def _modes(home: Path) -> dict[str, int]:
    found = {".": stat.S_IMODE(home.stat().st_mode)}
    for path in home.rglob("*"):
        found[str(path.relative_to(home))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def _assert_private(home: Path) -> None:
    for name, mode in _modes(home).items():
        path = home / name
        wanted = 0o700 if path.is_dir() else 0o600
        assert mode == wanted, f"{name} is {oct(mode)}, not {oct(wanted)}"


def _edit_secret(root: Path, home: Path, *, size: int = 200_000) -> nbedit.Workspace:
    root.mkdir(exist_ok=True)
    env = root / ".env"
    env.write_bytes(SECRET + b"#" * size)  # big enough for the history to link the old file
    env.chmod(0o600)
    ws = nbedit.Workspace(root, home=home)
    ws.apply(ws.plan_edit(".env", "hunter2", "hunter3"))
    return ws


# -- item 1: modes -------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o000, 0o022])
def test_a_new_home_is_0700_and_every_file_in_it_0600_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        home = tmp_path / "deep" / "home"
        ws = _edit_secret(tmp_path / "root", home)
        (tmp_path / "root" / "notes.txt").write_bytes(b"one\n")
        ws.apply(ws.plan_edit("notes.txt", "one", "two"))
        assert Path(f"{home}/history.sqlite3-wal").exists()  # the open store's log is checked too
        _assert_private(home)
        ws.undo()
        ws.close()
        _assert_private(home)
    finally:
        os.umask(old)


EDIT_AS_USER = """
import json, os, nbedit
os.umask(0)
ws = nbedit.Workspace("root")
ws.apply(ws.plan_edit(".env", "hunter2", "hunter3"))
ws.close()
print(json.dumps({"ok": True}))
"""


def test_a_home_made_by_an_unprivileged_user_with_umask_0_is_private(other_user, shared: Path) -> None:  # type: ignore[no-untyped-def]
    root = shared / "root"
    root.mkdir()
    (root / ".env").write_bytes(SECRET + b"#" * 200_000)
    for path in (root, root / ".env"):
        os.chown(path, other_user.uid, other_user.gid)
    home = shared / "user-home"
    os.chown(shared, other_user.uid, other_user.gid)
    assert other_user.run(EDIT_AS_USER, cwd=shared, home=home)["ok"]
    _assert_private(home)
    assert {path.stat().st_uid for path in [home, *home.rglob("*")]} == {other_user.uid}


GREP = """
import json, subprocess
found = subprocess.run(["grep", "-r", "-l", "hunter", {home!r}], capture_output=True, text=True)
print(json.dumps({{"found": found.stdout.splitlines()}}))
"""


def test_another_user_cannot_find_the_secrets_of_an_edited_file(other_user, shared: Path) -> None:  # type: ignore[no-untyped-def]
    old = os.umask(0o022)
    try:
        home = shared / "home"
        _edit_secret(shared / "root", home).close()
    finally:
        os.umask(old)
    result = other_user.run(GREP.format(home=str(home)), cwd=shared, check=False)
    assert result["found"] == [], result


def test_a_home_made_by_an_older_nbedit_is_narrowed_and_doctor_says_so(
    other_user, shared: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    home = shared / "home"
    _edit_secret(shared / "root", home).close()
    home.chmod(0o755)  # as the first round left it
    for path in home.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    wide = other_user.run(GREP.format(home=str(home)), cwd=shared, check=False)
    assert wide["found"], "the set-up should leave the history readable by others"
    doctor = subprocess.run(
        [sys.executable, "-m", "nbedit", "doctor"],
        cwd=tmp_path, env={**os.environ, "NBEDIT_HOME": str(home)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert doctor.returncode == 0, doctor.stderr
    assert "readable by other users" in doctor.stdout and "narrowed now" in doctor.stdout, doctor.stdout
    _assert_private(home)
    assert other_user.run(GREP.format(home=str(home)), cwd=shared, check=False)["found"] == []
    again = subprocess.run(
        [sys.executable, "-m", "nbedit", "doctor"],
        cwd=tmp_path, env={**os.environ, "NBEDIT_HOME": str(home)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "readable by other users" not in again.stdout


def test_opening_a_wide_home_narrows_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _edit_secret(tmp_path / "root", home).close()
    home.chmod(0o777)
    (home / "history.sqlite3").chmod(0o666)
    ws = nbedit.Workspace(tmp_path / "root", home=home)
    ws.history()
    ws.close()
    _assert_private(home)


# -- item 2: links planted in the home -----------------------------------------------------


def test_a_link_planted_at_the_id_floor_or_its_temporary_name_writes_nothing_through_it(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    # the first round's temporary name was predictable: .<name>.<pid>, opened following links
    (home / f".history.sqlite3.last-id.{os.getpid()}").symlink_to(victim)
    (home / "history.sqlite3.last-id").symlink_to(victim)
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_bytes(b"one\n")
    ws = nbedit.Workspace(root, home=home)
    assert ws.apply(ws.plan_edit("a.txt", "one", "two")).entry_id is not None
    ws.close()
    assert victim.read_bytes() == b"precious\n"
    assert not (home / "history.sqlite3.last-id").is_symlink()  # replaced by a private file
    assert stat.S_IMODE((home / "history.sqlite3.last-id").stat().st_mode) == 0o600


@pytest.mark.parametrize("companion", ["-wal", "-shm", ""])
def test_a_database_or_log_that_is_a_link_is_refused(tmp_path: Path, companion: str) -> None:
    home = tmp_path / "home"
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_bytes(b"one\n")
    ws = nbedit.Workspace(root, home=home)
    ws.apply(ws.plan_edit("a.txt", "one", "two"))
    ws.close()
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"precious\n")
    planted = Path(f"{home}/history.sqlite3{companion}")
    planted.unlink(missing_ok=True)
    planted.symlink_to(victim)
    ws = nbedit.Workspace(root, home=home)
    with pytest.raises(HistoryError, match="not a regular file"):
        ws.apply(ws.plan_edit("a.txt", "two", "three"))
    assert (root / "a.txt").read_bytes() == b"two\n"
    assert victim.read_bytes() == b"precious\n"


def test_a_blob_folder_swapped_for_a_link_gets_no_copy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = tmp_path / "root"
    ws = _edit_secret(root, home)
    ws.close()
    elsewhere = tmp_path / "collector"
    elsewhere.mkdir(mode=0o777)
    (elsewhere / "precious.txt").write_bytes(b"not a blob\n")  # a sweep through the link would delete it
    blobs = home / "blobs"
    for path in blobs.iterdir():
        path.unlink()
    blobs.rmdir()
    blobs.symlink_to(elsewhere)
    (root / "fresh.env").write_bytes(
        SECRET + b"#" * 300_000
    )  # not in the history yet: its old copy is linked
    ws = nbedit.Workspace(root, home=home)
    with pytest.raises(HistoryError, match="not a folder of yours"):
        ws.apply(ws.plan_edit("fresh.env", "hunter2", "hunter4"))
    ws.close()
    assert sorted(path.name for path in elsewhere.iterdir()) == ["precious.txt"]
    assert (elsewhere / "precious.txt").read_bytes() == b"not a blob\n"
    assert b"hunter2" in (root / "fresh.env").read_bytes()


# -- item 3: someone else's home, forged paths ---------------------------------------------


def _forge(root: Path, home: Path, session: str) -> str:
    """A real store whose entry, undone, would write the forger's bytes into ``root/notes.txt``."""
    (root / "notes.txt").write_bytes(b"the forger's content\n")
    forger = nbedit.Workspace(root, home=home, session=session)
    entry = forger.apply(forger.plan_edit("notes.txt", "the forger's content", "my own work")).entry_id
    forger.close()
    assert entry is not None
    return entry


def test_a_home_owned_by_another_user_is_not_trusted_by_root(
    other_user, shared: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "project"
    root.mkdir()
    home = shared / "their-home"
    _forge(root, home, "cli:victim")
    for path in [home, *home.rglob("*")]:
        os.chown(path, other_user.uid, other_user.gid, follow_symlinks=False)
    assert (root / "notes.txt").read_bytes() == b"my own work\n"
    completed = subprocess.run(
        [sys.executable, "-m", "nbedit", "undo", "--yes"],
        cwd=root, env={**os.environ, "NBEDIT_HOME": str(home), "NBEDIT_SESSION": "cli:victim"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "belongs to" in completed.stderr and other_user.name in completed.stderr
    assert (root / "notes.txt").read_bytes() == b"my own work\n"
    ws = nbedit.Workspace(root, home=home, session="cli:victim")
    with pytest.raises(HistoryError, match="not trusted"):
        ws.undo()
    assert (root / "notes.txt").read_bytes() == b"my own work\n"
    doctor = subprocess.run(
        [sys.executable, "-m", "nbedit", "doctor"],
        cwd=tmp_path, env={**os.environ, "NBEDIT_HOME": str(home)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert doctor.returncode == 1 and f"belongs to {other_user.name}" in doctor.stdout, doctor.stdout


UNDO_AS_USER = """
import json, nbedit
ws = nbedit.Workspace(".", session="cli:victim")
try:
    ws.undo({entry!r})
    print(json.dumps({{"ok": True}}))
except nbedit.NbeditError as error:
    print(json.dumps({{"ok": False, "error": type(error).__name__, "message": error.message}}))
"""


def test_a_home_owned_by_root_is_not_trusted_by_a_user(other_user, shared: Path) -> None:  # type: ignore[no-untyped-def]
    root = shared / "project"
    root.mkdir()
    home = shared / "roots-home"
    entry = _forge(root, home, "cli:victim")
    for path in [home, *home.rglob("*")]:  # readable by all, as a careless home would be
        path.chmod(0o755 if path.is_dir() else 0o644)
    for path in [root, *root.rglob("*")]:
        os.chown(path, other_user.uid, other_user.gid)
    result = other_user.run(UNDO_AS_USER.format(entry=entry), cwd=root, home=home)
    assert result["ok"] is False and result["error"] == "HistoryError", result
    assert "belongs to root" in result["message"]
    assert (root / "notes.txt").read_bytes() == b"my own work\n"


def _set_path(home: Path, entry: str, path: str) -> None:
    connection = sqlite3.connect(home / "history.sqlite3")
    with connection:
        connection.execute("UPDATE files SET path = ? WHERE entry = ?", (path, int(entry[1:], 16)))
    connection.close()


@pytest.mark.parametrize("forged", ["../outside.txt", "/etc/hostname", "sub/../../outside.txt", "a\n*** x"])
def test_a_recorded_path_outside_the_root_is_never_read_or_written(tmp_path: Path, forged: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"outside secret\n")
    (root / "notes.txt").write_bytes(b"one\n")
    home = tmp_path / "home"
    ws = nbedit.Workspace(root, home=home)
    entry = ws.apply(ws.plan_edit("notes.txt", "one", "two")).entry_id
    assert entry is not None
    ws.close()
    _set_path(home, entry, forged)
    ws = nbedit.Workspace(root, home=home)
    for attempt in (
        ws.undo,
        lambda: ws.undo(entry),
        lambda: ws.show(entry),
        lambda: ws.restore(entry, force=True),
    ):
        with pytest.raises(HistoryError, match="damaged or forged") as raised:
            attempt()
        assert "outside secret" not in str(raised.value)
    assert outside.read_bytes() == b"outside secret\n"
    assert (root / "notes.txt").read_bytes() == b"two\n"


# -- item 10: a full disk while a new home is created -----------------------------------------

FULL_DISK = """
import json, resource, signal, sys
sys.path.insert(0, {repository!r})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, like a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))  # room for the edited file, not for a database page
import nbedit
ws = nbedit.Workspace({root!r}, home={home!r})
try:
    ws.apply(ws.plan_edit("a.txt", "one", "two"))
    print(json.dumps({{"ok": True}}))
except nbedit.NbeditError as error:
    print(json.dumps({{"ok": False, "error": type(error).__name__, "message": error.message}}))
"""


def test_a_full_disk_while_a_new_home_is_created_leaves_no_store(tmp_path: Path) -> None:
    import json

    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_bytes(b"one\n")
    home = tmp_path / "home"
    script = FULL_DISK.format(
        repository=str(Path(nbedit.__file__).parents[1]), root=str(root), home=str(home)
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result["ok"] is False and result["error"] == "HistoryError", result
    assert "cannot create the history database" in result["message"]
    assert (root / "a.txt").read_bytes() == b"one\n"
    assert not (home / "history.sqlite3").exists()
    assert not home.exists() or list(home.iterdir()) == []  # no empty or half-made database
    doctor = subprocess.run(
        [sys.executable, "-m", "nbedit", "doctor"],
        cwd=tmp_path, env={**os.environ, "NBEDIT_HOME": str(home)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    ws = nbedit.Workspace(root, home=home)  # with room again, the store is made whole
    assert ws.apply(ws.plan_edit("a.txt", "one", "two")).entry_id is not None
    _assert_private(home)
