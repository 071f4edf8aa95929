"""A restore to a point in time on the cluster harness (docs/operations.md, "Backup and restore").

A base backup (`pg_basebackup`) of the primary, writes that are kept (Records through HAProxy, agent
memory, webhook deliveries marked delivered), a named restore point, writes that are lost (read by
every kind of consumer: memory feed cursors of both versions, an SSE client, `/changes`, the NATS
durable consumer, the webhook receiver), the archived WAL, then `Cluster.restore`: every service
stopped, one PostgreSQL server made from the backup and the archive up to the restore point and
promoted, the services started on it; NATS keeps the events of the lost history. Then divergent
writes, and what each consumer sees is checked against what the seed and the docs say.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from lorebase.cluster import Cluster
from tests.cluster.conftest import TABLES
from tests.cluster.load import (
    CHANGES,
    EVENTS,
    OPERATION,
    DurableConsumer,
    SseClient,
    WebhookReceiver,
)

pytestmark = pytest.mark.timeout(600)

SCOPE: dict[str, Any] = {
    "project_id": "proj",
    "mission_id": None,
    "agent_id": "agent",
    "visibility": "shared",
}
RESTORE_POINT = "before-the-lost-writes"
_keys = itertools.count()


def _wait(condition: Callable[[], bool], what: str, timeout_s: float = 120.0) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout_s, f"{what} did not happen within {timeout_s:.0f} s"
        time.sleep(0.2)
    return time.monotonic() - started


def _sql(url: str, query: str, *args: object) -> list[Any]:
    async def run() -> list[Any]:
        conn = await asyncpg.connect(url)
        try:
            return list(await conn.fetch(query, *args))
        finally:
            await conn.close()

    return asyncio.run(run())


class Client:
    """The cluster through HAProxy: Record writes, agent memory and the feeds."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.http = httpx.Client(base_url=cluster.url, timeout=30, trust_env=False)
        self.admin = cluster.admin

    def write(self, score: int) -> str:
        """update_supplier; the Revision it committed."""
        response = self.http.post(
            OPERATION, json={"parameters": {"key": "S-1001", "risk_score": score}}, headers=self.admin
        )
        assert response.status_code == 200, response.text
        return str(response.json()["revision"])

    def memory_agent(self, principal: str) -> dict[str, str]:
        created = self.http.post(
            "/api/v1/principals",
            json={"id": principal, "type": "service", "name": principal},
            headers=self.admin,
        )
        assert created.status_code in (201, 409), created.text
        key = self.http.post(f"/api/v1/principals/{principal}/keys", headers=self.admin)
        assert key.status_code == 201, key.text
        scope = {k: v for k, v in SCOPE.items() if k != "visibility"}
        granted = self.http.post(
            "/api/v1/memory/grants",
            json={"principal": principal, "scope": scope, "capabilities": ["memory_read", "memory_write"]},
            headers=self.admin,
        )
        assert granted.status_code == 201, granted.text
        return {"Authorization": f"Bearer {key.json()['key']}"}

    def remember(self, agent: dict[str, str], content: str) -> dict[str, Any]:
        response = self.http.post(
            "/api/v1/memory/records",
            json={"content": content, "idempotency_key": f"restore-{next(_keys)}", "scope": SCOPE},
            headers=agent,
        )
        assert response.status_code == 201, response.text
        return dict(response.json())

    def memory_changes(self, agent: dict[str, str], version: int, **query: Any) -> httpx.Response:
        return self.http.post(
            "/api/v1/memory/changes",
            json={"contract_version": version, "scope": SCOPE, "query": query},
            headers=agent,
        )

    def catch_up(self, agent: dict[str, str], version: int) -> list[dict[str, Any]]:
        """Every entry of the journal, by the seed's protocol (fenced at the first high_watermark)."""
        entries: list[dict[str, Any]] = []
        after: Any = None
        through: Any = None
        while True:
            response = self.memory_changes(agent, version, after=after, through=through, limit=256)
            assert response.status_code == 200, response.text
            page = response.json()
            entries += page["entries"]
            through = through or page["high_watermark"]
            after = page["next_cursor"] or after
            if page["complete"]:
                return entries

    def events_from(self, last_event_id: str) -> httpx.Response:
        """The answer to opening main's event stream with Last-Event-ID (closed once it is known)."""
        headers = {**self.admin, "Last-Event-ID": last_event_id}
        with self.http.stream("GET", EVENTS, headers=headers, timeout=httpx.Timeout(30, read=2)) as response:
            if response.status_code != 200:
                response.read()
            return response

    def changes(self, since: str) -> httpx.Response:
        return self.http.get(CHANGES, params={"since": since}, headers=self.admin)


