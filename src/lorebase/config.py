"""Settings: the documented defaults, an optional file, then environment variables.

`config/lorebase.example.yaml` is the one list of settings with their defaults (it ships inside the
package). `LOREBASE_CONFIG` names a YAML file whose values override them, and any setting is
overridden by `LOREBASE_<SECTION>__<KEY>` (double underscore per level). A few settings have the
short names DESIGN.md promises: LOREBASE_DATABASE_URL, LOREBASE_NATS_URL, LOREBASE_HTTP_HOST,
LOREBASE_HTTP_PORT, LOREBASE_ADMIN_KEY and LOREBASE_DATA_DIR.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_DEFAULTS_FILE = Path(__file__).with_name("lorebase.example.yaml")

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
    """A settings file or variable that cannot be used; the message names it."""


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


def _env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith("LOREBASE_") or name in _NOT_SETTINGS or name.startswith("LOREBASE_TEST_"):
            continue
        if name in _SHORT_NAMES:
            dotted = _SHORT_NAMES[name]
            value: Any = raw if dotted.endswith(("url", "key", "host", "data_dir")) else yaml.safe_load(raw)
        elif "__" in name:
            dotted = ".".join(part.lower() for part in name[len("LOREBASE_") :].split("__"))
            try:
                value = yaml.safe_load(raw) if raw != "" else ""
            except yaml.YAMLError as exc:
                raise SettingsError(f"{name}: not a YAML scalar: {exc}") from exc
        else:
            continue
        _set_path(tree, dotted, value)
    return tree


@dataclass(frozen=True)
class Settings:
    """A read-only tree of settings, read by dotted path: `settings.get("agents.feed.heartbeat_s")`."""

    tree: Mapping[str, Any] = field(default_factory=dict)

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.tree
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return default
            node = node[part]
        return node

    def section(self, dotted: str) -> dict[str, Any]:
        value = self.get(dotted, {})
        return copy.deepcopy(dict(value)) if isinstance(value, Mapping) else {}

    def overlay(self, overrides: Mapping[str, Any]) -> Settings:
        """These settings with a Domain's (or a test's) overrides applied on top."""
        return Settings(_merge(copy.deepcopy(dict(self.tree)), overrides))

    @property
    def data_dir(self) -> Path:
        return Path(str(self.get("data_dir") or "./.lorebase")).expanduser().resolve()


def defaults() -> dict[str, Any]:
    with _DEFAULTS_FILE.open(encoding="utf-8") as handle:
        loaded = yaml.safe_load(handle)
    return dict(loaded or {})


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    environ = os.environ if environ is None else environ
    tree = defaults()
    config_file = environ.get("LOREBASE_CONFIG")
    if config_file:
        path = Path(config_file)
        if not path.is_file():
            raise SettingsError(f"LOREBASE_CONFIG names {path}, which is not a file")
        with path.open(encoding="utf-8") as handle:
            try:
                loaded = yaml.safe_load(handle) or {}
            except yaml.YAMLError as exc:
                raise SettingsError(f"{path}: not valid YAML: {exc}") from exc
        if not isinstance(loaded, Mapping):
            raise SettingsError(f"{path}: the settings file must hold a mapping")
        _merge(tree, loaded)
    _merge(tree, _env_overrides(environ))
    return Settings(tree)


__all__ = ["Settings", "SettingsError", "defaults", "load_settings"]
