"""Settings: documented defaults, a settings file, environment overrides by section path."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest
import yaml

from lorebase.config import SettingsError, defaults, load_settings
from lorebase.settings_model import LorebaseSettings

ROOT = Path(__file__).resolve().parents[2]


def test_the_packaged_defaults_are_the_documented_example() -> None:
    documented = yaml.safe_load((ROOT / "config" / "lorebase.example.yaml").read_text())
    assert defaults() == documented


def test_every_setting_has_a_comment() -> None:
    lines = (ROOT / "config" / "lorebase.example.yaml").read_text().splitlines()
    uncommented = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.endswith(":") or ":" not in stripped:
            continue  # blank, comment, section header or a continuation line
        # a setting: an inline comment, or a comment on the line above
        if "#" not in line and not lines[index - 1].strip().startswith("#"):
            uncommented.append(stripped)
    assert uncommented == []


def test_environment_overrides_by_section_path() -> None:
    settings = load_settings(
        {
            "LOREBASE_AGENTS__FEED__HEARTBEAT_S": "1",
            "LOREBASE_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
            "LOREBASE_KEEPER__AGENT_WRITES__PRINCIPAL_TYPES": "[service, user]",
            "LOREBASE_DATABASE_URL": "postgresql://u@h:5/db",
            "LOREBASE_HTTP_PORT": "9090",
            "LOREBASE_ADMIN_KEY": "123",
        }
    )
    assert settings.get("agents.feed.heartbeat_s") == 1
    assert settings.get("webhooks.allow_private_targets") is True
    assert settings.get("keeper.agent_writes.principal_types") == ["service", "user"]
    assert settings.get("database.url") == "postgresql://u@h:5/db"
    assert settings.get("http.port") == 9090
    assert settings.get("admin.key") == "123", "a key stays a string even when it looks like a number"
    assert settings.get("agents.feed.max_scan") == 10000, "untouched settings keep their defaults"


def test_a_settings_file_then_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "lorebase.yaml"
    path.write_text(
        "read:\n  query:\n    default_limit: 20\n    max_limit: 50\nagents:\n  feed:\n    heartbeat_s: 7\n"
    )
    settings = load_settings({"LOREBASE_CONFIG": str(path), "LOREBASE_AGENTS__FEED__HEARTBEAT_S": "2"})
    assert settings.get("read.query.max_limit") == 50
    assert settings.get("agents.feed.heartbeat_s") == 2


def test_a_missing_or_broken_settings_file_names_itself(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="not a file"):
        load_settings({"LOREBASE_CONFIG": str(tmp_path / "nope.yaml")})
    broken = tmp_path / "broken.yaml"
    broken.write_text("- a list\n")
    with pytest.raises(SettingsError, match="mapping"):
        load_settings({"LOREBASE_CONFIG": str(broken)})


def _look_ups_by_path() -> re.Pattern[str]:
    """`settings.get(...)`, `domain.settings.section(...)`, or a dotted setting path given to any
    `.get` (`s.get("read.traverse.max_links", 2000)`, `s.get(f"keeper.agent_writes.{name}")`)."""
    sections = "|".join(field.name for field in msgspec.structs.fields(LorebaseSettings))
    return re.compile(rf"\bsettings\.(get|section)\(|\.get\(f?[\"'](?:{sections})\.")


def test_code_reads_settings_as_typed_attributes_not_by_path() -> None:
    """services/ and src/ read `settings.model.a.b.c`: a path with a default of its own could
    disagree with config/lorebase.example.yaml and hides a misspelt key until the line runs."""
    pattern = _look_ups_by_path()
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for folder in ("services", "src")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if not path.name.endswith(("_pb2.py", "_pb2_grpc.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == [], "read these as settings.model attributes:\n" + "\n".join(found)


def test_the_look_up_check_finds_each_form() -> None:
    pattern = _look_ups_by_path()
    for line in (
        'heartbeat = float(settings.get("agents.feed.heartbeat_s", 15))',
        'limit = int(domain.settings.get("read.query.max_limit", 1000))',
        'section = settings.section("webhooks")',
        's.get("read.traverse.max_links", 2000)',
        'value = domain.settings.get(f"keeper.agent_writes.{name}")',
    ):
        assert pattern.search(line), line
    for line in ('a.get("webhooks", [])', "settings.model.agents.feed.heartbeat_s", 'row.get("read")'):
        assert not pattern.search(line), line
