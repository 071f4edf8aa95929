"""The typed settings model: every setting of config/lorebase.example.yaml with its type and range.

The YAML file stays the one place of the defaults and their documentation; this module says what
each value may be. Loading (`lorebase.config.load_settings`) merges the defaults, a settings file
and environment variables into one tree and converts it into `LorebaseSettings`, so that a
misspelt key, a value of the wrong type or a limit out of range stops the process at start with
the key's path. A Domain's setting overrides are checked against the same fields
(`lorebase.config.check_overrides`), which is why a Domain cannot store `chars_per_token: 0`.

No field has a default here: a key the YAML file forgets fails every load, and a test checks that
the file and this model name the same keys. Ranges are those under which the code that reads a
setting works: a limit or a page size is at least 1, a cap that may list nothing is at least 0, a
duration is positive, a similarity is a fraction. Durations are floats (fractions of a second are
allowed everywhere); counts are integers.
"""

from __future__ import annotations

import string
from typing import Annotated, ClassVar, Literal

import msgspec
from msgspec import Meta

from lorebase import names

AtLeastOne = Annotated[int, Meta(ge=1)]
AtLeastZero = Annotated[int, Meta(ge=0)]
Seconds = Annotated[float, Meta(gt=0)]
GraceSeconds = Annotated[float, Meta(ge=0)]
Days = Annotated[float, Meta(gt=0)]
Fraction = Annotated[float, Meta(ge=0, le=1)]
Port = Annotated[int, Meta(ge=1, le=65535)]
# A JetStream stream name and a subject prefix (dot-separated tokens without wildcards or spaces).
StreamName = Annotated[str, Meta(pattern=r"\A[A-Za-z0-9_-]{1,64}\Z")]
SubjectPrefix = Annotated[str, Meta(pattern=r"\A[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\Z")]
LogLevel = Annotated[str, Meta(pattern=r"\A(?i:debug|info|warning|error|critical)\Z")]
Role = Literal["viewer", "editor", "reviewer", "admin"]
PrincipalType = Literal["service", "user"]
TrimStep = Literal[
    "lineage",
    "recent_changes",
    "far_neighbor_values",
    "far_neighbors",
    "schema_descriptions",
    "near_neighbor_values",
    "near_neighbors",
    "schema",
]


