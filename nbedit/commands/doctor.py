"""``nbedit doctor``: check the history home, and with ``--repair`` set right what it can.

The checks live in ``storage.doctor``; this command prints their findings, and on ``--repair``
also settles the entries dead writers left pending (``nbedit.repair``).
"""

from __future__ import annotations

from nbedit.cli_support import (
    FAILED,
    OK,
    _say,
    _workspace,
)

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

    Arguments = argparse.Namespace | SimpleNamespace  # the quick path makes a SimpleNamespace

__all__ = ["doctor"]


def doctor(args: Arguments) -> int:
    from nbedit.storage.doctor import check, repair
    from nbedit.storage.records import default_home

    home = default_home()
    checkup = check(home)
    for finding in checkup.findings:
        _say(finding)
    if args.repair:
        for done in repair(home):
            _say(done)
        if not args.no_history:
            _workspace(args).history(all=True)  # opening settles the entries dead writers left pending
        from nbedit.errors import NbeditError
        from nbedit.repair import finish_interrupted

        try:
            for done in finish_interrupted(home):  # every root's dead writers, and cut-short undos
                _say(done)
        except NbeditError as error:
            _say(f"could not finish what crashed writers left: {error.message}")
        _say("history ok" if check(home).healthy else "the history still needs attention (see above)")
        return OK if check(home).healthy else FAILED
    if not checkup.healthy:
        if checkup.damaged:
            _say("run `nbedit doctor --repair` to set the damaged history aside and start a new one")
        return FAILED
    return OK
