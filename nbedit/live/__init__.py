"""Live documents: an applied change shows up at once in the open JupyterLab tabs.

``protocol`` says what a change looks like on the wire (pure; no I/O). The other modules
are front ends of it: the kernel-side client that finds the Jupyter server this process
runs under, the server extension that reaches open tabs and shared documents, and the
JupyterLab extension that updates a tab in place.
"""
