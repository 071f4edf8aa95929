"""Settings: the documented defaults, an optional file, then environment variables, checked by type.

`config/lorebase.example.yaml` is the one list of settings with their defaults (it ships inside the
package). `LOREBASE_CONFIG` names a YAML file whose values override them, and any setting is
overridden by `LOREBASE_<SECTION>__<KEY>` (double underscore per level). A few settings have the
short names DESIGN.md promises: LOREBASE_DATABASE_URL, LOREBASE_NATS_URL, LOREBASE_HTTP_HOST,
LOREBASE_HTTP_PORT, LOREBASE_ADMIN_KEY and LOREBASE_DATA_DIR.

The merged tree is converted into the typed model of `lorebase.settings_model`, so a misspelt key, a
duplicated key, a value of the wrong type or a limit out of its range stops the process at start
with a message naming the key's path and where it came from (the file or the variable). An
environment variable is read as a YAML scalar and converted to its setting's type (a text setting
keeps the text as given: `LOREBASE_ADMIN_KEY=123` is the string "123").

Code reads a setting as a typed attribute, `settings.model.agents.feed.heartbeat_s`, never by a
path with a default of its own: the YAML file is the one place of the defaults, and a misspelt
attribute fails the type check rather than answering a default when the line runs (a test keeps
services/ and src/ free of look-ups by path). `Settings.get(path)` remains for the places that name
a setting by its path: tests, and the messages of `check_overrides`. Overrides (a Domain's settings)
go through the same model: `check_overrides` says which of them are unknown, mistyped or out of
range, and `Settings.overlay` refuses an invalid result, so a Domain's effective settings are typed
too.
"""

from __future__ import annotations

import copy
import functools
import os
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import yaml

from lorebase.settings_model import PROCESS_SECTIONS, LorebaseSettings

_DEFAULTS_FILE = Path(__file__).with_name("lorebase.example.yaml")
DEFAULTS_NAME = "config/lorebase.example.yaml"

_SHORT_NAMES = {
    "LOREBASE_DATABASE_URL": "database.url",
    "LOREBASE_NATS_URL": "nats.url",
    "LOREBASE_HTTP_HOST": "http.host",
    "LOREBASE_HTTP_PORT": "http.port",
    "LOREBASE_ADMIN_KEY": "admin.key",
    "LOREBASE_DATA_DIR": "data_dir",
}
# Variables that are not settings (they steer the test fixtures, the CLI or name the file).
_NOT_SETTINGS = {"LOREBASE_CONFIG", "LOREBASE_URL", "LOREBASE_KEY"}


class SettingsError(ValueError):
    """A settings file or variable that cannot be used; the message names it and the key's path."""


class _UniqueKeyLoader(yaml.CSafeLoader):
    """YAML's safe loader (libyaml's parser: the defaults file takes 0.02 s rather than 0.2 s),
    refusing a key given twice in one mapping (PyYAML keeps the last)."""


def _mapping_without_duplicates(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"the key {key!r} is given twice", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _mapping_without_duplicates,  # type: ignore[arg-type]
)


def _load_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass


def _merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    for name, value in override.items():
        if isinstance(value, Mapping) and isinstance(base.get(name), dict):
            _merge(base[name], value)
        else:
            base[name] = copy.deepcopy(value)
    return base


