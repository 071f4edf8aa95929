"""What agents are served (agents): context, resolve's suggestions, explain, trace and the feed."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from lorebase.settings_model.section import (
    AtLeastOne,
    AtLeastZero,
    Days,
    Fraction,
    Seconds,
    Section,
    TrimStep,
)


class Context(Section, frozen=True):
    max_seeds: AtLeastOne
    default_budget_tokens: AtLeastOne
    max_budget_tokens: AtLeastOne
    default_depth: AtLeastZero
    max_depth: AtLeastZero
    chars_per_token: Annotated[float, Meta(gt=0)]
    max_neighbors: AtLeastZero
    max_links: AtLeastZero
    recent_changes_max: AtLeastZero
    trim_order: list[TrimStep]


class AgentResolve(Section, frozen=True):
    suggest_min_count: AtLeastOne
    suggest_similarity: Fraction
    suggest_max_phrases: AtLeastOne
    miss_retention_days: Days


class Explain(Section, frozen=True):
    max_links: AtLeastZero


class Trace(Section, frozen=True):
    max_entries: AtLeastOne


class Feed(Section, frozen=True):
    poll_interval_s: Seconds
    heartbeat_s: Seconds
    max_connection_s: Seconds
    reauthorize_interval_s: Seconds
    changed_keys_max: AtLeastZero
    page_size: AtLeastOne
    max_scan: AtLeastOne
    max_streams_per_principal: AtLeastOne
    max_streams: AtLeastOne


class Agents(Section, frozen=True):
    context: Context
    resolve: AgentResolve
    explain: Explain
    trace: Trace
    feed: Feed
