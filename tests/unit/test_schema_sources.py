"""The schema's sources: Kinds they deliver and stale_after durations, checked at load with paths."""

import pytest

from lorebase.schema import load_schema, parse_duration
from tests.unit.schema_documents import problems_of, with_supply


def test_sources_load_and_round_trip():
    document = with_supply(
        sources={
            "erp_suppliers": {"kinds": ["Supplier", "Part"], "stale_after": "P1DT12H", "description": "ERP"}
        }
    )
    schema = load_schema(document)
    source = schema.sources["erp_suppliers"]
    assert source.kinds == ("Supplier", "Part") and source.stale_after_s == 36 * 3600
    assert [s.name for s in schema.sources_of("Part")] == ["erp_suppliers"]
    assert schema.document["sources"] == {
        "erp_suppliers": {"description": "ERP", "kinds": ["Supplier", "Part"], "stale_after": "P1DT12H"}
    }
    assert load_schema(schema.document) == schema


def test_source_problems_name_their_paths():
    document = with_supply(
        sources={
            "erp": {"kinds": ["Supplier", "Ghost"], "stale_after": "1 day", "owner": "x"},
            "Bad": {"kinds": [], "stale_after": "P1M"},
            "pim": {"kinds": ["Part"]},
        }
    )
    assert problems_of(document) == [
        "sources.erp.owner: unknown member; expected one of description, kinds, stale_after",
        "sources.erp.kinds[1]: unknown Kind 'Ghost'",
        "sources.erp.stale_after: '1 day' is not an ISO 8601 duration such as P1D, PT6H or P1DT12H",
        "sources.Bad: a Source name 'Bad' must match ^[a-z][a-z0-9_]*$",
        "sources.Bad.kinds: required; name the Kinds this Source delivers",
        "sources.Bad.stale_after: 'P1M' names years or months, which have no fixed length; write days (P30D)",
        "sources.pim.stale_after: required",
    ]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("P1D", 86400), ("PT6H", 21600), ("P1W", 604800), ("PT1M30S", 90), ("PT0.5S", 0.5), ("p2d", 172800)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["P", "PT", "P1DT", "1D", "P0D", "P1Y", "PT1H1D", ""])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)
