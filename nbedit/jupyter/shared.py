"""What every nbedit widget shares in the page: one code model, one layout model.

A widget's synced state is saved into the notebook with every output that shows
it. anywidget puts a widget's script and style sheet in its own state, so forty
reviews would save forty copies of the same 25 KB of code. Instead each nbedit
view's own script is a small loader (``loader.js``) and its ``code`` trait
points at one ``WidgetCode`` model holding the real modules and the style sheet:
saved once per notebook, loaded once per page, and present in saved widget
state, so a saved notebook still draws its reviews without a kernel.
The ``Layout`` model ipywidgets gives every DOM widget is shared the same way.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import anywidget
import ipywidgets
import traitlets

from nbedit.render.html import STYLE, WIDGET_STYLE

__all__ = ["NbeditView", "WidgetCode", "shared_code"]

_HERE = Path(__file__).parent
_LOADER = (_HERE / "loader.js").read_text(encoding="utf-8")


def _modules() -> dict[str, str]:
    return {part: (_HERE / f"{part}.js").read_text(encoding="utf-8") for part in ("review", "history")}


class WidgetCode(ipywidgets.Widget):
    """A model without a view: the browser modules of nbedit's widgets and their style sheet."""

    modules = traitlets.Dict().tag(sync=True)
    style = traitlets.Unicode("").tag(sync=True)
    version = traitlets.Unicode("").tag(sync=True)  # a digest of both: the page caches by it


_SHARED: dict[str, ipywidgets.Widget] = {}


def _alive(widget: ipywidgets.Widget | None) -> bool:
    return widget is not None and widget.comm is not None  # a closed model cannot be shared any more


def shared_code() -> WidgetCode:
    code = _SHARED.get("code")
    if not isinstance(code, WidgetCode) or not _alive(code):
        modules = _modules()
        style = STYLE + WIDGET_STYLE
        digest = hashlib.sha256("".join([style, *modules.values()]).encode()).hexdigest()[:12]
        code = WidgetCode(modules=modules, style=style, version=digest)
        _SHARED["code"] = code
    return code


def shared_layout() -> ipywidgets.Layout:
    layout = _SHARED.get("layout")
    if not isinstance(layout, ipywidgets.Layout) or not _alive(layout):
        layout = ipywidgets.Layout()
        _SHARED["layout"] = layout
    return layout


class NbeditView(anywidget.AnyWidget):
    """Base of the review widget and the history table: a loader script pointing at the shared code."""

    _esm = _LOADER

    code = traitlets.Instance(WidgetCode).tag(sync=True, **ipywidgets.widget_serialization)
    part = traitlets.Unicode("").tag(sync=True)  # which module of the shared code draws this view

    def __init__(self, **traits: object) -> None:
        traits.setdefault("layout", shared_layout())
        super().__init__(code=shared_code(), **traits)