class Section(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A section of settings: unknown keys are refused, every key is required (the YAML has them)."""


class Page(Section, frozen=True):
    """A page size a request may name: a default (when it names none) within the largest allowed."""

    default_limit: AtLeastOne
    max_limit: AtLeastOne
    what: ClassVar[str] = "read"

    def __post_init__(self) -> None:
        if self.default_limit > self.max_limit:
            raise ValueError(
                f"default_limit ({self.default_limit}) is larger than max_limit ({self.max_limit}): every "
                f"{self.what} without a limit would be refused; lower default_limit or raise max_limit"
            )


# -- process-wide sections (a Domain cannot override them) --------------------------------------


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


# -- keeper --------------------------------------------------------------------------------------


class Authz(Section, frozen=True):
    invisible_kinds: bool
    grants_cache_ttl_s: GraceSeconds


class OidcGrant(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A grant a group of an identity provider brings (auth.oidc.issuers[].roles)."""

    domain: str
    role: Role
    branches: list[str] = msgspec.field(default_factory=lambda: ["*"])
    kinds: list[str] | None = None


OidcName = Annotated[str, Meta(pattern=r"\A[a-z0-9][a-z0-9_]{0,31}\Z")]
ProviderId = Annotated[str, Meta(pattern=r"\A[a-z0-9][a-z0-9-]{0,31}\Z")]


class OidcTenant(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A tenant (organisation) of a multi-tenant issuer (auth.oidc.issuers[].tenants): its people
    are principals of their own (principal_prefix + name + "_" + the person's claim) and get only
    the grants named here."""

    name: OidcName  # in the principal ids of its people: usr_<name>_<sub>
    grants: list[OidcGrant] = msgspec.field(default_factory=list)  # every person of the tenant
    roles: dict[str, list[OidcGrant]] = msgspec.field(default_factory=dict)  # group -> grants


class OidcWebClient(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The web app's client at an issuer (auth.oidc.issuers[].web): "Sign in with <label>" runs the
    authorization code flow with PKCE through the gateway (docs/security.md)."""

    id: ProviderId  # in the sign-in URL: /api/v1/web/oidc/<id>/start
    label: str  # the button's text: "Sign in with <label>"
    client_id: str
    client_secret: str = ""  # empty: a public client (PKCE alone); else client_secret_post
    scopes: list[str] = msgspec.field(default_factory=lambda: ["openid", "profile"])


class OidcIssuer(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An OpenID Connect identity provider whose access tokens (JWT) authenticate people and MCP
    hosts (docs/security.md, "Sign-in through an identity provider")."""

    issuer: str  # exactly the `iss` of its tokens; discovery at <issuer>/.well-known/openid-configuration
    audience: str  # the `aud` its tokens must name (Lorebase's API)
    principal_claim: str = "sub"  # the claim that names the person
    principal_prefix: str = "usr_"  # principal id = prefix + that claim (lower case, [a-z0-9_])
    name_claim: str = "name"
    roles_claim: str = "groups"  # the claim listing the person's groups
    roles: dict[str, list[OidcGrant]] = msgspec.field(default_factory=dict)  # group -> grants
    # A multi-tenant issuer: the claim naming the person's tenant (Entra ID `tid`, Okta/Auth0
    # `org_id`...), and the tenants trusted, by that claim's value. A token of another tenant, or
    # with no such claim, is refused; a tenant's people get its grants and roles only.
    tenant_claim: str = ""
    tenants: dict[str, OidcTenant] = msgspec.field(default_factory=dict)
    algorithms: list[str] = msgspec.field(default_factory=lambda: ["RS256", "ES256"])
    web: OidcWebClient | None = None  # the web app's "Sign in with <label>" (None: not offered)

    def __post_init__(self) -> None:
        if self.tenant_claim and self.roles:
            raise ValueError("with tenant_claim, roles go under each tenant (tenants.<value>.roles)")
        if self.tenants and not self.tenant_claim:
            raise ValueError("tenants need tenant_claim: the claim that names a token's tenant")
        named = [tenant.name for tenant in self.tenants.values()]
        if len(set(named)) != len(named):
            raise ValueError("two tenants share a name: their people would be the same principals")


class Oidc(Section, frozen=True):
    issuers: list[OidcIssuer]
    jwks_refresh_s: Seconds
    leeway_s: AtLeastZero

    def __post_init__(self) -> None:
        ids = [issuer.web.id for issuer in self.issuers if issuer.web is not None]
        if len(set(ids)) != len(ids):
            raise ValueError("two issuers' web clients share an id")


class Auth(Section, frozen=True):
    authz: Authz
    oidc: Oidc


class AgentWrites(Section, frozen=True):
    enabled: bool
    principal_types: list[PrincipalType]
    auto_propose: bool
    auto_merge: bool
    allowed_roles_for_auto_merge: list[Role]
    max_open_branches_per_principal: AtLeastZero
    branch_prefix: str
    branch_mode: Literal["overlay", "copy"]
    delete_branch_on_merge: bool
    max_task_length: AtLeastOne
    title_template: str
    summary_parameter_values: bool
    summary_value_chars: AtLeastOne
    max_summary_operations: AtLeastZero

    def __post_init__(self) -> None:
        # The title is `title_template.format(principal=..., task=...)`: any other field would fail
        # when the first task Proposal opens.
        try:
            fields = [
                name for _, name, _, _ in string.Formatter().parse(self.title_template) if name is not None
            ]
        except ValueError as exc:
            raise ValueError(f"title_template is not a format string: {exc}") from None
        unknown = sorted({name for name in fields if name not in ("principal", "task")})
        if unknown:
            raise ValueError(
                f"title_template may use {{principal}} and {{task}} only, not {', '.join(unknown)}"
            )
        # Task branches are <branch_prefix><principal>/<task>: the prefix must keep them valid names.
        why = names.BRANCH.problem(f"{self.branch_prefix}usr_x/task")
        if why:
            raise ValueError(f"branch_prefix {self.branch_prefix!r} makes task branch names invalid: {why}")


class Operations(Section, frozen=True):
    side_effect_max_edits: AtLeastZero
    idempotency_retention_days: Days


class Bucket(Section, frozen=True):
    per_second: Annotated[float, Meta(gt=0)]
    burst: Annotated[float, Meta(ge=1)]


class RateLimits(Section, frozen=True):
    enabled: bool
    reads: Bucket
    writes: Bucket


class Commit(Section, frozen=True):
    max_group: AtLeastOne


class Imports(Section, frozen=True):
    max_items: AtLeastOne


class SchemaChanges(Section, frozen=True):
    batch_records: AtLeastOne
    catch_up_max: AtLeastZero
    duty: Annotated[float, Meta(gt=0, le=1)]
    nice: Annotated[int, Meta(ge=0, le=19)]
    job_deadline_s: Seconds
    job_heartbeat_s: Seconds
    job_lease_s: Seconds
    job_wait_max_s: Seconds
    job_retention_s: Seconds


class ReadCache(Section, frozen=True):
    max_entries: AtLeastZero


class Keeper(Section, frozen=True):
    auth: Auth
    read_cache: ReadCache
    check_answers: bool
    agent_writes: AgentWrites
    operations: Operations
    rate_limits: RateLimits
    commit: Commit
    imports: Imports
    schema_changes: SchemaChanges


# -- reads ---------------------------------------------------------------------------------------


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


# -- agents --------------------------------------------------------------------------------------


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


# -- scribe, webhooks, memory --------------------------------------------------------------------


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


# -- the web app ----------------------------------------------------------------------------------


class Web(Section, frozen=True):
    session_ttl_s: Annotated[float, Meta(gt=0, le=30 * 86400)]  # at most 30 days
    cookie_secure: Literal["auto", "always", "never"]
    root: str


class LorebaseSettings(Section, frozen=True):
    """Every setting, by section (config/lorebase.example.yaml documents each one)."""

    data_dir: str
    database: Database
    nats: Nats
    http: Http
    services: Services
    supervisor: Supervisor
    logging: Logging
    tracing: Tracing
    admin: Admin
    keeper: Keeper
    read: Read
    agents: Agents
    scribe: Scribe
    webhooks: Webhooks
    memory: Memory
    web: Web


# Process-wide sections: a Domain's settings cannot override them.
PROCESS_SECTIONS = frozenset(
    {"data_dir", "database", "nats", "http", "services", "supervisor", "admin", "web", "tracing"}
)

__all__ = [
    "PROCESS_SECTIONS",
    "Admin",
    "AgentResolve",
    "AgentWrites",
    "Agents",
    "Auth",
    "Authz",
    "Bucket",
    "Commit",
    "Context",
    "Database",
    "DiffLimits",
    "Explain",
    "Feed",
    "GatewayReadCache",
    "HealthLimits",
    "HistoryLimits",
    "Http",
    "Imports",
    "Interval",
    "Keeper",
    "LinksLimits",
    "Logging",
    "LorebaseSettings",
    "Memory",
    "MemoryCommit",
    "Nats",
    "Operations",
    "Page",
    "QueryLimits",
    "RateLimits",
    "Read",
    "Relay",
    "ResolveLimits",
    "Reconciliation",
    "Scribe",
    "SearchLimits",
    "Section",
    "ServiceAddress",
    "Services",
    "Supervisor",
    "Trace",
    "Tracing",
    "TraverseLimits",
    "UnauthenticatedRateLimit",
    "Web",
    "Webhooks",
]
