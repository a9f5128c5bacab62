"""The security suite's people: root (the test process) and an unprivileged user made for the run.

Permission checks only mean something for a user the kernel does not wave
through, so the cases that depend on permissions run nbedit in a subprocess as a
second user created here with ``useradd`` (and a group it belongs to), switched to
with ``setpriv``. That needs root; the suite is meant to run as root (as CI does).
Elsewhere those cases are skipped, saying why, when it is not; on CI they fail instead.

The subprocess needs a Python that user may run: the test interpreter if the user
can execute it, else the system's ``python3`` of the same version with this
checkout and the test environment's site-packages on its path.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import nbedit

REPOSITORY = Path(nbedit.__file__).resolve().parents[1]  # the nbedit under test, for the user's subprocess


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    gid: int
    group: str  # a supplementary group the user belongs to
    group_id: int
    python: str
    environment: dict[str, str]

    def run(self, code: str, *, cwd: Path, home: Path | None = None, check: bool = True) -> dict:
        """Run ``code`` as this user; it prints one JSON object as its last line, returned here."""
        environment = dict(self.environment)
        environment["NBEDIT_HOME"] = str(home) if home is not None else "/nonexistent/nbedit-home"
        completed = subprocess.run(
            ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--init-groups", "--",
             self.python, "-c", textwrap.dedent(code)],
            cwd=cwd, env=environment, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if check and completed.returncode != 0:
            raise AssertionError(f"as {self.name}: exit {completed.returncode}\n{completed.stderr}")
        lines = completed.stdout.strip().splitlines()
        result = json.loads(lines[-1]) if lines else {}
        result["returncode"] = completed.returncode
        result["stderr"] = completed.stderr
        return result


def _runs_as(uid: int, gid: int, python: str, environment: dict[str, str]) -> bool:
    completed = subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", python, "-c",
         "import nbedit, rich, rapidfuzz"],
        env=environment, capture_output=True, timeout=60, cwd="/",
    )  # fmt: skip
    return completed.returncode == 0


def _unavailable(message: str) -> None:
    """Fail on CI (these cases must run there), skip elsewhere saying why."""
    if os.environ.get("CI", "").strip().lower() in {"1", "true", "yes", "on"}:
        pytest.fail(f"the second-user security tests cannot run on CI: {message}", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def other_user(tmp_path_factory: pytest.TempPathFactory) -> Iterator[User]:
    if os.geteuid() != 0:
        _unavailable("not running as root: cannot create a second user to test permissions with")
    for tool in ("useradd", "groupadd", "setpriv"):
        if shutil.which(tool) is None:
            _unavailable(f"{tool} is not installed: cannot create or switch to a second user")
    suffix = f"{os.getpid()}"
    name, group = f"nbsec{suffix}", f"nbsecg{suffix}"
    subprocess.run(["groupadd", group], check=True, capture_output=True)
    subprocess.run(
        ["useradd", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/bin/false", "-G", group, name],
        check=True, capture_output=True,
    )  # fmt: skip
    try:
        record = pwd.getpwnam(name)
        group_id = grp.getgrnam(group).gr_gid
        site = sysconfig.get_paths()["purelib"]
        environment = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "PYTHONPATH": os.pathsep.join([str(REPOSITORY), site]),
            "PYTHONDONTWRITEBYTECODE": "1",
            "LANG": "C.UTF-8",
        }
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        candidates = [
            sys.executable,
            os.path.realpath(sys.executable),
            shutil.which(version),
            shutil.which("python3"),
        ]
        python = next(
            (c for c in candidates if c and _runs_as(record.pw_uid, record.pw_gid, c, environment)), None
        )
        if python is None:
            pytest.fail(
                f"no Python that user {name} may run can import nbedit (tried {candidates}); "
                "make the test interpreter world-readable"
            )
        yield User(name, record.pw_uid, record.pw_gid, group, group_id, python, environment)
    finally:
        subprocess.run(["userdel", name], capture_output=True)
        subprocess.run(["groupdel", group], capture_output=True)


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """A folder every user may enter (pytest's tmp folders are private to root)."""
    folder = Path(os.environ.get("NBEDIT_SECURITY_TMP", "/tmp")) / f"nbsec-{os.getpid()}-{tmp_path.name}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
