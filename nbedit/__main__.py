"""``python -m nbedit``: the demo tour with no arguments (or ``demo``), the CLI otherwise."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if not arguments or arguments == ["demo"]:
        from nbedit.demo import run

        return run()
    from nbedit.cli import main as cli_main

    return cli_main(arguments)


if __name__ == "__main__":
    if sys.argv[1:] in ([], ["demo"]):
        sys.exit(main())
    from nbedit.cli import run

    run()
