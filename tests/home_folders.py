"""The folders every test session points into its own temporary folder (set by ``conftest.py``).

A module of its own so that tests can import it: ``conftest`` is not importable by name when the
whole suite runs (``tests/security/conftest.py`` shares the name).
"""

from __future__ import annotations

HOME_FOLDERS = {
    "HOME": "home",
    "IPYTHONDIR": "home/.ipython",
    "JUPYTER_CONFIG_DIR": "home/.jupyter",
    "JUPYTER_DATA_DIR": "home/.local/share/jupyter",
    "JUPYTER_RUNTIME_DIR": "home/.local/share/jupyter/runtime",
    "XDG_CONFIG_HOME": "home/.config",
    "XDG_DATA_HOME": "home/.local/share",
    "XDG_CACHE_HOME": "home/.cache",
    "XDG_STATE_HOME": "home/.local/state",
    "MPLCONFIGDIR": "home/.config/matplotlib",
}
