"""The background work (scribe), webhooks and memory."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from lorebase.settings_model.section import (
    AtLeastOne,
    Days,
    Fraction,
    Seconds,
    Section,
)


class Interval(Section, frozen=True):
    interval_s: Seconds


class Reconciliation(Section, frozen=True):
    interval_s: Seconds
    similarity: Fraction
    max_records_per_kind: AtLeastOne
    max_candidates_per_kind: AtLeastOne


class Scribe(Section, frozen=True):
    statistics: Interval
    suggestions: Interval
    reconciliation: Reconciliation
    webhooks: Interval
    schema_jobs: Interval


class Webhooks(Section, frozen=True):
    encryption_key: str
    previous_encryption_keys: list[str]
    allow_unsealed_keys: bool
    allow_private_targets: bool
    allowed_schemes: Annotated[list[Literal["http", "https"]], Meta(min_length=1)]
    timeout_s: Seconds
    connect_timeout_s: Seconds
    max_attempts: AtLeastOne
    backoff_initial_s: Seconds
    backoff_max_s: Seconds
    concurrency: AtLeastOne
    pass_timeout_s: Seconds
    batch: AtLeastOne
    retention_days: Days


class MemoryCommit(Section, frozen=True):
    max_group: AtLeastOne


class Memory(Section, frozen=True):
    max_body_bytes: AtLeastOne
    max_content_bytes: AtLeastOne
    commit: MemoryCommit
