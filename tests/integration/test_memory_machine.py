"""A Hypothesis state machine over agent memory commands and the change journal.

Rules send create, update, delete, attach-embedding and review commands over REST (with stale
revisions, identical embeddings, identical retries and reused keys), start bursts of concurrent
writers (some of their commands sent twice at once under one key), and let consumers follow the
seed's catch-up protocol one page at a time with random page sizes 1-256, version 1 and version 2,
while those writers commit. Checked at every page: the sequences a consumer has seen are exactly
1..n in order, each once, and none above its fence; a complete cycle has seen everything up to its
fence. Checked when writers are settled: each consumer's entries are the mutations the commands
reported as committed (kind, record, revision, at their sequence), the journal holds exactly those
(retries and identical embeddings added none), and every command answered as the model predicts.

Hypothesis drives the machine from a worker thread (it is synchronous); every request runs on the
test's event loop (`asyncio.run_coroutine_threadsafe`), so bursts started by one rule keep writing on
the loop while the following rules run. Each example uses a fresh scope (its own journal).
"""

from __future__ import annotations

import asyncio
import itertools
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from lorebase.rate_limits import Limit
from tests.integration.conftest import Stack
from tests.integration.memory_helpers import ALL, SCOPE

WRITERS = ("agt_sm_a", "agt_sm_b", "agt_sm_c")
VECTORS = ([0.5, 0.25], [1.0, -1.0, 0.0])
_scopes = itertools.count()
_keys = itertools.count()
_bodies = itertools.count()


@dataclass
class Sent:
    """A command as sent (to retry it byte for byte) and its first answer."""

    writer: int
    method: str
    path: str
    body: dict[str, Any]
    status: int
    document: dict[str, Any]


@dataclass
class Record:
    record_id: str
    revision: int = 1
    deleted: bool = False
    embedding: tuple[str, tuple[float, ...], int] | None = None  # model, vector, bound revision


@dataclass
class Consumer:
    version: int
    after: dict[str, Any] | None = None
    through: dict[str, Any] | None = None
    seen: list[dict[str, Any]] = field(default_factory=list)


def _sequence(cursor: dict[str, Any] | None) -> int:
    return 0 if cursor is None else int(cursor["sequence"])


