"""Faults under a steady load, on the cluster harness (docs/operations.md, "What each fault costs").

Each test runs the load of tests/cluster/load.py (writes through HAProxy, two SSE clients that
reconnect with Last-Event-ID through HAProxy, the module's NATS durable consumer and webhook
receiver), injects one fault, lets the cluster recover by itself (the supervisor restarts what died,
as Kubernetes would; a failover promotes the synchronous standby), and counts, for every write that
was acknowledged: whether `/changes`, each SSE client, the durable consumer and the webhook receiver
got it (lost) and how many times an event came again (twice). The refused-write time is printed,
never asserted (the machine is shared); the counts are asserted. The tests run in file order on
one cluster; the failover is last, as it changes the topology.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable, Iterator

import asyncpg
import httpx
import pytest

from lorebase.cluster import ASYNC, SYNC, Cluster, NatsNode
from tests.cluster.conftest import TABLES
from tests.cluster.load import (
    DurableConsumer,
    SseClient,
    Tally,
    WebhookReceiver,
    Writes,
    changes_since,
    settle,
)

pytestmark = pytest.mark.timeout(600)

OBSERVERS = ["/changes", "SSE", "NATS consumer", "webhooks"]
TITLE = "faults under load (lost / received twice, per observer)"
BRANCH = "/api/v1/domains/supply/branches/main"


class Observers:
    def __init__(self, receiver: WebhookReceiver, consumer: DurableConsumer) -> None:
        self.receiver, self.consumer = receiver, consumer


@pytest.fixture(scope="module")
def observers(cluster: Cluster) -> Iterator[Observers]:
    receiver = WebhookReceiver().start()
    created = httpx.post(
        f"{cluster.url}/api/v1/domains/supply/webhooks",
        json={"url": receiver.url, "events": ["revision.committed"], "branches": ["main"]},
        headers=cluster.admin,
        timeout=30,
    )
    assert created.status_code == 201, created.text
    consumer = DurableConsumer(cluster.nats.url).start()
    # Ready once a write reaches both (the consumer is created, the webhook fanned out to).
    writes = Writes(cluster.url, cluster.admin, key="S-1002").start()
    try:
        _wait(
            lambda: bool(consumer.seen.items) and bool(receiver.seen.items), "the observers' first event", 90
        )
    finally:
        writes.stop()
    yield Observers(receiver, consumer)
    consumer.stop()
    receiver.stop()


def head(cluster: Cluster) -> str:
    response = httpx.get(f"{cluster.url}{BRANCH}", headers=cluster.admin, timeout=30)
    assert response.status_code == 200, response.text
    return str(response.json()["head"])


def under_load(
    cluster: Cluster, observers: Observers, fault: str, inject: Callable[[Writes], str | None]
) -> Tally:
    """Run the load, `inject` the fault (it returns a note, and waits for the recovery it needs),
    go on until more writes are acknowledged, then count."""
    clients = [SseClient(cluster.url, cluster.admin, f"sse-{i}").start() for i in (1, 2)]
    for client in clients:
        client.wait_connected()
    since = head(cluster)
    writes = Writes(cluster.url, cluster.admin).start()
    try:
        writes.wait_for_more(10)
        started = time.monotonic()
        note = inject(writes) or ""
        writes.wait_for_more(10)
    finally:
        writes.stop()
    acknowledged = {revision for _, revision in writes.acknowledged}
    seen = [c.seen for c in clients] + [observers.consumer.seen, observers.receiver.seen]
    settle(acknowledged, seen)
    with httpx.Client(timeout=30, trust_env=False) as http:
        changes = changes_since(http, cluster.url, cluster.admin, since)
    for sse in clients:
        sse.stop()
    lost = {
        "/changes": len(acknowledged - set(changes)),
        "SSE": max(len(acknowledged - set(c.seen.revisions())) for c in clients),
        "NATS consumer": len(acknowledged - set(observers.consumer.seen.revisions())),
        "webhooks": len(acknowledged - set(observers.receiver.seen.revisions())),
    }
    twice = {
        "/changes": len(changes) - len(set(changes)),
        "SSE": sum(c.seen.repeats(acknowledged) for c in clients),
        "NATS consumer": observers.consumer.seen.repeats(acknowledged),
        "webhooks": observers.receiver.seen.repeats(acknowledged),
    }
    reconnections = sum(c.reconnections for c in clients)
    tally = Tally(
        fault,
        writes.refused_s(started),
        writes.refused,
        len(acknowledged),
        lost,
        twice,
        f"{note}; SSE reconnections {reconnections}".strip("; "),
    )
    table = TABLES.setdefault(TITLE, [Tally.header(OBSERVERS)])
    table.append(tally.row())
    print(tally.row())
    return tally


def check(tally: Tally) -> None:
    assert all(count == 0 for count in tally.lost.values()), tally.row()
    assert all(count == 0 for count in tally.repeated.values()), tally.row()


def _wait(
    condition: Callable[[], bool],
    what: str,
    timeout_s: float = 120.0,
    state: Callable[[], object] | None = None,
) -> float:
    """Seconds until `condition` holds; fails after `timeout_s` saying `what`, and `state()` then."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started >= timeout_s:
            now = f"; then: {state()}" if state is not None else ""
            raise AssertionError(f"{what} did not happen within {timeout_s:.0f} s{now}")
        time.sleep(0.1)
    return time.monotonic() - started


