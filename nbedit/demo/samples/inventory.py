"""A tiny stock keeper, used by ``python -m nbedit`` to show edits being reviewed."""

from __future__ import annotations

GREETING = "Welcome to the stock keeper"


class Inventory:
    def __init__(self) -> None:
        self.items: dict[str, int] = {}

    def add(self, name: str, count: int = 1) -> None:
        if count <= 0:
            raise ValueError("count must be positive")
        self.items[name] = self.items.get(name, 0) + count

    def remove(self, name: str, count: int = 1) -> None:
        if count <= 0:
            raise ValueError("count must be positive")
        self.items[name] = self.items.get(name, 0) - count

    def total(self) -> int:
        """Return the “total” number of items in stock."""
        return sum(self.items.values())


def report(inventory: Inventory) -> str:
    lines = [GREETING]
    for name, count in sorted(inventory.items.items()):
        lines.append(f"{name}: {count}")
    return "\n".join(lines)