@pytest.fixture(scope="module")
def receiver(cluster: Cluster) -> Iterator[WebhookReceiver]:
    receiving = WebhookReceiver().start()
    created = httpx.post(
        f"{cluster.url}/api/v1/domains/supply/webhooks",
        json={"url": receiving.url, "events": ["revision.committed"], "branches": ["main"]},
        headers=cluster.admin,
        timeout=30,
    )
    assert created.status_code == 201, created.text
    yield receiving
    receiving.stop()


def _delivered(cluster: Cluster, revisions: set[str]) -> bool:
    """Whether the database records a delivered webhook delivery of each of these Revisions."""
    rows = _sql(
        cluster.server_url(cluster.postgres.primary.name),
        "SELECT o.revision FROM webhook_deliveries d JOIN outbox o ON o.sequence = d.sequence "
        "WHERE d.status = 'delivered' AND o.revision = ANY($1::text[])",
        list(revisions),
    )
    return {row[0] for row in rows} >= revisions


@pytest.fixture
def client(cluster: Cluster) -> Iterator[Client]:
    opened = Client(cluster)
    try:
        yield opened
    finally:
        opened.http.close()


@pytest.fixture
def consumer(cluster: Cluster) -> Iterator[DurableConsumer]:
    following = DurableConsumer(cluster.nats.url, name="restore").start()
    try:
        yield following
    finally:
        following.stop()


