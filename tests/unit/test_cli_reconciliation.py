"""The CLI's history and lineage tables say where a merged Record went and where a merged value came
from (docs/reconciliation.md)."""

from __future__ import annotations

from lorebase.commands.reads import _history_human, _lineage_human

REVISION = "ab" * 32


def test_history_names_the_survivor_of_a_merge() -> None:
    change = {
        "revision": REVISION,
        "at": "2026-12-01T20:00:00Z",
        "author": "agt_reconciler",
        "message": "Merge Supplier/S-2002 into Supplier/S-2001",
        "origin": {"type": "operation", "ref": "inv_1"},
        "change": "deleted",
        "attributes": ["legal_name"],
        "provenance": {},
        "merged_into": "Supplier/S-2001",
    }
    text = _history_human({"changes": [change], "next_cursor": None})
    assert f"merged into Supplier/S-2001 by {REVISION[:12]}" in text


def test_lineage_names_the_removed_record_a_value_came_from() -> None:
    entry = {
        "value": "DE",
        "revision": REVISION,
        "actor": "usr_loader",
        "at": "2026-12-01T20:00:00Z",
        "origin": {"type": "import", "ref": "duplicates"},
        "merged_from": "Supplier/S-2002",
    }
    text = _lineage_human({"attributes": {"country": entry}})
    assert "import duplicates (merged from Supplier/S-2002)" in text
