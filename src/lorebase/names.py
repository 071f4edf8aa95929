"""The name grammar: Domains, branches, tags, principals, tenants, checkpoints, trace sessions and the
ids of a memory scope.

Every name a caller creates is checked here, on create, with `fullmatch` (a `$` anchor would let a
final newline through). Branch and tag names follow git's ref rules: components separated by `/`,
none of them empty, none starting with `.` or ending with `.` or `.lock`, no `..`, nothing but
letters, digits, `.`, `_` and `-` inside a component, and the first character a letter or a digit.
That keeps them safe in a URL path, a log line and a NATS subject, and leaves `*` and `?` free for
grant patterns and `~` for the archive names of deleted branches.

`subject_token` maps a name to NATS subject levels. It is total and injective over every string
(a name stored before this grammar existed included), so one odd name can never produce an invalid
subject, or the subject of another name: each character outside `[A-Za-z0-9_-]` is written `%XX`
(its UTF-8 bytes), `/` separates levels, and an empty component (only possible in an old name) is
`%`, which no escape produces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMPONENT = r"[A-Za-z0-9_-](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?"


@dataclass(frozen=True)
class NameRule:
    """One kind of name: what it is called in messages, its pattern and how to write one."""

    what: str
    pattern: re.Pattern[str]
    hint: str
    max_length: int
    path: bool = False  # components separated by '/', with git's ref rules

    def problem(self, name: object) -> str | None:
        """Why `name` is not a valid name of this kind (None: it is)."""
        if not isinstance(name, str):
            return f"a {self.what} is a string"
        if not name:
            return f"a {self.what} cannot be empty"
        if len(name) > self.max_length:
            return f"a {self.what} has at most {self.max_length} characters"
        if self.pattern.fullmatch(name) is None or (self.path and (".." in name or name.endswith(".lock"))):
            return f"{name!r} is not a valid {self.what}: {self.hint}"
        return None

    def valid(self, name: object) -> bool:
        return self.problem(name) is None


def _path_rule(what: str, max_length: int) -> NameRule:
    return NameRule(
        what,
        re.compile(rf"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?(?:/{_COMPONENT})*"),
        "letters, digits, '.', '_' and '-' in components separated by '/', starting with a letter "
        "or digit; no empty component, no '..', no component starting or ending with '.', no "
        "trailing '/' or '.lock'",
        max_length,
        path=True,
    )


BRANCH = _path_rule("branch name", 200)
TAG = _path_rule("tag name", 200)
DOMAIN = NameRule(
    "Domain name",
    re.compile(r"[a-z][a-z0-9_-]*"),
    "lower case letters, digits, '_' or '-', starting with a letter",
    63,
)
PRINCIPAL = NameRule(
    "principal id",
    re.compile(r"[a-z][a-z0-9_]+"),
    "lower case letters, digits and '_', starting with a letter (at least 2 characters)",
    63,
)
TENANT = NameRule(
    "tenant",
    re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*"),
    "letters, digits, '_' or '-', starting with a letter or digit",
    64,
)
CHECKPOINT = NameRule(
    "checkpoint name",
    re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*"),
    "letters, digits, '.', '_', ':' or '-', starting with a letter or digit",
    128,
)
SESSION = NameRule(
    "session id",
    re.compile(r"[A-Za-z0-9._:-]+"),
    "letters, digits, '.', '_', ':' or '-'",
    128,
)
# project_id, mission_id and agent_id of a memory scope (docs/memory.md).
MEMORY_SCOPE = NameRule(
    "memory scope id",
    re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]*"),
    "1-128 letters, digits, '.', '_', ':', '@', '/' or '-', starting with a letter or digit",
    128,
)

# A grant's branch pattern: a branch name in which '*' and '?' may stand for characters.
_PATTERN = re.compile(r"[A-Za-z0-9*?](?:[A-Za-z0-9._*?-]*)(?:/[A-Za-z0-9_*?-][A-Za-z0-9._*?-]*)*")


def branch_pattern_problem(pattern: object) -> str | None:
    """Why `pattern` is not a valid branch pattern of a grant or webhook (None: it is)."""
    if not isinstance(pattern, str) or not pattern:
        return "a branch pattern is a non-empty string"
    if len(pattern) > BRANCH.max_length:
        return f"a branch pattern has at most {BRANCH.max_length} characters"
    if _PATTERN.fullmatch(pattern) is None or ".." in pattern or pattern.endswith((".", "/")):
        return f"{pattern!r} is not a branch pattern: a branch name in which '*' and '?' match characters"
    return None


# Characters written as themselves in a subject token; everything else is %XX.
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _escape(component: str) -> str:
    if not component:
        return "%"
    if all(c in _SAFE for c in component):
        return component
    return "".join(c if c in _SAFE else "".join(f"%{b:02X}" for b in c.encode()) for c in component)


def subject_token(name: str) -> str:
    """NATS subject levels for a name: each '/' component is a level (escaped as above)."""
    return ".".join(_escape(component) for component in name.split("/"))


def subject_level(text: str) -> str:
    """One NATS subject level for any text ('/' escaped too): an event type's category or name."""
    return _escape(text)


def subject_prefixes_overlap(first: str, second: str) -> bool:
    """Whether subjects under one dotted prefix can be under the other (equal, or a leading part)."""
    a, b = first.split("."), second.split(".")
    return a[: len(b)] == b[: len(a)]


__all__ = [
    "BRANCH",
    "CHECKPOINT",
    "DOMAIN",
    "MEMORY_SCOPE",
    "PRINCIPAL",
    "SESSION",
    "TAG",
    "TENANT",
    "NameRule",
    "branch_pattern_problem",
    "subject_level",
    "subject_prefixes_overlap",
    "subject_token",
]