def test_a_restore_to_a_point_in_time(
    cluster: Cluster, receiver: WebhookReceiver, client: Client, consumer: DurableConsumer, tmp_path: Path
) -> None:
    agent = client.memory_agent("agt_restore")
    superuser = cluster.postgres.primary.superuser_url
    backup = cluster.postgres.base_backup(tmp_path / "base-backup")

    # Kept: written after the base backup, before the restore point (replayed from the archive).
    kept_memory = [client.remember(agent, f"kept {i}") for i in range(2)]
    kept = [client.write(10 + i) for i in range(4)]
    _wait(lambda: set(kept) <= set(consumer.seen.revisions()), "the NATS consumer got the kept writes")
    _wait(lambda: _delivered(cluster, set(kept)), "the kept writes' webhooks delivered")
    point = _sql(superuser, "SELECT pg_create_restore_point($1)::text", RESTORE_POINT)[0][0]

    # Lost: after the restore point; every consumer reads them.
    lost_memory = [client.remember(agent, f"lost {i}") for i in range(2)]
    lost = [client.write(20 + i) for i in range(4)]
    v1_entries = client.catch_up(agent, 1)
    v2_entries = client.catch_up(agent, 2)
    assert [e["record_id"] for e in v2_entries] == [
        m["record"]["record_id"] for m in kept_memory + lost_memory
    ]
    sse = SseClient(cluster.url, cluster.admin, "sse")
    sse.last_id = "0"  # from the first event
    sse.start()
    _wait(lambda: set(lost) <= set(sse.seen.revisions()), "the SSE client got the lost writes")
    sse.stop()
    _wait(lambda: set(lost) <= set(consumer.seen.revisions()), "the NATS consumer got the lost writes")
    _wait(lambda: set(lost) <= set(receiver.seen.revisions()), "the webhook receiver got the lost writes")
    assert client.changes(kept[-1]).json()["events"][-1]["revision"] == lost[-1]
    event_of = dict((revision, event_id) for event_id, revision in sse.seen.items)
    stream_last = max(int(event_id.removeprefix("evt_")) for event_id, _ in consumer.seen.items)
    received_before = {event_id for event_id, _ in receiver.seen.items}
    # The restore point's WAL segment, archived.
    segment = _sql(superuser, "SELECT pg_walfile_name(pg_switch_wal())")[0][0]
    _wait(
        lambda: (_sql(superuser, "SELECT last_archived_wal FROM pg_stat_archiver")[0][0] or "") >= segment,
        "the WAL archived",
    )

    started = time.monotonic()
    cluster.restore(backup, RESTORE_POINT)
    restored_in = time.monotonic() - started
    restored_url = cluster.server_url("restored")
    delivered_at_point = {
        f"evt_{row[0]}"
        for row in _sql(restored_url, "SELECT sequence FROM webhook_deliveries WHERE status = 'delivered'")
    }
    pending_at_point = {
        f"evt_{row[0]}"
        for row in _sql(restored_url, "SELECT sequence FROM webhook_deliveries WHERE status = 'pending'")
    }
    receiver_mark = len(receiver.seen.items)

    # Before any new write. Memory: both versions' cursors of the lost entries are ahead of the
    # restored journal (seed: "ahead of restored state returns 409; do not silently reset it").
    for version, entries in ((1, v1_entries), (2, v2_entries)):
        ahead = client.memory_changes(agent, version, after=entries[-1]["cursor"])
        assert ahead.status_code == 409, ahead.text
        assert ahead.json()["reason"] == "ahead_of_journal"
    # /changes: a lost Revision is off the branch's history; the last kept one reads on.
    off = client.changes(lost[0])
    assert off.status_code == 409 and off.json()["reason"] == "off-history", off.text
    assert client.changes(kept[-1]).json()["events"] == []
    # The event stream: the relay moved the outbox past the stream's last event; a lost id resyncs.
    _wait(
        lambda: client.events_from(event_of[lost[-1]].removeprefix("evt_")).status_code == 409,
        "the lost events refused",
    )
    refused = client.events_from(event_of[lost[0]].removeprefix("evt_"))
    assert refused.status_code == 409 and refused.json()["reason"] == "lost-in-restore", refused.text

    # Divergent writes: the memory journal reuses the lost sequences; the outbox does not.
    other = client.remember(agent, "a different third write")
    assert other["change"]["cursor"]["sequence"] == v2_entries[2]["cursor"]["sequence"]
    diverged = client.memory_changes(agent, 2, after=v2_entries[2]["cursor"])
    assert diverged.status_code == 409 and diverged.json()["reason"] == "history_diverged", diverged.text
    sequence_only = client.memory_changes(agent, 1, after=v1_entries[2]["cursor"])
    assert sequence_only.status_code == 200, sequence_only.text  # version 1 cannot tell (the seed)
    assert sequence_only.json()["entries"] == []
    common = client.memory_changes(agent, 2, after=v2_entries[1]["cursor"])
    assert [e["record_id"] for e in common.json()["entries"]] == [other["record"]["record_id"]]
    new = [client.write(30 + i) for i in range(4)]

    # Everyone resynchronises on the new history, with event ids no lost event had.
    assert [e["revision"] for e in client.changes(kept[-1]).json()["events"]] == new
    resumed = SseClient(cluster.url, cluster.admin, "sse-resumed")
    resumed.last_id = event_of.get(kept[-1], f"evt_{stream_last}").removeprefix("evt_")
    resumed.start()
    _wait(lambda: set(new) <= set(resumed.seen.revisions()), "the SSE client resumed from a kept event")
    resumed.stop()
    _wait(lambda: set(new) <= set(consumer.seen.revisions()), "the NATS consumer got the new writes")
    _wait(lambda: set(new) <= set(receiver.seen.revisions()), "the webhook receiver got the new writes")
    consumer.stop()
    new_ids = {event_id for event_id, revision in consumer.seen.items if revision in new}
    assert min(int(event_id.removeprefix("evt_")) for event_id in new_ids) > stream_last
    after_restore = {event_id for event_id, _ in receiver.seen.items[receiver_mark:]}
    resent = after_restore & delivered_at_point
    assert resent == set(), f"webhooks delivered before the restore point sent again: {sorted(resent)}"
    reused = {event_id for event_id, revision in receiver.seen.items[receiver_mark:] if revision in new}
    assert not reused & received_before, "a new event's delivery reused a lost one's id"
    # Sent again, with their ids: deliveries pending at the restore point, and events committed
    # before it that the fan-out had not reached yet (docs/operations.md).
    again = after_restore & received_before

    table = TABLES.setdefault(
        "restore to a point in time",
        [
            "| restore | lost writes | their webhooks sent again | pending at the point, sent again | new event ids after |"
        ],
    )
    timings = ", ".join(f"{what} {seconds:.1f} s" for what, seconds in cluster.restore_timings.items())
    table.append(
        f"| {restored_in:.1f} s ({timings}; restore point {point}) | {len(lost)} Records, {len(lost_memory)} memories "
        f"| 0 of {len(delivered_at_point)} delivered | {len(again)} ({len(again & pending_at_point)} pending) "
        f"| after evt_{stream_last} |"
    )
    print(table[-1])
