"""Live documents: an applied change shows up at once in the open JupyterLab tabs.

``protocol`` says what a change looks like on the wire (pure; no I/O). The other modules
are front ends of it:

    discovery.py   kernel/CLI side: which Jupyter server is this process under? (cheap, no imports)
    client.py      kernel/CLI side: ask the server before a write, tell it after (``LiveWrite``)
    rebase.py      re-plan a change on a tab's live text after a ``LiveConflict`` (pure)
    server.py      the Jupyter server extension: HTTP endpoints and the front-ends' websocket
    collab.py      with jupyter-collaboration: edit the server's shared documents (optional)
    frontend/      the JupyterLab extension's TypeScript sources (updates a tab in place)
    labextension/  its prebuilt form, shipped in the wheel

``Workspace.apply`` is the only caller: it imports this package lazily, on a write.
"""
