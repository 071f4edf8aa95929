"""Every setting by section (`LorebaseSettings`), and the sections a Domain cannot override
(`PROCESS_SECTIONS`)."""

from __future__ import annotations

from lorebase.settings_model.agents import Agents
from lorebase.settings_model.keeper import (
    Keeper,
)
from lorebase.settings_model.process import (
    Admin,
    Database,
    Http,
    Logging,
    Nats,
    Services,
    Supervisor,
    Tracing,
)
from lorebase.settings_model.reads import (
    Read,
)
from lorebase.settings_model.scribe import Memory, Scribe, Webhooks
from lorebase.settings_model.section import (
    Section,
)
from lorebase.settings_model.web import Web


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
