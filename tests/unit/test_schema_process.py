"""What a migration process sends back (lorebase_keeper schema_changes/process.py): `Staged.document`
through JSON and back is the same Staged, unique values that are not strings included."""

from __future__ import annotations

import orjson
from lorebase_keeper.schema_changes.migrate import Checked, Writes
from lorebase_keeper.schema_changes.staged import Staged
from lorebase_keeper.writes import ChangeSummary, Head


def test_a_staged_migration_survives_its_trip_from_the_process() -> None:
    checked = Checked(
        violations=[{"record": "Supplier/S-1", "path": "Supplier/S-1.tier", "rule": "value.max"}],
        violation_count=3,
        cleared=[{"record": "Supplier/S-2", "path": "Supplier/S-2.tier"}],
        sources={("record", "Component"): "Part", ("link", "made_of"): "uses"},
        unique={
            "Supplier": {
                "vat_number": {"PL1": ["S-1"], "PL2": ["S-2", "S-3"]},
                "code": {7: ["S-4"], 2.5: ["S-5"]},
            }
        },
    )
    written = Writes(25, {"Supplier.band": 2}, {}, [{"ref": "Supplier/S-1", "after": "high"}], [])
    summary = ChangeSummary("ab" * 32, 2, {"Supplier": 2}, {}, {"Supplier": ["S-1", "S-2"]})
    staged = Staged(
        Head("cd" * 32, 7, None), checked, "schema-x", summary, 2, {"records": 2, "links": 0}, written
    )
    again = Staged.of_document(orjson.loads(orjson.dumps(staged.document())))
    assert again == staged
    assert again.migration.unique["Supplier"]["code"] == {7: ["S-4"], 2.5: ["S-5"]}