def _election(cluster: Cluster, after_term: int = -1) -> tuple[NatsNode, int]:
    """The stream's leader and term, once every node agrees on them in a term above `after_term`
    (after a fault, the stream may be electing one)."""
    found: list[tuple[NatsNode, int]] = []

    def elected() -> bool:
        election = cluster.nats.stream_election("LOREBASE")
        found[:] = [election] if election is not None and election[1] > after_term else []
        return bool(found)

    _wait(elected, "a stream leader elected", 120, lambda: cluster.nats.stream_views("LOREBASE"))
    return found[0]


def _leader(cluster: Cluster) -> NatsNode:
    return _election(cluster)[0]


def _restarted(cluster: Cluster, name: str, index: int, killed: int) -> Callable[[], bool]:
    def again() -> bool:
        unit = cluster.service(name, index)
        return (
            unit is not None
            and unit.process is not None
            and unit.process.pid != killed
            and unit.poll() is None
        )

    return again


async def _reads_served(url: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("SELECT pg_stat_clear_snapshot()")
        return int(
            await conn.fetchval("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
        )
    finally:
        await conn.close()


def test_reads_at_a_revision_go_to_the_standbys_and_answer_the_same(cluster: Cluster) -> None:
    """Reads naming a full Revision (`at`) are served by the standbys (their transaction counts grow)
    and answer the same bytes as the primary's head read of that Revision; plain reads stay on the
    primary (docs/operations.md, "Reads on standbys")."""
    record = f"{cluster.url}/api/v1/domains/supply/kinds/Supplier/records/S-1003"
    with httpx.Client(timeout=30, trust_env=False, headers=cluster.admin) as http:
        fresh = http.get(record)
        assert fresh.status_code == 200, fresh.text
        revision = fresh.headers["Lorebase-Revision"]
        time.sleep(1)  # the monitor's first samples of the standbys
        before = {name: asyncio.run(_reads_served(cluster.server_url(name))) for name in (SYNC, ASYNC)}
        answers = {http.get(record, params={"at": revision}).content for _ in range(40)}
        time.sleep(1)  # statistics reach pg_stat_database within a second
        after = {name: asyncio.run(_reads_served(cluster.server_url(name))) for name in (SYNC, ASYNC)}
    served = {name: after[name] - before[name] for name in (SYNC, ASYNC)}
    print(f"40 reads at {revision[:12]}: transactions on {SYNC} {served[SYNC]}, on {ASYNC} {served[ASYNC]}")
    assert sum(served.values()) > 0, served
    assert len(answers) == 1, "a read at one Revision answered different bytes"


def test_kill_a_nats_node(cluster: Cluster, observers: Observers) -> None:
    def inject(writes: Writes) -> str:
        leader = _leader(cluster)
        node = next(n for n in cluster.nats.nodes if n is not leader)
        node.signal(signal.SIGKILL)
        back = _wait(lambda: node.poll() is None and node.healthy(), f"{node.name} back")
        return f"{node.name} (a follower) killed, back in {back:.1f} s"

    check(under_load(cluster, observers, "kill -9 a NATS node", inject))


def test_kill_the_stream_leader(cluster: Cluster, observers: Observers) -> None:
    def inject(writes: Writes) -> str:
        leader, term = _election(cluster)
        leader.signal(signal.SIGKILL)
        killed_at = time.monotonic()
        # Elected: every node names one leader in a later term. The winner may be the killed node,
        # restarted (it holds the whole log); "another node leads" is no test of an election, nor
        # is "every node names one", as a restarted leader names itself for a moment in its old term.
        winner, _ = _election(cluster, after_term=term)
        elected = time.monotonic() - killed_at
        _wait(lambda: leader.poll() is None and leader.healthy(), f"{leader.name} back")
        again = " again" if winner is leader else ""
        return f"{leader.name} (leader) killed, {winner.name} elected{again} {elected:.1f} s later"

    check(under_load(cluster, observers, "kill -9 the stream leader", inject))


def test_pause_the_stream_leader(cluster: Cluster, observers: Observers) -> None:
    def inject(writes: Writes) -> str:
        leader = _leader(cluster)
        leader.signal(signal.SIGSTOP)
        try:
            time.sleep(8)
        finally:
            leader.signal(signal.SIGCONT)
        _wait(leader.healthy, f"{leader.name} current again")
        return f"{leader.name} (leader) stopped for 8 s"

    check(under_load(cluster, observers, "SIGSTOP the stream leader (8 s)", inject))


@pytest.mark.parametrize("service", ["keeper", "gateway", "feed", "scribe"])
def test_kill_a_service(cluster: Cluster, observers: Observers, service: str) -> None:
    def inject(writes: Writes) -> str:
        killed = cluster.kill(service, 0)
        back = _wait(_restarted(cluster, service, 0, killed), f"{service}-1 restarted")
        cluster.wait_healthy()
        return f"{service}-1 killed, restarted after {back:.1f} s"

    check(under_load(cluster, observers, f"kill -9 a {service}", inject))


async def _missing_on(url: str, revisions: list[str]) -> int:
    conn = await asyncpg.connect(url)
    try:
        present = await conn.fetchval("SELECT count(*) FROM revisions WHERE id = ANY($1::text[])", revisions)
    finally:
        await conn.close()
    return len(revisions) - int(present)


def test_failover_to_the_synchronous_standby(cluster: Cluster, observers: Observers) -> None:
    """Kill the primary under writes; count what each standby lacks of the acknowledged writes (what
    a failover to it would lose: the asynchronous one may lack the last ones, the synchronous one
    nothing), then promote the synchronous standby: keeper finds it through target_session_attrs."""
    losses: dict[str, int] = {}

    def inject(writes: Writes) -> str:
        primary = cluster.postgres.primary.server
        assert primary.pid is not None
        os.kill(primary.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        # Every write acknowledged by now was committed on the dead primary (those in flight fail).
        time.sleep(0.5)
        acknowledged = [revision for _, revision in writes.acknowledged]
        for name in (SYNC, ASYNC):
            losses[name] = asyncio.run(_missing_on(cluster.server_url(name), acknowledged))
        cluster.postgres.promote(SYNC)
        promoted = time.monotonic() - killed_at
        return f"promoted {SYNC} {promoted:.1f} s after the kill; {ASYNC} lacked {losses[ASYNC]} acknowledged writes, {SYNC} {losses[SYNC]}"

    tally = under_load(cluster, observers, "kill -9 the PostgreSQL primary, promote sync1", inject)
    print(
        f"a failover to {ASYNC} would have lost {losses[ASYNC]} acknowledged writes; to {SYNC}: {losses[SYNC]}"
    )
    assert losses[SYNC] == 0
    check(tally)
