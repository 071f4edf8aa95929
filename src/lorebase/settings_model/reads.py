"""The limits of reads (read): query, history, resolve, search, traverse, health, diff and Links
pages."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from msgspec import Meta

from lorebase.settings_model.section import (
    AtLeastOne,
    AtLeastZero,
    Fraction,
    Page,
    Section,
)


class QueryLimits(Page, frozen=True):
    what: ClassVar[str] = "query"


class HistoryLimits(Page, frozen=True):
    what: ClassVar[str] = "history read"
    lineage_count_max: AtLeastOne


class StopWords(Section, frozen=True):
    """Function words per language: they never ground on their own and are never a miss."""

    en: list[str]
    de: list[str]
    fr: list[str]


class ResolveLimits(Section, frozen=True):
    max_indexed_values: AtLeastZero
    max_value_chars: AtLeastZero
    similarity_threshold: Fraction
    nearest_records: AtLeastZero
    language: Literal["en", "de", "fr"]
    stop_words: StopWords
    one_edit_min_letters: Annotated[int, Meta(ge=2, le=64)]
    two_edits_min_letters: Annotated[int, Meta(ge=3, le=64)]
    code_max_chars: Annotated[int, Meta(ge=0, le=16)]
    max_title_values: AtLeastZero
    max_record_candidates: AtLeastOne

    def __post_init__(self) -> None:
        if self.two_edits_min_letters <= self.one_edit_min_letters:
            raise ValueError(
                f"two_edits_min_letters ({self.two_edits_min_letters}) must be larger than "
                f"one_edit_min_letters ({self.one_edit_min_letters})"
            )


class SearchLimits(Page, frozen=True):
    what: ClassVar[str] = "search"


class TraverseLimits(Section, frozen=True):
    max_depth: AtLeastZero
    max_records: AtLeastOne
    max_links: AtLeastZero
    max_fanout: AtLeastOne


class HealthLimits(Section, frozen=True):
    max_records_validated: AtLeastOne
    examples: AtLeastZero
    duplicate_groups_max: AtLeastZero
    orphans_max: AtLeastZero


class DiffLimits(Section, frozen=True):
    max_changes: AtLeastOne


class LinksLimits(Page, frozen=True):
    what: ClassVar[str] = "Links page"


class Read(Section, frozen=True):
    query: QueryLimits
    history: HistoryLimits
    resolve: ResolveLimits
    search: SearchLimits
    traverse: TraverseLimits
    health: HealthLimits
    diff: DiffLimits
    links: LinksLimits
