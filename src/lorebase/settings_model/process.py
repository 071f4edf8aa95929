"""The process-wide sections (a Domain cannot override them): the database, NATS, HTTP, the
supervisor, the services' addresses, logging, tracing and the admin key."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from lorebase import names
from lorebase.settings_model.section import (
    AtLeastOne,
    AtLeastZero,
    Fraction,
    GraceSeconds,
    LogLevel,
    Port,
    Seconds,
    Section,
    StreamName,
    SubjectPrefix,
)


class Database(Section, frozen=True):
    url: str
    pool_size: AtLeastOne
    statement_timeout_s: Seconds
    standby_urls: list[str]
    standby_wait_s: GraceSeconds
    standby_max_lag_s: GraceSeconds


class Relay(Section, frozen=True):
    park_after_attempts: AtLeastOne
    degraded_after_s: GraceSeconds  # 0: degraded as soon as the relay is behind


class Nats(Section, frozen=True):
    url: str
    stream: StreamName
    domain_subject_prefix: SubjectPrefix
    subject_prefix: SubjectPrefix  # the deprecated layout's (docs/feed.md)
    legacy_subjects: bool
    stream_replicas: Annotated[int, Meta(ge=1, le=5)]
    max_age_s: Annotated[float, Meta(ge=0)]
    max_bytes: Annotated[int, Meta(ge=0)]
    max_msgs: Annotated[int, Meta(ge=0)]
    relay: Relay

    def __post_init__(self) -> None:
        if self.legacy_subjects and names.subject_prefixes_overlap(
            self.domain_subject_prefix, self.subject_prefix
        ):
            raise ValueError(
                f"domain_subject_prefix ({self.domain_subject_prefix!r}) and subject_prefix "
                f"({self.subject_prefix!r}) overlap, so a subscriber of one would get the other's "
                "messages: make neither a leading part of the other, or set legacy_subjects to false"
            )


class UnauthenticatedRateLimit(Section, frozen=True):
    enabled: bool
    per_second: Annotated[float, Meta(gt=0)]
    burst: Annotated[float, Meta(ge=1)]


class GatewayReadCache(Section, frozen=True):
    enabled: bool
    max_stale_s: GraceSeconds
    max_entries: AtLeastZero
    max_entry_bytes: AtLeastZero


class Cors(Section, frozen=True):
    allow_origins: list[str]
    allow_credentials: bool
    max_age_s: AtLeastZero


class Http(Section, frozen=True):
    host: str
    port: Port
    max_body_bytes: AtLeastOne
    max_import_body_bytes: AtLeastOne
    metrics_listen: str
    metrics_on_api_port: bool
    header_timeout_s: Seconds
    max_header_bytes: Annotated[int, Meta(ge=1024)]
    body_timeout_s: Seconds
    body_min_bytes_per_s: Annotated[float, Meta(gt=0)]
    unauthenticated_rate_limit: UnauthenticatedRateLimit
    trusted_proxies: list[str]
    shutdown_grace_s: GraceSeconds
    read_cache: GatewayReadCache
    cors: Cors


class Supervisor(Section, frozen=True):
    backoff_initial_s: Seconds
    backoff_max_s: Seconds
    max_restarts: AtLeastZero  # 0: the first exit stops the stack
    window_s: Seconds
    start_timeout_s: Seconds  # how long `up` waits for /health to answer 200 before it stops

    def __post_init__(self) -> None:
        if self.backoff_initial_s > self.backoff_max_s:
            raise ValueError(
                f"backoff_initial_s ({self.backoff_initial_s:g}) is larger than backoff_max_s "
                f"({self.backoff_max_s:g}); lower the first or raise the second"
            )


class ServiceAddress(Section, frozen=True):
    listen: str
    address: str
    metrics_listen: str


class Services(Section, frozen=True):
    keeper: ServiceAddress
    feed: ServiceAddress
    scribe: ServiceAddress
    deadline_s: Seconds
    bulk_deadline_s: Seconds
    shutdown_grace_s: GraceSeconds
    loop_lag_ms: Annotated[float, Meta(ge=0)]


class Logging(Section, frozen=True):
    format: Literal["auto", "json", "text"]
    level: LogLevel


# `name=value`: an OTLP header or a resource attribute (tracing.otlp_headers, resource_attributes).
NameValue = Annotated[str, Meta(pattern=r"\A[A-Za-z0-9_.-]+=.*\Z")]


class Tracing(Section, frozen=True):
    enabled: bool
    otlp_endpoint: str
    otlp_headers: list[NameValue]
    sample_ratio: Fraction
    keep_errors: bool
    export_interval_s: Seconds
    max_queue_spans: AtLeastOne
    database_statements: bool
    resource_attributes: list[NameValue]


class Admin(Section, frozen=True):
    key: str
