"""Extraction evidence: where an extracted value came from (docs/provenance.md).

The seed's fourth origin. A value read out of a document by a model carries, per Record or per
value, the document (a reference and the digest of the bytes read), the span (character offsets,
a quote, or both), the model, the prompt version, the extractor (the program or pipeline that ran
the model) and a confidence in [0, 1]. Keeper stores each distinct piece of evidence once, under the
digest of its canonical form, and provenance names it.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from lorebase.contract._base import Body
from lorebase.contract.fields import bounded, matching
from lorebase.contract.schemas import members

Offset = Annotated[int, Meta(ge=0, le=2**53, description="A character offset in the document")]


@members(any_of=("start", "quote"), together=("start", "end"))
class Span(Body, frozen=True, kw_only=True):
    """Where in the document: `start` and `end` (character offsets, end exclusive), a `quote` of
    the passage, or both; at least one of them."""

    start: Offset | None = None
    end: Offset | None = None
    quote: Annotated[str, bounded(4096, "The passage the value was read from", min_length=1)] | None = None


class Evidence(Body, frozen=True, kw_only=True):
    """The evidence of an extraction."""

    document: Annotated[str, bounded(2048, "The document read: a URI or an id in your archive", min_length=1)]
    document_digest: Annotated[
        str, matching(r"sha256:[0-9a-f]{64}", "sha256: and the hex SHA-256 of the document's bytes")
    ]
    span: Span
    model: Annotated[str, bounded(200, "The model that read the value", min_length=1)]
    prompt_version: Annotated[str, bounded(200, "The version of the prompt the model ran", min_length=1)]
    extractor: Annotated[str, bounded(200, "The program or pipeline that ran the model", min_length=1)]
    confidence: (
        Annotated[float, Meta(ge=0, le=1, description="The extractor's confidence, 0 to 1")] | None
    ) = None


def span_problem(span: Span) -> str | None:
    """Why a span is not usable (None: it is): the model cannot say "at least one of" or start <= end."""
    if span.start is None and span.end is None and span.quote is None:
        return "give start and end (character offsets), a quote, or both"
    if (span.start is None) != (span.end is None):
        return "give start and end together (character offsets, end exclusive)"
    if span.start is not None and span.end is not None and span.start > span.end:
        return f"start ({span.start}) is after end ({span.end})"
    return None


__all__ = ["Evidence", "Span", "span_problem"]
