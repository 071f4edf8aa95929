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

from lorebase.settings_model.agents import (
    AgentResolve,
    Agents,
    Context,
    Explain,
    Feed,
    Trace,
)
from lorebase.settings_model.auth import (
    Auth,
    Authz,
    Oidc,
    OidcGrant,
    OidcIssuer,
    OidcName,
    OidcTenant,
    OidcWebClient,
    ProviderId,
)
from lorebase.settings_model.keeper import (
    AgentWrites,
    Bucket,
    Commit,
    Imports,
    Keeper,
    Operations,
    RateLimits,
    ReadCache,
    SchemaChanges,
)
from lorebase.settings_model.process import (
    Admin,
    Cors,
    Database,
    GatewayReadCache,
    Http,
    Logging,
    NameValue,
    Nats,
    Relay,
    ServiceAddress,
    Services,
    Supervisor,
    Tracing,
    UnauthenticatedRateLimit,
)
from lorebase.settings_model.reads import (
    DiffLimits,
    HealthLimits,
    HistoryLimits,
    LinksLimits,
    QueryLimits,
    Read,
    ResolveLimits,
    SearchLimits,
    StopWords,
    TraverseLimits,
)
from lorebase.settings_model.scribe import (
    Interval,
    Memory,
    MemoryCommit,
    Reconciliation,
    Scribe,
    Webhooks,
)
from lorebase.settings_model.section import (
    AtLeastOne,
    AtLeastZero,
    Days,
    Fraction,
    GraceSeconds,
    LogLevel,
    Page,
    Port,
    PrincipalType,
    Role,
    Seconds,
    Section,
    StreamName,
    SubjectPrefix,
    TrimStep,
)
from lorebase.settings_model.settings import (
    PROCESS_SECTIONS,
    LorebaseSettings,
)
from lorebase.settings_model.web import (
    Web,
)

__all__ = [
    "Admin",
    "AgentResolve",
    "AgentWrites",
    "Agents",
    "AtLeastOne",
    "AtLeastZero",
    "Auth",
    "Authz",
    "Bucket",
    "Commit",
    "Context",
    "Cors",
    "Database",
    "Days",
    "DiffLimits",
    "Explain",
    "Feed",
    "Fraction",
    "GatewayReadCache",
    "GraceSeconds",
    "HealthLimits",
    "HistoryLimits",
    "Http",
    "Imports",
    "Interval",
    "Keeper",
    "LinksLimits",
    "LogLevel",
    "Logging",
    "LorebaseSettings",
    "Memory",
    "MemoryCommit",
    "NameValue",
    "Nats",
    "Oidc",
    "OidcGrant",
    "OidcIssuer",
    "OidcName",
    "OidcTenant",
    "OidcWebClient",
    "Operations",
    "PROCESS_SECTIONS",
    "Page",
    "Port",
    "PrincipalType",
    "ProviderId",
    "QueryLimits",
    "RateLimits",
    "Read",
    "ReadCache",
    "Reconciliation",
    "Relay",
    "ResolveLimits",
    "Role",
    "SchemaChanges",
    "Scribe",
    "SearchLimits",
    "Seconds",
    "Section",
    "ServiceAddress",
    "Services",
    "StopWords",
    "StreamName",
    "SubjectPrefix",
    "Supervisor",
    "Trace",
    "Tracing",
    "TraverseLimits",
    "TrimStep",
    "UnauthenticatedRateLimit",
    "Web",
    "Webhooks",
]
