"""The ``nbedit`` command's subcommands, one module per group.

``nbedit.cli`` reads the arguments (a quick reader for ``apply``/``edit``, argparse for the rest)
and hands them to a handler that imports the one module its command needs, so a call pays only
for its own command. The modules share ``nbedit.cli_support`` (the workspace, the preview and the
"Apply? [y/N]" step, exit codes) and never import ``nbedit.cli``.

- ``write``: ``apply`` and ``edit`` (with the bounded readers of change text)
- ``reading``: ``diff`` and ``view``, which only read
- ``history``: ``history``, ``show``, ``undo``, ``restore``
- ``doctor``: ``doctor``
- ``programs``: ``demo`` and ``mcp``

(``changes`` and ``rewind`` are in ``nbedit.cli_rewind``, which also adds their arguments.)
"""