def _set_path(tree: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = tree
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


# -- the model's types by path ---------------------------------------------------------------------


def _struct_fields(typ: Any) -> dict[str, Any] | None:
    """The fields of a settings section (name -> annotated type), None for a leaf type."""
    if isinstance(typ, type) and issubclass(typ, msgspec.Struct):
        return {f.name: f.type for f in msgspec.structs.fields(typ)}
    return None


def setting_type(dotted: str) -> Any:
    """The type (with its range) of the setting or section at `dotted`; KeyError when none is."""
    typ: Any = LorebaseSettings
    for part in dotted.split("."):
        fields = _struct_fields(typ)
        if fields is None or part not in fields:
            raise KeyError(dotted)
        typ = fields[part]
    return typ


def _plain(typ: Any) -> Any:
    """The type without its range (Annotated[int, Meta(ge=1)] -> int)."""
    return typing.get_args(typ)[0] if typing.get_origin(typ) is typing.Annotated else typ


_AT = re.compile(r"(?P<message>.*) - at `\$(?P<path>[^`]*)`", re.DOTALL)
_UNKNOWN = re.compile(r"Object contains unknown field `(?P<name>[^`]*)`")
_MISSING = re.compile(r"Object missing required field `(?P<name>[^`]*)`")


def _located(error: msgspec.ValidationError, prefix: str = "") -> tuple[str, str]:
    """(path, message) of a validation error: `agents.feed.heartbeat_s`, `Expected float > 0.0`."""
    text = str(error)
    found = _AT.fullmatch(text)
    message, path = (found["message"], found["path"].lstrip(".")) if found else (text, "")
    named = _UNKNOWN.fullmatch(message) or _MISSING.fullmatch(message)
    if named:
        path = f"{path}.{named['name']}" if path else named["name"]
        message = "not a setting" if message.startswith("Object contains") else "missing"
    path = f"{prefix}.{path}" if prefix and path else prefix or path
    return path, message.replace("`", "")


def _requirement(message: str) -> str:
    """`Expected int >= 1` -> `must be int >= 1`; `Invalid enum value 'x'` -> `is invalid (...)`."""
    if message.startswith("Expected "):
        return "must be " + re.sub(r", got \S+\Z", "", message.removeprefix("Expected "))
    return f"is invalid ({message})"


def validate(tree: Mapping[str, Any]) -> LorebaseSettings:
    """The typed settings of a whole tree; msgspec.ValidationError names the first bad path."""
    return msgspec.convert(tree, LorebaseSettings)


# -- loading -----------------------------------------------------------------------------------------


def _env_value(name: str, dotted: str, raw: str) -> Any:
    """A variable's text as its setting's type: a YAML scalar, converted (text settings keep it)."""
    try:
        typ = setting_type(dotted)
    except KeyError:
        raise SettingsError(f"{name}: {dotted} is not a setting ({DEFAULTS_NAME} lists them)") from None
    if _plain(typ) is str:
        return raw
    try:
        value = yaml.safe_load(raw) if raw != "" else ""
    except yaml.YAMLError as exc:
        raise SettingsError(f"{name}: not a YAML scalar: {exc}") from exc
    if _struct_fields(typ) is not None and isinstance(value, Mapping):
        return value  # a section in one variable: merged, then checked with the whole tree
    try:
        return msgspec.to_builtins(msgspec.convert(value, typ, strict=False))
    except msgspec.ValidationError as exc:
        _, message = _located(exc)
        raise SettingsError(f"{name}={raw!r}: {dotted}: {message}") from None


def _env_overrides(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The tree the variables set, and which variable set each path."""
    tree: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name, raw in sorted(environ.items()):
        if not name.startswith("LOREBASE_") or name in _NOT_SETTINGS or name.startswith("LOREBASE_TEST_"):
            continue
        if name in _SHORT_NAMES:
            dotted = _SHORT_NAMES[name]
        elif "__" in name:
            dotted = ".".join(part.lower() for part in name[len("LOREBASE_") :].split("__"))
        else:
            continue
        _set_path(tree, dotted, _env_value(name, dotted, raw))
        sources[dotted] = name
    return tree, sources


def _checked(
    tree: Mapping[str, Any], source: str, sources: Mapping[str, str] | None = None
) -> LorebaseSettings:
    try:
        return validate(tree)
    except msgspec.ValidationError as exc:
        path, message = _located(exc)
        if sources:
            named = [
                var for dotted, var in sources.items() if dotted.startswith(path) or path.startswith(dotted)
            ]
            source = ", ".join(named) or source
        raise SettingsError(f"{source}: {path or 'the settings'}: {message}") from None


def defaults() -> dict[str, Any]:
    """The documented defaults as a tree (config/lorebase.example.yaml), the caller's own copy."""
    return copy.deepcopy(_defaults_tree())


@functools.cache
def _defaults_tree() -> dict[str, Any]:
    return dict(_load_yaml(_DEFAULTS_FILE) or {})


@functools.cache
def default_model() -> LorebaseSettings:
    """The documented defaults, typed and checked (read once per process)."""
    return _checked(defaults(), DEFAULTS_NAME)


@dataclass(frozen=True)
class Settings:
    """The typed settings of a process or of a Domain: `settings.model.agents.feed.heartbeat_s`.

    `Settings()` holds the documented defaults; `load_settings` adds the file and the environment,
    `overlay` a Domain's overrides. `get("a.b.c")` reads one value by its path (tests, messages)."""

    model: LorebaseSettings = field(default_factory=default_model)

    @functools.cached_property
    def tree(self) -> dict[str, Any]:
        """The same values as plain data (dicts and lists), for merging overrides and reading by path."""
        return typing.cast(dict[str, Any], msgspec.to_builtins(self.model))

    def get(self, dotted: str) -> Any:
        """The value or section (as plain data) at a dotted path; KeyError names a path that is none."""
        node: Any = self.tree
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                raise KeyError(f"{dotted} is not a setting ({DEFAULTS_NAME} lists them)")
            node = node[part]
        return node

    def overlay(self, overrides: Mapping[str, Any]) -> Settings:
        """These settings with overrides applied on top; SettingsError when the result is invalid."""
        return Settings(_checked(_merge(copy.deepcopy(self.tree), overrides), "the overrides"))

    def overlay_valid(self, overrides: Mapping[str, Any]) -> tuple[Settings, list[dict[str, str]]]:
        """These settings with the valid part of the overrides (a Domain's, stored before its values
        were checked), and the issues of the part left out."""
        tree, issues = check_overrides(self, overrides)
        return self.overlay(tree), issues

    @property
    def data_dir(self) -> Path:
        """`data_dir` as an absolute path; an empty one (LOREBASE_DATA_DIR=) is the documented default."""
        return Path(self.model.data_dir or default_model().data_dir).expanduser().resolve()


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    environ = os.environ if environ is None else environ
    tree = defaults()
    _checked(tree, DEFAULTS_NAME)
    config_file = environ.get("LOREBASE_CONFIG")
    if config_file:
        path = Path(config_file)
        if not path.is_file():
            raise SettingsError(f"LOREBASE_CONFIG names {path}, which is not a file")
        try:
            loaded = _load_yaml(path) or {}
        except yaml.YAMLError as exc:
            raise SettingsError(f"{path}: not valid YAML: {exc}") from exc
        if not isinstance(loaded, Mapping):
            raise SettingsError(f"{path}: the settings file must hold a mapping")
        _merge(tree, loaded)
        _checked(tree, str(path))
    overrides, sources = _env_overrides(environ)
    _merge(tree, overrides)
    return Settings(_checked(tree, "the environment", sources))


# -- overrides (a Domain's settings) -----------------------------------------------------------------


def check_overrides(
    base: Settings,
    overrides: Mapping[str, Any],
    *,
    aliases: Mapping[str, str] | None = None,
    refused: frozenset[str] = PROCESS_SECTIONS,
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The valid part of `overrides` (a tree by setting path) and an issue for each other part.

    Each issue has `path` (as the overrides spell it: an alias stays an alias), `rule`
    (`setting.unknown`, `setting.type`, `setting.range` or `setting.value`) and `message`. A top
    level name may be an alias of a section (`context` for `agents.context`); sections in `refused`
    (process-wide ones) are unknown to overrides. The valid part, applied on `base`, is valid as a
    whole (a default_limit over its max_limit is refused here, with the section's path)."""
    aliases = aliases or {}
    tree: dict[str, Any] = {}
    issues: list[dict[str, str]] = []
    shown_of: dict[str, str] = {}

    def issue(shown: str, rule: str, message: str) -> None:
        issues.append({"path": shown, "rule": rule, "message": message})

    def walk(shown: str, dotted: str, value: Any) -> None:
        shown_of[dotted] = shown
        try:
            typ = setting_type(dotted)
        except KeyError:
            issue(shown, "setting.unknown", f"{dotted} is not a setting ({DEFAULTS_NAME} lists them)")
            return
        if dotted.split(".")[0] in refused:
            issue(shown, "setting.unknown", f"{dotted} is a process setting, not a per-Domain one")
            return
        if _struct_fields(typ) is not None:
            if not isinstance(value, Mapping):
                issue(shown, "setting.type", f"{dotted} is a section: give an object")
                return
            for name, child in value.items():
                walk(f"{shown}.{name}", f"{dotted}.{name}", child)
            return
        for rule, checked in (("setting.type", _plain(typ)), ("setting.range", typ)):
            try:
                msgspec.convert(value, checked)
            except msgspec.ValidationError as exc:
                wanted = _requirement(_located(exc)[1])
                issue(shown, rule, f"{dotted} {wanted}, not {value!r} (default {base.get(dotted)!r})")
                return
        _set_path(tree, dotted, value)

    for name, value in overrides.items():
        walk(str(name), aliases.get(str(name)) or str(name), value)
    # Values that are each valid may still not go together (default_limit over max_limit): leave out
    # the overrides of the section that the whole model refuses, until it accepts the rest.
    while tree:
        try:
            validate(_merge(copy.deepcopy(base.tree), tree))
            break
        except msgspec.ValidationError as exc:
            path, message = _located(exc)
            issue(shown_of.get(path, path), "setting.value", f"{path}: {message}")
            if not _drop(tree, path):
                break
    return tree, issues


def _drop(tree: dict[str, Any], dotted: str) -> bool:
    """Remove the overrides at `dotted` (a section or a value); whether there were any."""
    parts = dotted.split(".")
    nodes = [tree]
    for part in parts[:-1]:
        child = nodes[-1].get(part)
        if not isinstance(child, dict):
            return False
        nodes.append(child)
    if nodes[-1].pop(parts[-1], None) is None:
        return False
    for part, parent in zip(reversed(parts[:-1]), reversed(nodes[:-1]), strict=True):
        if not parent[part]:
            del parent[part]  # no empty sections left behind
    return True


__all__ = [
    "DEFAULTS_NAME",
    "Settings",
    "SettingsError",
    "check_overrides",
    "default_model",
    "defaults",
    "load_settings",
    "setting_type",
    "validate",
]
