"""The changes digest streamed change by change (a large schema migration's, from its staged rows)
is the one `changes_digest` makes of the whole list (docs/architecture.md, "Revision ids")."""

from __future__ import annotations

from lorebase_keeper.writes import Change, ChangeDigest, changes_digest, element, summarise


def test_a_streamed_digest_is_the_digest_of_the_list() -> None:
    changes = [
        Change("record", "Supplier", f"S-{n}", "modified", ["band"], {"band": None}, {"band": "low", "n": n})
        for n in range(5)
    ]
    changes.append(Change("record", "Part", "P-1", "deleted", ["name"], {"name": "Ä seal"}, None))
    changes.append(Change("link", "supplied_by", "P-1->S-1", "created", [], None, {"is_primary": True}))
    streamed = ChangeDigest(changed_keys_max=3)
    for change in changes:
        streamed.add(change.entity, change.name, change.key, element(change))
    summary = streamed.done()
    whole = summarise(changes, changed_keys_max=3)
    assert summary.digest == changes_digest(changes) == whole.digest
    assert summary == whole
    assert summary.kinds == {"Supplier": 5, "Part": 1} and summary.relations == {"supplied_by": 1}
    assert summary.keys == {"Supplier": ["S-0", "S-1", "S-2"], "Part": ["P-1"]}
    empty = ChangeDigest(changed_keys_max=3).done()
    assert empty.digest == changes_digest([]) and empty.count == 0
