"""The typed settings model (lorebase.settings_model): it and config/lorebase.example.yaml name the
same settings, every value has a type and a range, and a bad file, variable or Domain override is
refused with the key's path."""

from __future__ import annotations

import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from lorebase.config import (
    Settings,
    SettingsError,
    check_overrides,
    defaults,
    load_settings,
    setting_type,
    validate,
)
from lorebase.settings_model import LorebaseSettings

ROOT = Path(__file__).resolve().parents[2]


def model_leaves(typ: Any = LorebaseSettings, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for field in msgspec.structs.fields(typ):
        if isinstance(field.type, type) and issubclass(field.type, msgspec.Struct):
            yield from model_leaves(field.type, f"{prefix}{field.name}.")
        else:
            yield f"{prefix}{field.name}", field.type


def yaml_leaves(tree: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name, value in tree.items():
        if isinstance(value, Mapping):
            yield from yaml_leaves(value, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", value


def test_the_model_and_the_documented_file_name_the_same_settings_with_equal_defaults() -> None:
    documented = dict(yaml_leaves(defaults()))
    typed = dict(model_leaves())
    assert sorted(set(documented) - set(typed)) == [], "in the YAML, not in the model"
    assert sorted(set(typed) - set(documented)) == [], "in the model, not in the YAML"
    # The documented defaults are valid values of their types, and typing them changes no value.
    converted = dict(yaml_leaves(msgspec.to_builtins(validate(defaults()))))
    assert converted == documented


def test_the_documented_file_has_no_duplicate_key() -> None:
    """PyYAML keeps the last of two equal keys; nats.stream_replicas was given twice."""
    text = (ROOT / "config" / "lorebase.example.yaml").read_text()
    assert text.count("stream_replicas:") == 1
    defaults()  # loads with the loader that refuses duplicates


def bounds(typ: Any) -> tuple[float | None, bool]:
    """The lower bound of a numeric setting and whether it is exclusive (gt)."""
    if typing.get_origin(typ) is not typing.Annotated:
        return None, False
    for meta in typing.get_args(typ)[1:]:
        if isinstance(meta, msgspec.Meta) and meta.ge is not None:
            return meta.ge, False
        if isinstance(meta, msgspec.Meta) and meta.gt is not None:
            return meta.gt, True
    return None, False


NUMERIC = [(path, typ) for path, typ in model_leaves() if bounds(typ)[0] is not None]


def test_every_number_has_a_range() -> None:
    numbers = [path for path, typ in model_leaves() if typing.get_args(typ)[:1] in ((int,), (float,))]
    unbounded = [path for path, typ in model_leaves() if typ in (int, float)]
    assert numbers and unbounded == []
    assert len(NUMERIC) == len(numbers)


def variable(path: str) -> str:
    return "LOREBASE_" + "__".join(part.upper() for part in path.split("."))


@pytest.mark.parametrize(("path", "typ"), NUMERIC, ids=[p for p, _ in NUMERIC])
def test_a_value_below_its_range_stops_loading_naming_the_path(path: str, typ: Any) -> None:
    low, exclusive = bounds(typ)
    assert low is not None
    below = low if exclusive else low - 1
    with pytest.raises(SettingsError) as refused:
        load_settings({variable(path): str(below)})
    assert path in str(refused.value) and variable(path) in str(refused.value)


def test_zero_and_negative_limits_that_would_break_reads_are_refused() -> None:
    for path in (
        "agents.context.chars_per_token",
        "read.query.max_limit",
        "read.traverse.max_records",
        "read.history.default_limit",
        "agents.feed.page_size",
        "webhooks.max_attempts",
    ):
        for value in ("0", "-1"):
            with pytest.raises(SettingsError, match=path.replace(".", r"\.")):
                load_settings({variable(path): value})


def test_a_mistyped_environment_variable_stops_loading() -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings({"LOREBASE_AGENTS__FEED__HEARTBEAT_S": "abc"})
    message = str(refused.value)
    assert "LOREBASE_AGENTS__FEED__HEARTBEAT_S='abc'" in message and "agents.feed.heartbeat_s" in message
    for name, raw in (
        ("LOREBASE_WEBHOOKS__ALLOW_PRIVATE_TARGETS", "perhaps"),
        ("LOREBASE_HTTP_PORT", "eighty"),
        ("LOREBASE_HTTP_PORT", "70000"),
        ("LOREBASE_WEBHOOKS__ALLOWED_SCHEMES", "[gopher]"),
        ("LOREBASE_LOGGING__FORMAT", "xml"),
        ("LOREBASE_KEEPER__AGENT_WRITES__PRINCIPAL_TYPES", "robot"),
    ):
        with pytest.raises(SettingsError, match=name):
            load_settings({name: raw})


def test_variables_are_yaml_scalars_converted_to_the_settings_type() -> None:
    settings = load_settings(
        {
            "LOREBASE_AGENTS__FEED__HEARTBEAT_S": "0.25",
            "LOREBASE_AGENTS__FEED__MAX_CONNECTION_S": "1e3",  # YAML says text; the type says float
            "LOREBASE_READ__QUERY__MAX_LIMIT": "2000",
            "LOREBASE_ADMIN_KEY": "0123",  # text stays text: not 83, not 123
            "LOREBASE_NATS_URL": "nats://127.0.0.1:4222",
        }
    )
    assert settings.get("agents.feed.heartbeat_s") == 0.25
    assert settings.get("agents.feed.max_connection_s") == 1000.0
    assert settings.get("read.query.max_limit") == 2000
    assert settings.get("admin.key") == "0123"
    assert settings.model is not None and settings.model.agents.feed.heartbeat_s == 0.25


def test_an_unknown_variable_or_file_key_stops_loading(tmp_path: Path) -> None:
    with pytest.raises(
        SettingsError, match=r"LOREBASE_AGENTS__FEED__HEARTBAET_S: agents\.feed\.heartbaet_s is not"
    ):
        load_settings({"LOREBASE_AGENTS__FEED__HEARTBAET_S": "1"})
    path = tmp_path / "lorebase.yaml"
    path.write_text("agents:\n  feed:\n    heartbaet_s: 3\n")
    with pytest.raises(SettingsError, match=rf"{path}: agents\.feed\.heartbaet_s: not a setting"):
        load_settings({"LOREBASE_CONFIG": str(path)})
    path.write_text("agents:\n  feed:\n    heartbeat_s: abc\n")
    with pytest.raises(SettingsError, match=rf"{path}: agents\.feed\.heartbeat_s: Expected float, got str"):
        load_settings({"LOREBASE_CONFIG": str(path)})
    path.write_text("read:\n  query:\n    max_limit: 1\n    max_limit: 2\n")
    with pytest.raises(SettingsError, match="given twice"):
        load_settings({"LOREBASE_CONFIG": str(path)})
    path.write_text("read: 5\n")
    with pytest.raises(SettingsError, match=r"read: Expected object"):
        load_settings({"LOREBASE_CONFIG": str(path)})


def test_values_that_do_not_go_together_are_refused_with_the_section() -> None:
    with pytest.raises(
        SettingsError, match=r"LOREBASE_READ__LINKS__MAX_LIMIT: read\.links: default_limit \(100\)"
    ):
        load_settings({"LOREBASE_READ__LINKS__MAX_LIMIT": "50"})
    settings = load_settings(
        {"LOREBASE_READ__LINKS__MAX_LIMIT": "50", "LOREBASE_READ__LINKS__DEFAULT_LIMIT": "50"}
    )
    assert settings.get("read.links.max_limit") == 50
    with pytest.raises(SettingsError, match=r"keeper\.agent_writes: title_template may use"):
        load_settings({"LOREBASE_KEEPER__AGENT_WRITES__TITLE_TEMPLATE": "{principal} {secret}"})
    with pytest.raises(SettingsError, match=r"branch_prefix 'agents\.\./' makes task branch names invalid"):
        load_settings({"LOREBASE_KEEPER__AGENT_WRITES__BRANCH_PREFIX": "agents../"})
    _, issues = check_overrides(load_settings({}), {"agent_writes": {"branch_prefix": "/"}}, aliases=ALIASES)
    assert [(i["path"], i["rule"]) for i in issues] == [("agent_writes", "setting.value")]


ALIASES = {"context": "agents.context", "feed": "agents.feed", "agent_writes": "keeper.agent_writes"}


def test_overrides_are_checked_by_the_same_model() -> None:
    base = load_settings({})
    tree, issues = check_overrides(
        base,
        {
            "context": {"chars_per_token": 0, "max_seeds": 3, "trim_order": ["schema", "everything"]},
            "read": {"query": {"max_limit": -1}, "diff": {"max_changes": "many"}},
            "http": {"port": 1},
            "colour": "blue",
            "feed": 5,
        },
        aliases=ALIASES,
    )
    assert {(i["path"], i["rule"]) for i in issues} == {
        ("context.chars_per_token", "setting.range"),
        ("context.trim_order", "setting.type"),
        ("read.query.max_limit", "setting.range"),
        ("read.diff.max_changes", "setting.type"),
        ("http", "setting.unknown"),
        ("colour", "setting.unknown"),
        ("feed", "setting.type"),
    }
    assert tree == {"agents": {"context": {"max_seeds": 3}}}, "the valid overrides, by setting path"
    assert base.overlay(tree).get("agents.context.max_seeds") == 3


def test_overlay_refuses_an_invalid_result_and_overlay_valid_leaves_it_out() -> None:
    base = load_settings({})
    with pytest.raises(SettingsError, match=r"agents\.context\.chars_per_token"):
        base.overlay({"agents": {"context": {"chars_per_token": 0}}})
    settings, issues = base.overlay_valid({"agents": {"context": {"chars_per_token": 0, "max_seeds": 7}}})
    assert settings.get("agents.context.chars_per_token") == 4.0
    assert settings.get("agents.context.max_seeds") == 7
    assert [i["path"] for i in issues] == ["agents.context.chars_per_token"]


def test_settings_without_a_source_are_the_documented_defaults() -> None:
    assert Settings().model == validate(defaults()) == load_settings({}).model
    assert Settings().get("agents.feed") == defaults()["agents"]["feed"]
    with pytest.raises(KeyError, match=r"agents\.nope is not a setting"):
        Settings().get("agents.nope")
    assert setting_type("agents.feed") is not None
    with pytest.raises(KeyError):
        setting_type("agents.nope")


def test_the_helm_production_example_config_is_valid() -> None:
    production = yaml.safe_load((ROOT / "deploy" / "helm" / "examples" / "production.yaml").read_text())
    config = production.get("config") or {}
    assert isinstance(config, dict)
    Settings().overlay(config)
