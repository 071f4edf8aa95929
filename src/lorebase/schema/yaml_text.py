"""parse_yaml: schema and change-set text (YAML or JSON) to plain data, as YAML 1.2 reads it.

PyYAML follows YAML 1.1, where `yes`, `no`, `on`, `off`, `y` and `n` are booleans: the country code
`NO` in `value_aliases: {NO: [Norway]}` would load as `false`, and an enum `[yes, no, unknown]` as two
booleans and a string. Here only `true` and `false` (any of YAML 1.2's three spellings) are booleans;
every other plain word is text. Duplicate mapping keys are refused rather than the last one kept.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from lorebase.schema.errors import SchemaError

__all__ = ["parse_yaml"]

_BOOL_TAG = "tag:yaml.org,2002:bool"
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)\Z")


class _Loader(yaml.CSafeLoader):
    """A safe YAML loader with YAML 1.2's booleans that records duplicate mapping keys."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[str] = []


_Loader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != _BOOL_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_BOOL_TAG, _BOOL, list("tTfF"))


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if isinstance(key, str | int | float | bool) or key is None:
            if key in seen:
                loader.duplicates.append(f"line {key_node.start_mark.line + 1}: duplicate member {key!r}")
            seen.add(key)
    return loader.construct_mapping(node)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)  # type: ignore[arg-type]


def parse_yaml(text: str | bytes) -> Any:
    """The data of `text`; SchemaError when it is not YAML or repeats a member."""
    loader = _Loader(text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text)
    try:
        document = loader.get_single_data()
    except yaml.YAMLError as exc:
        raise SchemaError([f"<document>: not valid YAML: {exc}"]) from None
    finally:
        loader.dispose()
    if loader.duplicates:
        raise SchemaError([f"<document>: {duplicate}" for duplicate in loader.duplicates])
    return document
