"""What a step of the agent trace keeps of its answer: the Records and the Links it names, whatever
the answer's shape (GET .../links, neighborhood and traverse, context packs)."""

from __future__ import annotations

from lorebase_keeper.governance.trace import _touched, _touched_links


def test_links_are_found_in_every_shape_of_answer() -> None:
    get_links = {
        "ref": "Supplier/S-1",
        "relation": "supplied_by",
        "name": "supplies",
        "links": [{"from": "Part/P-1", "to": "Supplier/S-1", "values": {}}],
    }
    neighborhood = {
        "records": [{"ref": "Supplier/S-1"}],
        "links": [{"relation": "with_supplier", "from": "Contract/C-1", "to": "Supplier/S-1"}],
    }
    pack = {
        "seeds": [{"ref": "Supplier/S-1"}],
        "links": {"supplied_by": [{"from": "Part/P-2", "to": "Supplier/S-1"}], "flags": []},
    }
    assert _touched_links(get_links) == [
        {"relation": "supplied_by", "from": "Part/P-1", "to": "Supplier/S-1"}
    ]
    assert _touched_links(neighborhood) == [
        {"relation": "with_supplier", "from": "Contract/C-1", "to": "Supplier/S-1"}
    ]
    assert _touched_links(pack) == [{"relation": "supplied_by", "from": "Part/P-2", "to": "Supplier/S-1"}]
    assert _touched(pack) == ["Part/P-2", "Supplier/S-1"]


def test_what_is_not_a_link_is_not_kept() -> None:
    # Bare keys (an Operation's edit), a Relation without ends, ends without a Relation, a diff's
    # Revisions: none of them is a Link.
    for document in (
        {"relation": "supplied_by", "from": "P-1", "to": "S-1"},
        {"relation": "supplied_by", "records": 3},
        {"links": [{"from": "Part/P-1", "to": "Supplier/S-1"}]},
        {"from": "rev_a", "to": "rev_b", "changes": []},
        [1, "Supplier/S-1", None],
    ):
        assert _touched_links(document) == [], document
    many = {"relation": "r", "links": [{"from": f"A/{n}", "to": "B/1"} for n in range(500)]}
    assert len(_touched_links(many)) == 200  # bounded like `touched`