class MemoryJournalMachine(RuleBasedStateMachine):
    stack: Stack
    loop: asyncio.AbstractEventLoop
    headers: list[dict[str, str]]

    def __init__(self) -> None:
        super().__init__()
        self.scope = {**SCOPE, "agent_id": f"sm-{next(_scopes)}"}
        grant = {k: v for k, v in self.scope.items() if k != "visibility"}
        for principal in WRITERS:
            response = self.run(
                self.stack.http.post(
                    "/api/v1/memory/grants",
                    json={"principal": principal, "scope": grant, "capabilities": ALL},
                    headers=self.stack.admin,
                )
            )
            assert response.status_code == 201, response.text
        self.records: list[Record] = []
        self.accepted: list[Sent] = []
        self.used_keys: set[tuple[int, str]] = set()
        self.events: dict[int, tuple[str, str, int]] = {}  # sequence -> kind, record, revision
        self.bursts: list[Future[list[tuple[list[Sent], Record]]]] = []
        self.consumers = [Consumer(1), Consumer(2)]

    # -- plumbing --------------------------------------------------------------------------------

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=60)

    async def _send(self, writer: int, method: str, path: str, body: dict[str, Any]) -> tuple[Sent, bool]:
        response = await self.stack.http.request(method, path, json=body, headers=self.headers[writer])
        document = response.json()
        replayed = response.headers.get("idempotent-replayed") == "true"
        assert replayed == bool(document.get("replayed")), response.text
        return Sent(writer, method, path, body, response.status_code, document), replayed

    def send(self, writer: int, method: str, path: str, body: dict[str, Any]) -> Sent:
        sent, replayed = self.run(self._send(writer, method, path, body))
        assert not replayed, sent.document
        if sent.status < 300:
            self.accept(sent)
        return sent

    def accept(self, sent: Sent) -> None:
        """A command's first answer: remember it for retries and its journal entry, if any."""
        self.accepted.append(sent)
        self.used_keys.add((sent.writer, sent.body["idempotency_key"]))
        change = sent.document["change"]
        if change is None:
            return
        record = sent.document["record"]
        sequence = int(change["cursor"]["sequence"])
        assert sequence not in self.events, (sequence, self.events[sequence], sent.document)
        self.events[sequence] = (change["kind"], record["record_id"], record["record_revision"])

    def key(self) -> str:
        return f"sm-{next(_keys)}"

    def record_path(self, record: Record, suffix: str = "") -> str:
        return f"/api/v1/memory/records/{record.record_id}{suffix}"

    def settle(self) -> None:
        """Wait for every burst; take its commands and records into the model."""
        for burst in self.bursts:
            for sents, record in burst.result(timeout=120):
                for sent in sents:
                    self.accept(sent)
                self.records.append(record)
        self.bursts = []

    # -- commands --------------------------------------------------------------------------------

    @rule(writer=st.integers(0, 2), content=st.integers(0, 3))
    def create(self, writer: int, content: int) -> None:
        sent = self.send(
            writer,
            "POST",
            "/api/v1/memory/records",
            {"scope": self.scope, "content": {"n": content}, "idempotency_key": self.key()},
        )
        assert sent.status == 201, sent.document
        assert sent.document["change"]["kind"] == "created"
        self.records.append(Record(sent.document["record"]["record_id"]))

    @precondition(lambda self: self.records)
    @rule(data=st.data(), writer=st.integers(0, 2), stale=st.booleans())
    def update(self, data: st.DataObject, writer: int, stale: bool) -> None:
        record = data.draw(st.sampled_from(self.records))
        expected = record.revision + (7 if stale else 0)
        body = {"record_revision": expected, "content": {"u": next(_bodies)}, "idempotency_key": self.key()}
        sent = self.send(writer, "PATCH", self.record_path(record), body)
        if record.deleted:
            assert (sent.status, sent.document["code"]) == (409, "memory-deleted"), sent.document
        elif stale:
            assert (sent.status, sent.document["code"]) == (409, "record-revision-mismatch"), sent.document
            assert sent.document["record_revision"] == record.revision
        else:
            assert sent.status == 200, sent.document
            record.revision += 1
            assert sent.document["record"]["record_revision"] == record.revision

    @precondition(lambda self: self.records)
    @rule(data=st.data(), writer=st.integers(0, 2), expect=st.booleans())
    def delete(self, data: st.DataObject, writer: int, expect: bool) -> None:
        record = data.draw(st.sampled_from(self.records))
        body: dict[str, Any] = {"idempotency_key": self.key()}
        if expect:
            body["record_revision"] = record.revision
        sent = self.send(writer, "DELETE", self.record_path(record), body)
        if record.deleted:
            assert (sent.status, sent.document["code"]) == (409, "memory-deleted"), sent.document
        else:
            assert sent.status == 200 and sent.document["change"]["kind"] == "deleted", sent.document
            record.revision += 1
            record.deleted, record.embedding = True, None

    @precondition(lambda self: self.records)
    @rule(data=st.data(), writer=st.integers(0, 2), vector=st.sampled_from(VECTORS))
    def embed(self, data: st.DataObject, writer: int, vector: list[float]) -> None:
        record = data.draw(st.sampled_from(self.records))
        body = {
            "record_revision": record.revision,
            "model": "mini",
            "vector": vector,
            "idempotency_key": self.key(),
        }
        sent = self.send(writer, "PUT", self.record_path(record, "/embedding"), body)
        binding = ("mini", tuple(vector), record.revision)
        if record.deleted:
            assert (sent.status, sent.document["code"]) == (409, "memory-deleted"), sent.document
        elif record.embedding == binding:  # identical binding under a new key: a receipt, no event
            assert sent.status == 200 and sent.document["change"] is None, sent.document
        else:
            assert sent.status == 200 and sent.document["change"]["kind"] == "embedding_attached"
            assert sent.document["record"]["record_revision"] == record.revision
            record.embedding = binding

    @precondition(lambda self: self.records)
    @rule(data=st.data(), writer=st.integers(0, 2), decision=st.sampled_from(["approve", "reject"]))
    def review(self, data: st.DataObject, writer: int, decision: str) -> None:
        record = data.draw(st.sampled_from(self.records))
        body = {"decision": decision, "reason": "checked", "idempotency_key": self.key()}
        sent = self.send(writer, "POST", self.record_path(record, "/reviews"), body)
        if record.deleted:
            assert (sent.status, sent.document["code"]) == (409, "memory-deleted"), sent.document
        else:
            assert sent.status == 200 and sent.document["change"]["kind"] == "reviewed", sent.document
            assert sent.document["record"]["record_revision"] == record.revision

    @precondition(lambda self: self.accepted)
    @rule(data=st.data())
    def retry(self, data: st.DataObject) -> None:
        """An identical retry answers the original receipt and adds no event."""
        first = data.draw(st.sampled_from(self.accepted))
        again, replayed = self.run(self._send(first.writer, first.method, first.path, first.body))
        assert replayed and again.status == first.status, again.document
        assert {**again.document, "replayed": None} == {**first.document, "replayed": None}

    @precondition(lambda self: self.accepted)
    @rule(data=st.data(), same_writer=st.booleans())
    def reuse_key(self, data: st.DataObject, same_writer: bool) -> None:
        """Another command under a used key: 422 for a principal that used it, a new command for
        another principal (keys are per principal)."""
        first = data.draw(st.sampled_from(self.accepted))
        writer = first.writer if same_writer else (first.writer + 1) % len(WRITERS)
        key = first.body["idempotency_key"]
        body = {"scope": self.scope, "content": {"other": next(_bodies)}, "idempotency_key": key}
        used = (writer, key) in self.used_keys
        sent = self.send(writer, "POST", "/api/v1/memory/records", body)
        if used:
            assert (sent.status, sent.document["code"]) == (422, "idempotency-key-reused"), sent.document
        else:
            assert sent.status == 201, sent.document
            self.records.append(Record(sent.document["record"]["record_id"]))

    # -- concurrent writers ------------------------------------------------------------------------

    def burst(self, creates: int, doubled: list[bool]) -> None:
        """Start writers that commit concurrently on the loop while the next rules run. Each creates
        a record, updates it and reviews it; a doubled create is sent twice at once under one key:
        one commits, the other replays it."""

        async def one(i: int) -> tuple[list[Sent], Record]:
            writer = i % len(WRITERS)
            body: dict[str, Any] = {"scope": self.scope, "content": {"b": i}, "idempotency_key": self.key()}
            copies = 2 if doubled[i] else 1
            pairs = await asyncio.gather(
                *(self._send(writer, "POST", "/api/v1/memory/records", body) for _ in range(copies))
            )
            assert all(sent.status == 201 for sent, _ in pairs), [s.document for s, _ in pairs]
            assert sorted(replayed for _, replayed in pairs) == [False, True][:copies]
            assert len({sent.document["record"]["record_id"] for sent, _ in pairs}) == 1
            created = next(sent for sent, replayed in pairs if not replayed)
            record = Record(created.document["record"]["record_id"])
            path = self.record_path(record)
            body = {"record_revision": 1, "content": {"b": i, "v": 2}, "idempotency_key": self.key()}
            updated, _ = await self._send(writer, "PATCH", path, body)
            assert updated.status == 200, updated.document
            record.revision = 2
            body = {"decision": "approve", "reason": "burst", "idempotency_key": self.key()}
            reviewed, _ = await self._send(writer, "POST", path + "/reviews", body)
            assert reviewed.status == 200, reviewed.document
            return [created, updated, reviewed], record

        async def burst() -> list[tuple[list[Sent], Record]]:
            return list(await asyncio.gather(*(one(i) for i in range(creates))))

        self.bursts.append(asyncio.run_coroutine_threadsafe(burst(), self.loop))

    @precondition(lambda self: len(self.bursts) < 2)
    @rule(creates=st.integers(1, 6), doubled=st.lists(st.booleans(), min_size=6, max_size=6))
    def start_burst(self, creates: int, doubled: list[bool]) -> None:
        self.burst(creates, doubled)

    @rule(
        which=st.integers(0, 1),
        limit=st.one_of(st.integers(1, 4), st.integers(1, 256)),
        creates=st.integers(1, 6),
        doubled=st.lists(st.booleans(), min_size=6, max_size=6),
    )
    def cycle_while_writing(self, which: int, limit: int, creates: int, doubled: list[bool]) -> None:
        """A consumer reads a whole cycle, page by page, while a burst commits."""
        self.burst(creates, doubled)
        self.consumers[which].through = None
        while True:
            self.read_page(which, limit)
            if self.consumers[which].through is None:
                break

    @precondition(lambda self: self.bursts)
    @rule()
    def settle_bursts(self) -> None:
        self.settle()

    # -- consumers -------------------------------------------------------------------------------

    @rule(which=st.integers(0, 1), limit=st.one_of(st.integers(1, 4), st.integers(1, 256)))
    def read_page(self, which: int, limit: int) -> None:
        """One page of the seed's protocol: a new cycle reads with `through: null` and keeps the page's
        high_watermark as its fence; later pages pass it as `through` and advance `after`."""
        consumer = self.consumers[which]
        import sys

        print("OVERLAP", sum(not b.done() for b in self.bursts), file=sys.stderr)
        query = {"after": consumer.after, "through": consumer.through, "limit": limit}
        response = self.run(
            self.stack.http.post(
                "/api/v1/memory/changes",
                json={"contract_version": consumer.version, "scope": self.scope, "query": query},
                headers=self.headers[which],
            )
        )
        assert response.status_code == 200, response.text
        page = response.json()
        fence = page["high_watermark"] if consumer.through is None else consumer.through
        if consumer.through is not None:
            assert page["high_watermark"] == consumer.through
        entries = page["entries"]
        assert len(entries) <= limit
        for entry in entries:
            assert ("prefix_digest" in entry["cursor"]) == (consumer.version == 2)
            assert _sequence(entry["cursor"]) <= _sequence(fence), (entry, fence)  # nothing above the fence
        consumer.seen += entries
        sequences = [_sequence(e["cursor"]) for e in consumer.seen]
        assert sequences == list(range(1, len(sequences) + 1)), sequences  # each once, in order, no gap
        if page["next_cursor"] is not None:
            consumer.after = page["next_cursor"]
        if page["complete"]:
            assert len(consumer.seen) == _sequence(fence)  # everything up to the fence
            consumer.through = None  # the next cycle observes later commits
        else:
            assert entries and len(entries) == limit
            consumer.through = fence

    @invariant()
    def consumers_never_pass_what_was_reported(self) -> None:
        for consumer in self.consumers:
            for entry in consumer.seen:
                known = self.events.get(_sequence(entry["cursor"]))
                if known is not None:  # a burst's commands are known once it is settled
                    assert known == (entry["kind"], entry["record_id"], entry["record_revision"]), entry

    def teardown(self) -> None:
        self.settle()
        # Every consumer finishes a cycle; then each has seen exactly the reported mutations.
        for which, consumer in enumerate(self.consumers):
            consumer.through = None
            while True:
                self.read_page(which, 256)
                if consumer.through is None and len(consumer.seen) >= len(self.events):
                    break
            seen = {
                _sequence(e["cursor"]): (e["kind"], e["record_id"], e["record_revision"])
                for e in consumer.seen
            }
            assert seen == self.events
        # The journal holds exactly the reported mutations: retries and identical bindings added none.
        assert sorted(self.events) == list(range(1, len(self.events) + 1))


async def test_memory_journal_state_machine(stack: Stack) -> None:
    headers = [await stack.principal(principal, type="service") for principal in WRITERS]
    assert stack.rt.limits is not None  # bursts of concurrent writers: the rate limits are tested elsewhere
    stack.rt.limits.limits.update({name: Limit(1e9, 1e9) for name in ("reads", "writes")})
    MemoryJournalMachine.stack = stack
    MemoryJournalMachine.loop = asyncio.get_running_loop()
    MemoryJournalMachine.headers = headers
    machine_settings = settings(
        max_examples=10,
        stateful_step_count=30,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    await asyncio.to_thread(run_state_machine_as_test, MemoryJournalMachine, settings=machine_settings)
