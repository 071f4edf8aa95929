"""The admin key of `lorebase up`: the configured one, else one generated once and kept."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from lorebase.config import load_settings
from lorebase.supervisor import _admin_key


def test_generated_once_then_found_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = load_settings({})
    first = _admin_key(settings, tmp_path)
    printed = capsys.readouterr().out
    assert first in printed and "shown once" in printed
    path = tmp_path / "admin.key"
    assert path.read_text().strip() == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = _admin_key(settings, tmp_path)
    assert again == first
    assert first not in capsys.readouterr().out, "the key is printed only when it is made"


def test_configured_key_wins(tmp_path: Path) -> None:
    settings = load_settings({"LOREBASE_ADMIN_KEY": "my-own-key-0123456789"})
    assert _admin_key(settings, tmp_path) == "my-own-key-0123456789"
    assert not (tmp_path / "admin.key").exists()
