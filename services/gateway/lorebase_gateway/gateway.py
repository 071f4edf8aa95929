"""The gateway's shared state: its service clients, its limits, the event streams' fan-out, the
web app's files and the cache of repeated reads."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lorebase.clients import (
    FeedClient,
    KeeperClient,
    MemoryJournalClient,
    MemoryStoreClient,
    ScribeClient,
)
from lorebase.clients._channel import ServiceClient
from lorebase.config import Settings
from lorebase.oidc import OidcVerifier
from lorebase.problems import Problem
from lorebase.settings_model import Cors, Oidc, OidcIssuer
from lorebase_gateway.address_limits import AddressLimits
from lorebase_gateway.body_gate import BodyGate
from lorebase_gateway.fanout import Fanout, Follower
from lorebase_gateway.read_cache import ReadCache
from lorebase_gateway.stream_caps import StreamCaps
from lorebase_gateway.web_app import AppFiles, web_root


class WebSignIn:
    """The identity providers offered to the web app (keeper.auth.oidc.issuers with a `web` client),
    by their web client's id, and the one token verifier (lorebase.oidc); lorebase_gateway.web_oidc
    runs their sign-in."""

    def __init__(self, settings: Oidc) -> None:
        self.providers = {i.web.id: i for i in settings.issuers if i.web is not None}
        self.verifier = OidcVerifier(settings)

    def provider(self, provider_id: str) -> OidcIssuer:
        issuer = self.providers.get(provider_id)
        if issuer is None:
            raise Problem(
                404,
                "not-found",
                f"no identity provider {provider_id!r} is offered to the web app; "
                "GET /api/v1/web/identity-providers lists them",
            )
        return issuer


# GET /health asks every service's gRPC health check at once, each with this deadline.
HEALTH_CHECK_TIMEOUT_S = 2.0


class Gateway:
    """The clients and limits the routes share."""

    keeper: KeeperClient
    scribe: ScribeClient

    memory: MemoryStoreClient
    journal: MemoryJournalClient

    def __init__(
        self,
        *,
        max_body_bytes: int,
        max_import_body_bytes: int | None = None,
        max_memory_body_bytes: int = 65536,
        heartbeat_s: float = 15,
        stream_caps: StreamCaps | None = None,
        address_limits: AddressLimits | None = None,
        cookie_secure: str = "auto",
        web_root: Path | None = None,
        read_cache: ReadCache | None = None,
        admin_key: str = "",
        cors: Cors | None = None,
        oidc: Oidc | None = None,
    ) -> None:
        self.max_body_bytes = max_body_bytes
        self.max_import_body_bytes = max_import_body_bytes or max_body_bytes
        self.max_memory_body_bytes = max_memory_body_bytes
        self._memory_clients: tuple[MemoryStoreClient, MemoryJournalClient] | None = None
        # The event streams, one shared Feed stream per branch; ended cleanly when the gateway stops.
        self.fanout = Fanout(heartbeat_s=heartbeat_s, caps=stream_caps)
        self.address_limits = address_limits  # None: requests without a valid credential are not limited
        self.draining = False
        self.cookie_secure = cookie_secure  # web.cookie_secure: auto | always | never
        self.app_files = AppFiles(web_root)  # the built web app (web.root; None: not built)
        self.read_cache = read_cache  # repeated reads that opted into staleness (None: none kept)
        self.cors = cors  # http.cors: browser clients on other origins (None or no origins: off)
        # The issuers whose access tokens keeper accepts: /openapi.json names them (openIdConnect).
        self.oidc_issuers = tuple(i.issuer for i in oidc.issuers) if oidc is not None else ()
        # "Sign in with <issuer>" (lorebase_gateway.web_oidc); None: no issuer has a web client.
        self.web_sign_in = WebSignIn(oidc) if oidc is not None and any(i.web for i in oidc.issuers) else None
        self.body_gate = BodyGate(None)  # large bodies only for a known credential (body_gate.py)
        # The operator's credential (admin.key), for Feed.Status behind /health's `degraded`.
        self._operator = f"Bearer {admin_key}" if admin_key else ""

    @classmethod
    def from_settings(cls, settings: Settings) -> Gateway:
        """The gateway's limits from `http`, `memory`, `agents.feed` and `web`
        (config/lorebase.example.yaml); its read cache's entries live no longer than keeper caches
        grants (keeper.auth.authz.grants_cache_ttl_s)."""
        http, feed = settings.model.http, settings.model.agents.feed
        cache = http.read_cache
        unauthenticated = http.unauthenticated_rate_limit
        return cls(
            max_body_bytes=http.max_body_bytes,
            max_import_body_bytes=http.max_import_body_bytes,
            max_memory_body_bytes=settings.model.memory.max_body_bytes,
            heartbeat_s=feed.heartbeat_s,
            stream_caps=StreamCaps(per_principal=feed.max_streams_per_principal, total=feed.max_streams),
            address_limits=AddressLimits(per_second=unauthenticated.per_second, burst=unauthenticated.burst)
            if unauthenticated.enabled
            else None,
            cookie_secure=settings.model.web.cookie_secure,
            web_root=web_root(settings.model.web.root),
            read_cache=ReadCache(
                max_stale_s=cache.max_stale_s,
                ttl_s=settings.model.keeper.auth.authz.grants_cache_ttl_s,
                max_entries=cache.max_entries if cache.enabled else 0,  # 0: none kept, headers still checked
                max_entry_bytes=cache.max_entry_bytes,
            ),
            admin_key=settings.model.admin.key,
            cors=http.cors,
            oidc=settings.model.keeper.auth.oidc,
        )

    @property
    def feed(self) -> FeedClient:
        return self.fanout.feed

    @feed.setter
    def feed(self, client: FeedClient) -> None:
        self.fanout.feed = client  # the event streams use the same client

    @property
    def streams(self) -> set[Follower]:
        """The open event streams."""
        return self.fanout.followers

    def drain(self) -> None:
        """The gateway is stopping: end every open event stream (clients reconnect with
        Last-Event-ID) and refuse new ones, so that in-flight requests can finish in the grace period."""
        self.draining = True
        self.fanout.drain()

    async def degraded(self) -> dict[str, str]:
        """Services that answer but do not work as they should, with the reason (for /health): the
        feed when its relay has fallen behind (nats.relay.degraded_after_s). Feed.Status is an
        operator call: without the admin key (admin.key) in its settings the gateway cannot ask it."""
        if not self._operator:
            return {}
        try:  # liveness is the health checks' job: a Status that does not answer says nothing here
            status = await asyncio.wait_for(
                self.feed.status(credential=self._operator), HEALTH_CHECK_TIMEOUT_S
            )
        except Exception:
            return {}
        return {"feed": status.degraded} if status.degraded else {}

    def client(self, service: str) -> ServiceClient:
        """The client of an endpoint's service (lorebase.contract: keeper, feed, memory_store,
        memory_journal)."""
        return {
            "keeper": self.keeper,
            "feed": self.feed,
            "memory_store": self.memory,
            "memory_journal": self.journal,
        }[service]

    def body_limit(self, setting: str) -> int:
        """The body limit an endpoint names by its setting."""
        return {
            "http.max_body_bytes": self.max_body_bytes,
            "http.max_import_body_bytes": self.max_import_body_bytes,
            "memory.max_body_bytes": self.max_memory_body_bytes,
        }[setting]

    def connect_memory(self, memory: MemoryStoreClient, journal: MemoryJournalClient) -> None:
        """Agent memory's clients: MemoryStore on keeper's address, MemoryJournal on feed's."""
        self.memory, self.journal = memory, journal
        self._memory_clients = (memory, journal)

    def connect(self, keeper: KeeperClient, feed: FeedClient, scribe: ScribeClient) -> None:
        self.keeper, self.feed, self.scribe = keeper, feed, scribe
        self.body_gate.keeper = keeper

    async def close(self) -> None:
        await self.fanout.close()
        for client in (self.keeper, self.feed, self.scribe, *(self._memory_clients or ())):
            await client.close()


__all__ = ["HEALTH_CHECK_TIMEOUT_S", "Gateway"]
