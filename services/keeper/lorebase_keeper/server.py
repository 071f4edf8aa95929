"""`lorebase keeper`: the Keeper gRPC service."""

from __future__ import annotations

import logging

import grpc

from lorebase import event_loop, metrics_scraped
from lorebase.config import Settings
from lorebase.grpc_serve import serve, service_name
from lorebase.logs import configure_service_logging
from lorebase.tracing import configure_service_tracing
from lorebase.v1 import keeper_pb2, keeper_pb2_grpc, memory_pb2, memory_pb2_grpc
from lorebase_keeper.admin import bootstrap_admin
from lorebase_keeper.api import KeeperServicer, MemoryStoreServicer
from lorebase_keeper.proposals import recheck_open
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.schema_changes import clear_staged, fail_abandoned
from lorebase_store import Database

logger = logging.getLogger("lorebase.keeper")


async def build_runtime(settings: Settings) -> Runtime:
    """Connect, refuse a database this code does not know, and make the admin key usable."""
    database = settings.model.database
    if not database.url:
        raise SystemExit("keeper needs database.url (LOREBASE_DATABASE_URL)")
    db = Database.connect(
        database.url,
        pool_size=database.pool_size,
        statement_timeout_s=database.statement_timeout_s,
        standby_urls=database.standby_urls,
        standby_wait_s=database.standby_wait_s,
        standby_max_lag_s=database.standby_max_lag_s,
    )
    await db.check_schema()
    metrics_scraped.watch_database(db)
    rt = Runtime.create(db, settings)
    admin_key = settings.model.admin.key
    if admin_key:
        await bootstrap_admin(rt, admin_key)
    return rt


def register(rt: Runtime, server: grpc.aio.Server) -> None:
    """Keeper's servicers: Keeper (the Domain store) and MemoryStore (agent memory)."""
    keeper_pb2_grpc.add_KeeperServicer_to_server(KeeperServicer(rt), server)
    memory_pb2_grpc.add_MemoryStoreServicer_to_server(MemoryStoreServicer(rt), server)


async def run(settings: Settings) -> int:
    rt = await build_runtime(settings)
    services = settings.model.services

    async def start() -> None:
        # Schema change jobs that can no longer answer (schema_changes/jobs.py: this keeper's
        # before it stopped, or silent past their lease), before their staged rows go: a job's
        # commit that holds its row wins, and the others then commit nothing.
        failed = await fail_abandoned(rt)
        if failed:
            logger.info("failed %d schema change jobs left running: %s", len(failed), ", ".join(failed))
        # Rows a keeper staged for a change set it never committed (it stopped meanwhile); the
        # stagings of a keeper that lives stay (schema_changes/staged/staging.py, `staging_alive`).
        cleared = await clear_staged(rt.db)
        if cleared:
            logger.info("cleared %d staged rows of unfinished schema change sets", cleared)
        # Checks reported before the last stop may not have run (proposals/checks.py).
        reported = await recheck_open(rt)
        if reported:
            logger.info("re-checking the open Proposals of %d source branches", reported)

    async def stop() -> None:
        await rt.background.stop()  # running schema change jobs end failed (keeper-stopped)
        await rt.moves.settled()  # the checks after the last commits (writes/moves.py)
        await rt.db.close()

    return await serve(
        "keeper",
        services.keeper.listen,
        lambda server: register(rt, server),
        services=(service_name(keeper_pb2, "Keeper"), service_name(memory_pb2, "MemoryStore")),
        on_start=start,
        on_stop=stop,
        grace_s=services.shutdown_grace_s,
        metrics_listen=services.keeper.metrics_listen,
        loop_lag_ms=services.loop_lag_ms,
    )


def main(settings: Settings) -> int:
    configure_service_logging("keeper", settings)
    configure_service_tracing("keeper", settings)
    try:
        return event_loop.run(run(settings))
    except KeyboardInterrupt:
        return 0


__all__ = ["build_runtime", "main", "register", "run"]
