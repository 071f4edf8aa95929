"""What changed from one schema document to another."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def schema_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, list[str]]:
    """What changed from one schema document to another: Kinds, Attributes (`Kind.Attribute`),
    Relations, Operations and lenses (`operation:name`, `lens:name`) added, removed or changed."""
    added: list[str] = []
    removed: list[str] = []
    changed: list[str] = []

    def compare(old: Mapping[str, Any], new: Mapping[str, Any], label: Any) -> None:
        for name in new:
            if name not in old:
                added.append(label(name))
            elif old[name] != new[name]:
                changed.append(label(name))
        removed.extend(label(name) for name in old if name not in new)

    old_kinds, new_kinds = before.get("kinds") or {}, after.get("kinds") or {}
    for name in new_kinds:
        if name not in old_kinds:
            added.append(name)
            continue
        old_kind, new_kind = old_kinds[name], new_kinds[name]
        bare_old = {k: v for k, v in old_kind.items() if k != "attributes"}
        bare_new = {k: v for k, v in new_kind.items() if k != "attributes"}
        if bare_old != bare_new:
            changed.append(name)
        compare(
            old_kind.get("attributes") or {}, new_kind.get("attributes") or {}, lambda a, k=name: f"{k}.{a}"
        )
    removed.extend(name for name in old_kinds if name not in new_kinds)
    compare(before.get("relations") or {}, after.get("relations") or {}, lambda n: n)
    compare(before.get("traits") or {}, after.get("traits") or {}, lambda n: f"trait:{n}")
    compare(before.get("operations") or {}, after.get("operations") or {}, lambda n: f"operation:{n}")
    compare(before.get("lenses") or {}, after.get("lenses") or {}, lambda n: f"lens:{n}")
    compare(before.get("sources") or {}, after.get("sources") or {}, lambda n: f"source:{n}")
    return {"added": added, "removed": removed, "changed": changed}
