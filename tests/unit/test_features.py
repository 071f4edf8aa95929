"""`/health`'s version and features (lorebase.features): consistent with seed 002 and the contract."""

from __future__ import annotations

import tomllib
from pathlib import Path

import msgspec

from lorebase import __version__
from lorebase.contract.answers.admin import Features
from lorebase.features import FEATURES, health_document

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_is_the_release_and_serves_both_memory_feeds() -> None:
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"] == __version__
    # Seed 002: feed version 1 came in 0.8.0 and version 2 in 0.9.0; both are served.
    assert tuple(int(part) for part in __version__.split(".")) >= (0, 9, 0)
    assert FEATURES["memory_feed"] == [1, 2]


def test_every_feature_is_in_the_contract() -> None:
    assert set(FEATURES) == set(Features.__struct_fields__)
    msgspec.convert(FEATURES, Features)
    assert health_document("ok") == {"status": "ok", "version": __version__, "features": FEATURES}
