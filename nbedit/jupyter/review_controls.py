"""The review widget's headless controls: its include toggles and its buttons.

A notebook run by nbclient never clicks, so each toggle and button of ``ReviewWidget``
is also an object with the same behaviour (``toggle.value = False``, ``button.click()``),
answering from the widget's state rather than holding any: the page and the headless
caller see one selection. They talk to the widget through the few members ``Decider``
names, so this module does not import the widget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["Decider", "HunkToggle", "ReviewButton", "ToggleKey"]

# (file index, hunk index); hunk index None is the whole-file toggle of a file without located hunks.
ToggleKey = tuple[int, "int | None"]


class Decider(Protocol):
    """What a toggle or button needs of its review widget."""

    @property
    def excluded_keys(self) -> frozenset[ToggleKey]: ...

    @property
    def status(self) -> str: ...

    replan_available: bool

    def set_included(self, key: ToggleKey, include: bool) -> None: ...

    def _guarded(self, action: Callable[[], object]) -> Callable[..., None]: ...


class HunkToggle:
    """One include/exclude switch, headless: ``value`` True keeps the hunk (or whole file) in Apply."""

    def __init__(self, widget: Decider, key: ToggleKey, description: str) -> None:
        self._widget = widget
        self.key = key
        self.description = description

    @property
    def value(self) -> bool:
        return self.key not in self._widget.excluded_keys

    @value.setter
    def value(self, include: bool) -> None:
        self._widget.set_included(self.key, include)

    @property
    def disabled(self) -> bool:
        return self._widget.status != "pending"

    def __repr__(self) -> str:
        return f"<HunkToggle {self.description}: {'included' if self.value else 'left out'}>"


class ReviewButton:
    """Apply, Reject or Re-plan, headless: ``click()`` does what clicking it in the page does."""

    def __init__(
        self, widget: Decider, name: str, description: str, action: Callable[[], object]
    ) -> None:
        self._widget = widget
        self.name = name
        self.description = description
        self._action = action

    def click(self) -> None:
        if not self.disabled:
            self._widget._guarded(self._action)()

    @property
    def disabled(self) -> bool:
        state = self._widget.status
        if self.name == "apply":
            return state != "pending"
        if self.name == "reject":
            return state not in ("pending", "stale", "conflict", "error")
        return not self.visible

    @property
    def visible(self) -> bool:
        return self.name != "replan" or bool(self._widget.replan_available)

    def __repr__(self) -> str:
        return f"<ReviewButton {self.description}{' (disabled)' if self.disabled else ''}>"
