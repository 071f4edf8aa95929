"""Checking values against a schema: Attribute values, Operation parameters and Record keys.

Problems come back as `Issue`s (path, rule, message) so a caller can report all of them at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lorebase.canonical import ValueProblem, canonical_text, canonical_value, canonicalizer
from lorebase.schema.model import Attribute, Kind, Operation
from lorebase.schema.templates import RenderedEdit, render_edits

__all__ = [
    "Issue",
    "RenderedEdit",
    "Validator",
    "canonical_record_key",
    "key_values",
    "record_key",
    "render_edits",
    "validate_parameters",
    "validate_values",
    "validator",
]


@dataclass(frozen=True)
class Issue:
    path: str  # e.g. "edits[0].values.risk_score" or "parameters.severity"
    rule: str  # e.g. "value.max", "value.unknown_attribute", "parameter.required"
    message: str


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def validate_values(
    attributes: Mapping[str, Attribute],
    values: Mapping[str, Any],
    *,
    path: str,
    partial: bool,
    stored: bool = False,
) -> tuple[dict[str, Any], list[Issue]]:
    """The canonical form of `values` and every issue with them.

    Unknown attributes are issues. A required Attribute may not be null; unless `partial`, it may not
    be missing either. Values that are given as null stay in the result as None (clearing them).
    A write may not give a derived Attribute a value, not even null (`value.derived`); `stored`
    values (what the materializer wrote) are checked like the others. (`Validator` checks many
    values of the same Attributes so.)
    """
    return validator(attributes, partial=partial, stored=stored).check(values, path)


_VALIDATORS: dict[tuple[int, bool, bool], Validator] = {}


def validator(attributes: Mapping[str, Attribute], *, partial: bool, stored: bool = False) -> Validator:
    """The `Validator` of these Attributes (a Kind's, a Relation's, an Operation's), made once: the
    schema's mappings live as long as it does, so they are known by identity."""
    ref = (id(attributes), partial, stored)
    found = _VALIDATORS.get(ref)
    if found is None or found.attributes is not attributes:
        if len(_VALIDATORS) >= 4096:  # schemas replaced many times over: start again
            _VALIDATORS.clear()
        found = _VALIDATORS[ref] = Validator(attributes, partial=partial, stored=stored)
    return found


class Validator:
    """`validate_values` over one set of Attributes, its per-Attribute steps made once: a load checks
    100,000 Records of a Kind with one."""

    def __init__(self, attributes: Mapping[str, Attribute], *, partial: bool, stored: bool = False) -> None:
        self.attributes = attributes
        self.partial = partial
        self.stored = stored
        self._canonical = {
            name: canonicalizer(attribute)
            for name, attribute in attributes.items()
            if attribute.derived is None or stored
        }
        self._required = [name for name, attribute in attributes.items() if attribute.required]
        # Stored values of vault Attributes are refs ({"$vault": <ref>}, docs/erasure.md), checked
        # when they were written: kept as they are.
        self._vault = {name for name, attribute in attributes.items() if attribute.vault} if stored else set()

    def check(
        self, values: Mapping[str, Any], path: str, suffix: str = ""
    ) -> tuple[dict[str, Any], list[Issue]]:
        """`validate_values` of `values` at `path` + `suffix` (joined only for an issue)."""
        canonical: dict[str, Any] = {}
        issues: list[Issue] = []
        steps = self._canonical
        for name, value in values.items():
            step = steps.get(name)
            if step is None:
                issues.append(self._refused(name, path + suffix))
                continue
            if value is None or (name in self._vault and _is_ref(value)):
                canonical[name] = value
                continue
            try:
                canonical[name] = step(value)
            except ValueProblem as problem:
                issues.append(Issue(_join(path + suffix, name), problem.rule, problem.message))
        for name in self._required:
            if name in values:
                if values[name] is None:
                    issues.append(
                        Issue(
                            _join(path + suffix, name),
                            "value.required",
                            f"{name} is required and cannot be null",
                        )
                    )
            elif not self.partial:
                issues.append(Issue(_join(path + suffix, name), "value.required", f"{name} is required"))
        return canonical, issues

    def _refused(self, name: str, path: str) -> Issue:
        attribute = self.attributes.get(name)
        if attribute is None:
            known = ", ".join(self.attributes) or "none"
            return Issue(
                _join(path, name),
                "value.unknown_attribute",
                f"unknown attribute {name!r}; attributes are: {known}",
            )
        return Issue(
            _join(path, name),
            "value.derived",
            f"{name} is computed from its Derivation ({attribute.derived}); it cannot be written",
        )


def _is_ref(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("$vault"), str)


def validate_parameters(operation: Operation, raw: Mapping[str, Any]) -> tuple[dict[str, Any], list[Issue]]:
    """The canonical parameters of one invocation (defaults applied, absent ones left out) and issues."""
    parameters: dict[str, Any] = {}
    issues: list[Issue] = []
    for name in raw:
        if name not in operation.parameters:
            known = ", ".join(operation.parameters) or "none"
            issues.append(
                Issue(
                    f"parameters.{name}",
                    "parameter.unknown",
                    f"{operation.name} has no parameter {name!r}; parameters are: {known}",
                )
            )
    for name, attribute in operation.parameters.items():
        value = raw.get(name)
        if value is None:
            value = attribute.default
        if value is None:
            if attribute.required:
                issues.append(Issue(f"parameters.{name}", "parameter.required", f"{name} is required"))
            continue
        try:
            parameters[name] = canonical_value(attribute, value)
        except ValueProblem as problem:
            issues.append(Issue(f"parameters.{name}", problem.rule, problem.message))
    return parameters, issues


def record_key(kind: Kind, values: Mapping[str, Any]) -> str:
    """The Record key: the canonical values of the key attributes joined by `|`.

    ValueError (a ValueProblem when a value is invalid) if a key attribute is missing or invalid,
    or, for a Kind with several key attributes, if a value contains `|`.
    """
    parts = []
    for name in kind.key:
        value = values.get(name)
        if value is None:
            raise ValueProblem("value.required", f"{kind.name} key attribute {name} is missing")
        text = canonical_text(canonical_value(kind.attributes[name], value))
        if len(kind.key) > 1 and "|" in text:
            raise ValueProblem("value.pattern", f"{kind.name} key attribute {name} cannot contain '|'")
        parts.append(text)
    return "|".join(parts)


def canonical_record_key(kind: Kind, values: Mapping[str, Any]) -> str:
    """`record_key` of values that are canonical already (`Validator.check`'s, without issues): a
    canonical value that is text is its own key part."""
    if len(kind.key) == 1:
        value = values.get(kind.key[0])
        if type(value) is str:
            return value
    return record_key(kind, values)


def key_values(kind: Kind, key: str) -> dict[str, Any]:
    """The canonical key attribute values a Record key stands for (the inverse of `record_key`)."""
    texts = key.split("|") if len(kind.key) > 1 else [key]
    if len(texts) != len(kind.key):
        raise ValueProblem(
            "value.type", f"a {kind.name} key has {len(kind.key)} parts joined by '|' ({'|'.join(kind.key)})"
        )
    values = {}
    for name, text in zip(kind.key, texts, strict=True):
        attribute = kind.attributes[name]
        raw: Any = text
        if attribute.type == "boolean":
            raw = {"true": True, "false": False}.get(text, text)
        values[name] = canonical_value(attribute, raw)
    return values
