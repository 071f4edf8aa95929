"""A change set as kept with its Revision (`schema_change_sets`) and as it was sent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def kept_items(items: Sequence[Mapping[str, Any]], on_invalid: str) -> list[dict[str, Any]]:
    """A change set's items as kept with its Revision (schema_change_sets): with `on_invalid: clear`
    each item says so, so a merge replays it the same way (an older keeper ignores the member)."""
    return [{**item, "on_invalid": "clear"} if on_invalid == "clear" else dict(item) for item in items]


def kept_on_invalid(items: Sequence[Mapping[str, Any]]) -> str:
    """How a kept change set treats values that do not fit: `clear` or `refuse`."""
    return "clear" if items and all(item.get("on_invalid") == "clear" for item in items) else "refuse"


def sent_items(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A kept change set's items as they were sent (without `kept_items`' member)."""
    return [{k: v for k, v in item.items() if k != "on_invalid"} for item in items]
