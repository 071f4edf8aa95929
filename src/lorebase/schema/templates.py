"""Edit templates: `$name` (the parameter's typed value), `${name}` (its canonical text), `$$` (a `$`).

`parse_template` reads one string; `render_edits` turns an Operation's edits into concrete edits for
one invocation. Builtins: `$invocation_id`, `$principal` and `$now` (a canonical datetime).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lorebase.canonical import canonical_datetime, canonical_text
from lorebase.schema.model import Operation

__all__ = ["Reference", "RenderedEdit", "Template", "parse_template", "render_edits", "template_names"]

_WHOLE = re.compile(r"\$([a-z][a-z0-9_]*)")
_PIECE = re.compile(r"\$\$|\$\{([^}]*)\}|\$")
_NAME = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class Reference:
    """A string that is exactly `$name`: the parameter's value, typed."""

    name: str


@dataclass(frozen=True)
class Template:
    """Literal text and `${name}` interpolations, in order (a part is a str or a Reference)."""

    parts: tuple[str | Reference, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(part.name for part in self.parts if isinstance(part, Reference))


def parse_template(text: str) -> Reference | Template:
    """Read one template string, or ValueError naming what is wrong with it."""
    whole = _WHOLE.fullmatch(text)
    if whole:
        return Reference(whole[1])
    parts: list[str | Reference] = []
    literal: list[str] = []
    position = 0
    for match in _PIECE.finditer(text):
        literal.append(text[position : match.start()])
        position = match.end()
        piece = match[0]
        if piece == "$$":
            literal.append("$")
        elif piece == "$":
            raise ValueError(
                f"stray '$' at {match.start()} in {text!r}; write $$ for a literal '$', "
                "${name} to interpolate or make the whole string $name"
            )
        else:
            name = match[1]
            if not _NAME.fullmatch(name):
                raise ValueError(f"${{{name}}} in {text!r} does not name a parameter")
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(Reference(name))
    literal.append(text[position:])
    if "".join(literal):
        parts.append("".join(literal))
    return Template(tuple(parts))


def template_names(value: Any) -> tuple[str, ...]:
    """The names a template value (a string, or a list of strings for keys) refers to."""
    if isinstance(value, list | tuple):
        return tuple(name for item in value for name in template_names(item))
    if not isinstance(value, str):
        return ()
    parsed = parse_template(value)
    return (parsed.name,) if isinstance(parsed, Reference) else parsed.names


@dataclass(frozen=True)
class RenderedEdit:
    """An edit of one invocation: keys are texts, values still raw (canonicalise them with the schema)."""

    op: str
    kind: str | None = None
    relation: str | None = None
    key: str | None = None
    from_key: str | None = None
    to_key: str | None = None
    values: dict[str, Any] = field(default_factory=dict)


class _Absent(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def render_edits(
    operation: Operation, parameters: Mapping[str, Any], *, invocation_id: str, principal: str, now: str
) -> list[RenderedEdit]:
    """The edits of `operation` for one invocation with (canonical) `parameters`.

    A value referring to a parameter that is absent (or None) is dropped, leaving that Attribute
    unchanged; a key, `from` or `to` referring to one is a ValueError.
    """
    scope: dict[str, Any] = {name: value for name, value in parameters.items() if value is not None}
    scope.update(invocation_id=invocation_id, principal=principal, now=canonical_datetime(now))
    rendered = []
    for index, edit in enumerate(operation.edits):
        values = {}
        for name, template in edit.values.items():
            try:
                values[name] = _value(template, scope)
            except _Absent:
                continue
        rendered.append(
            RenderedEdit(
                op=edit.op,
                kind=edit.kind,
                relation=edit.relation,
                key=_key(edit.key, scope, operation.name, index, "key"),
                from_key=_key(edit.from_key, scope, operation.name, index, "from"),
                to_key=_key(edit.to_key, scope, operation.name, index, "to"),
                values=values,
            )
        )
    return rendered


def _lookup(name: str, scope: Mapping[str, Any]) -> Any:
    if name not in scope:
        raise _Absent(name)
    return scope[name]


def _value(template: Any, scope: Mapping[str, Any]) -> Any:
    if not isinstance(template, str):
        return template
    parsed = parse_template(template)
    if isinstance(parsed, Reference):
        return _lookup(parsed.name, scope)
    return "".join(
        canonical_text(_lookup(part.name, scope)) if isinstance(part, Reference) else part
        for part in parsed.parts
    )


def _key(template: Any, scope: Mapping[str, Any], operation: str, index: int, member: str) -> str | None:
    if template is None:
        return None
    try:
        if isinstance(template, list | tuple):
            return "|".join(canonical_text(_value(item, scope)) for item in template)
        return canonical_text(_value(template, scope))
    except _Absent as absent:
        raise ValueError(
            f"operations.{operation}.edits[{index}].{member} needs parameter {absent.name!r}, which was not given"
        ) from None
