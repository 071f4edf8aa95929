"""Reading the members of one mapping of a schema document, collecting every problem with its path."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["LOWER_NAME", "UPPER_NAME", "Members", "Problems", "entries", "join", "show", "words"]

UPPER_NAME = re.compile(r"[A-Z][A-Za-z0-9]*")  # Kinds and Traits
LOWER_NAME = re.compile(r"[a-z][a-z0-9_]*")  # Attributes, Relations, lenses, Operations, parameters...


def join(path: str, member: str | int) -> str:
    if isinstance(member, int):
        return f"{path}[{member}]"
    return f"{path}.{member}" if path else member


def show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _what(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


class Problems:
    """Every problem found so far, each as "path: message"."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.items.append(f"{path or '<document>'}: {message}")

    def name(self, path: str, name: str, pattern: re.Pattern[str], what: str) -> bool:
        if pattern.fullmatch(name):
            return True
        self.add(path, f"{what} name {name!r} must match ^{pattern.pattern}$")
        return False

    def __bool__(self) -> bool:
        return bool(self.items)


def entries(node: Any, path: str, problems: Problems) -> list[tuple[str, Any]]:
    """The (name, value) pairs of a mapping; null is an empty mapping."""
    if node is None:
        return []
    if not isinstance(node, Mapping):
        problems.add(path, f"expected a mapping, got {_what(node)}")
        return []
    pairs = []
    for name, value in node.items():
        if not isinstance(name, str):
            problems.add(
                path, f"member {show(name)} must be a string (quote YAML's true, false, null and numbers)"
            )
            continue
        pairs.append((name, value))
    return pairs


def words(
    value: Any, path: str, problems: Problems, *, pattern: re.Pattern[str] | None = None
) -> tuple[str, ...]:
    """A list of distinct non-empty strings; null is an empty list."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        problems.add(path, f"expected a list of strings, got {_what(value)}")
        return ()
    found: list[str] = []
    for index, item in enumerate(value):
        where = join(path, index)
        if isinstance(item, bool):
            problems.add(where, f"expected a string, got {item} (quote true and false where they are words)")
        elif not isinstance(item, str) or not item:
            problems.add(where, f"expected a non-empty string, got {show(item)}")
        elif pattern is not None and not pattern.fullmatch(item):
            problems.add(where, f"{item!r} must match ^{pattern.pattern}$")
        elif item in found:
            problems.add(where, f"{item!r} is listed twice")
        else:
            found.append(item)
    return tuple(found)


class Members:
    """The members of one mapping: unknown members are problems; each getter checks its member's shape."""

    def __init__(self, node: Any, path: str, problems: Problems, allowed: Iterable[str]) -> None:
        self.path = path
        self.problems = problems
        self.ok = node is None or isinstance(node, Mapping)
        self.node: dict[str, Any] = dict(entries(node, path, problems))
        allowed = tuple(allowed)
        for name in self.node:
            if name not in allowed:
                close = difflib.get_close_matches(name, allowed, n=1)
                hint = (
                    f"did you mean {close[0]!r}?"
                    if close
                    else f"expected one of {', '.join(sorted(allowed))}"
                )
                problems.add(join(path, name), f"unknown member; {hint}")

    def at(self, name: str | int) -> str:
        return join(self.path, name)

    def has(self, name: str) -> bool:
        return self.node.get(name) is not None

    def raw(self, name: str) -> Any:
        return self.node.get(name)

    def _wrong(self, name: str, expected: str) -> None:
        self.problems.add(self.at(name), f"expected {expected}, got {_what(self.node[name])}")

    def text(self, name: str, default: str | None = "", *, required: bool = False) -> str | None:
        value = self.node.get(name)
        if value is None:
            if required:
                self.problems.add(self.at(name), "required")
            return default
        if not isinstance(value, str):
            self._wrong(name, "a string")
            return default
        return value

    def flag(self, name: str, default: bool | None = False) -> bool | None:
        value = self.node.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            self._wrong(name, "true or false")
            return default
        return value

    def count(self, name: str, *, minimum: int) -> int | None:
        value = self.node.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self._wrong(name, "an integer")
            return None
        if value < minimum:
            self.problems.add(self.at(name), f"must be at least {minimum}, got {value}")
            return None
        return value

    def words(
        self, name: str, *, pattern: re.Pattern[str] | None = None, single: bool = False
    ) -> tuple[str, ...]:
        """A list of non-empty strings (or one string when `single`); duplicates are problems."""
        value = self.node.get(name)
        if single and isinstance(value, str):
            value = [value]
        return words(value, self.at(name), self.problems, pattern=pattern)

    def entries(self, name: str) -> list[tuple[str, Any]]:
        return entries(self.node.get(name), self.at(name), self.problems)
