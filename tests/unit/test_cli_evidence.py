"""The CLI's history and lineage tables print the extraction evidence of extracted values
(docs/provenance.md)."""

from __future__ import annotations

from lorebase.commands.reads import _history_human, _lineage_human

EVIDENCE = {
    "id": "a" * 64,
    "document": "s3://audits/q3.pdf",
    "document_digest": "sha256:" + "b" * 64,
    "span": {"start": 3, "end": 15, "quote": "risk is high"},
    "model": "gpt-x",
    "prompt_version": "v3",
    "extractor": "pipe 1.4",
    "confidence": 0.82,
}
ORIGIN = {"type": "extraction", "ref": "audit-q3"}


def test_lineage_prints_the_evidence_of_extracted_values() -> None:
    text = _lineage_human(
        {
            "attributes": {
                "risk_score": {"value": "80", "revision": "c" * 64, "origin": ORIGIN, "extraction": EVIDENCE},
                "city": {"value": "Poznan", "revision": "c" * 64, "origin": ORIGIN},
            }
        }
    )
    assert "extraction evidence:" in text
    line = next(line for line in text.splitlines() if line.strip().startswith("risk_score:"))
    assert 's3://audits/q3.pdf [3-15] "risk is high" model gpt-x prompt v3 extractor pipe 1.4' in line
    assert "confidence 0.82" in line
    assert not any(line.strip().startswith("city:") for line in text.splitlines())


def test_history_prints_the_evidence_per_change() -> None:
    change = {
        "revision": "d" * 64,
        "at": "2026-10-01T08:00:03Z",
        "author": "usr_loader",
        "change": "modified",
        "attributes": ["risk_score"],
        "message": "Q3 audit",
        "provenance": {"risk_score": {"revision": "d" * 64, **ORIGIN, "extraction": EVIDENCE}},
    }
    text = _history_human({"changes": [change], "next_cursor": None})
    assert "extracted in dddddddddddd:" in text and "risk_score: s3://audits/q3.pdf" in text
