"""The outbox relay: committed outbox events to NATS JetStream, exactly once per sequence.

Each unpublished event is published (to its typed subject and, for one more release, its legacy
one: lorebase_feed.subjects, each copy with its own `Nats-Msg-Id`) and then marked published (a
pass sends its events pipelined, in sequence order on one connection, and awaits their JetStream
acknowledgements together). A crash between the two republishes it on the next pass and
JetStream's duplicate window drops the copy, so nothing is lost and nothing is delivered twice. The relay publishes only up to the outbox
fence (lorebase_store.fence), so the stream holds the events in sequence order and a reader of the
stream never sees a sequence before a lower one that can still commit. One relay publishes at a
time across feed replicas (a PostgreSQL advisory lock held for each pass), and a commit wakes it
through NOTIFY. Subjects, replicas and failures: docs/feed.md.

With tracing on, each event whose commit was traced is published in a span of that trace
(lorebase.tracing), ended when JetStream answered, and its `traceparent` rides in the message headers.

One event can never stop the relay. An event that cannot be published (one over NATS's payload
limit, a subject the server refuses) is *parked*: marked published with its error, counted in
`lorebase_feed_events_parked` and `Feed.Status`, and the relay goes on with the next one. An error
that NATS raises for the event itself parks it at once; any other failure parks it only after
`park_after_attempts` passes failed on it while JetStream answered for the stream, so that NATS
being down or slow (which fails every event) parks nothing: the pass is retried instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import Any

import orjson
from nats.aio.client import Client as NATS
from nats.errors import BadSubjectError, MaxPayloadError
from nats.js import JetStreamContext
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import NotFoundError
from sqlalchemy import text

from lorebase import metrics, tracing
from lorebase.ids import utc_now
from lorebase.names import subject_token
from lorebase_store import Database, OutboxEvent, Txn
from lorebase_store.commits import OUTBOX_CHANNEL
from lorebase_store.fence import Fence

from .acks import PipelinedPublisher, failure_of
from .subjects import Subjects, message_id

# The first wait before looking again when the fence could not pass a commit yet (doubles each time).
PENDING_RETRY_S = 0.002

logger = logging.getLogger("lorebase.feed.relay")


def subject_for(prefix: str, domain: str, branch: str) -> str:
    """The deprecated subject `<prefix>.<domain>.<branch>` (Subjects.legacy_subject): each '/' component of
    the branch is a level, escaped by lorebase.names.subject_token (total and injective)."""
    return f"{prefix}.{subject_token(domain)}.{subject_token(branch)}"


# Errors NATS raises for an event itself, whatever the state of the server: parked at once.
_EVENT_ERRORS = (BadSubjectError, MaxPayloadError)


@dataclass(frozen=True)
class Retention:
    """The stream's retention limits (nats.max_age_s, max_bytes, max_msgs); 0 leaves the stream's own."""

    max_age_s: float = 0
    max_bytes: int = 0
    max_msgs: int = 0

    def applied(self, config: StreamConfig) -> StreamConfig:
        """`config` with the limits that are set."""
        changes: dict[str, Any] = {}
        if self.max_age_s:
            changes["max_age"] = self.max_age_s
        if self.max_bytes:
            changes["max_bytes"] = self.max_bytes
        if self.max_msgs:
            changes["max_msgs"] = self.max_msgs
        return dataclasses.replace(config, **changes)


async def ensure_stream(
    js: JetStreamContext,
    name: str,
    subjects: Subjects,
    *,
    replicas: int = 1,
    retention: Retention = Retention(),
) -> None:
    """Create the stream, or bring the settings Lorebase owns up to date on the stream that exists:
    its subjects (the typed ones, and the legacy ones while they are published), duplicate window,
    replicas (nats.stream_replicas) and the retention limits that are set. Everything else an
    operator set on the stream (subjects of their own, limits left at 0 here, description, consumer
    limits, placement...) is kept: the update starts from the stream's own configuration."""
    try:
        info = await js.stream_info(name)
    except NotFoundError:
        config = StreamConfig(
            name=name,
            subjects=subjects.stream_subjects(),
            storage=StorageType.FILE,
            duplicate_window=600.0,
            num_replicas=replicas,
        )
        await js.add_stream(retention.applied(config))
        return
    managed = subjects.managed()
    kept = [subject for subject in info.config.subjects or [] if subject not in managed]
    config = dataclasses.replace(
        info.config,
        subjects=subjects.stream_subjects() + kept,
        duplicate_window=600.0,
        num_replicas=replicas,
    )
    await js.update_stream(retention.applied(config))


# pg_advisory_xact_lock key of the relay: "lorebase" + "relay" folded into a bigint. Only the relay
# that holds it publishes, so with several feed replicas the stream still holds the events in
# sequence order; the others stand by and take over on their next pass when the holder stops.
RELAY_LOCK = 0x6C6F7265_72656C61


class Relay:
    def __init__(
        self,
        db: Database,
        js: JetStreamContext,
        *,
        subjects: Subjects,
        batch: int = 500,
        interval_s: float = 0.2,
        lock_key: int = RELAY_LOCK,
        stream: str | None = None,
        park_after_attempts: int = 5,
        ack_timeout_s: float = 5.0,
    ) -> None:
        self.db = db
        self.js = js
        self.subjects = subjects
        self.batch = batch
        self.interval_s = interval_s
        self.lock_key = lock_key
        self.stream = stream
        self.published = 0
        self.parked = 0
        self.park_after_attempts = park_after_attempts
        self.ack_timeout_s = ack_timeout_s  # for the acknowledgements of a pass's events
        self._sent: list[tuple[OutboxEvent, list[asyncio.Future[Any]]]] = []  # this pass's, in order
        self._spans: dict[int, tracing.Span] = {}  # this pass's publish spans by sequence (tracing on)
        self._publisher = PipelinedPublisher(js._nc)  # on the JetStream context's own connection
        self._failed: tuple[int, int] = (0, 0)  # (sequence, passes that failed on it)
        self.leading = False  # held the relay lock on the last pass
        self.resumed = False  # resumed from the stream's last message since taking the lock
        self.fence = Fence()
        self.fence_moved_at = 0.0
        self.wake = asyncio.Event()  # set by a commit's notification (OUTBOX_CHANNEL)
        self.listening = False

    async def publish_pending(self) -> int:
        """One pass: publish what is committed and unpublished up to the fence, in sequence order
        (so the stream holds events in sequence order); returns how many.

        The pass runs inside a transaction holding the relay's advisory lock (transaction-scoped:
        a relay that dies or loses its connection releases it). A relay that does not get the lock
        publishes nothing; it still moves its fence, which its event streams read."""
        self.wake.clear()  # a commit notified from now on runs another pass
        upto = await self.fence.advance(self.db)
        self.fence_moved_at = time.monotonic()
        async with self.db.engine.connect() as conn:
            await conn.begin()
            txn = Txn(conn)
            events = await txn.lead_and_unpublished(self.lock_key, limit=self.batch, upto=upto)
            self.leading = events is not None
            if events is None:
                self.resumed = False  # on taking the lock, first resume from the stream
                await conn.rollback()
                return 0
            if not self.resumed:
                self.resumed = await self.resume(txn, upto)
                events = await txn.unpublished(limit=self.batch, upto=upto)
            done, parked = await self._publish_all(events)
            await self.mark(txn, done)
            if parked:
                await txn.park(parked, utc_now())
            await conn.commit()
        for sequence, error in parked:
            logger.error("parked outbox event %d: it cannot be published to NATS (%s)", sequence, error)
        self.published += len(done)
        self.parked += len(parked)
        metrics.FEED_EVENTS_PARKED.inc(len(parked))
        return len(done) + len(parked)

    async def _publish_all(self, events: list[OutboxEvent]) -> tuple[list[int], list[tuple[int, str]]]:
        """Publish a pass's events pipelined: every copy is sent in sequence order on the one NATS
        connection (JetStream stores them in that order), then the acknowledgements are awaited
        together. Returns the sequences acknowledged and those parked; raises NATS's own failure
        (the pass is then retried, and JetStream drops the copies it already holds)."""
        self._sent = []
        done: list[int] = []
        parked: list[tuple[int, str]] = []
        try:
            for event in events:
                try:
                    await self.publish(event)
                except Exception as exc:
                    if not await self._cannot_publish(event, exc):
                        raise
                    parked.append((event.sequence, f"{type(exc).__name__}: {exc}"))
            await self._settle()
            refused = {sequence for sequence, _ in parked}
            for event, sent in self._sent:
                if event.sequence in refused:
                    continue
                failure = next((f for f in map(failure_of, sent) if f is not None), None)
                if failure is None:
                    done.append(event.sequence)
                    continue
                if not await self._cannot_publish(event, failure):
                    raise failure  # NATS's failure: the pass is retried (JetStream drops the copies)
                parked.append((event.sequence, f"{type(failure).__name__}: {failure}"))
        except Exception as exc:  # what was sent is answered before the pass ends (a resuming relay sees it)
            await self._settle()
            for span in self._spans.values():
                tracing.failed(span, f"the pass failed, retried: {type(exc).__name__}: {exc}")
            raise
        finally:
            for sequence, error in parked:
                tracing.failed(self._spans.get(sequence), f"parked: {error}")
            for span in self._spans.values():
                span.end()
            self._spans = {}
            for _, sent in self._sent:
                for ack in sent:
                    ack.cancel()  # unanswered in time (or the pass was cancelled): nothing waits for them
            self._sent = []
        parked.sort()
        return done, parked

    async def _settle(self) -> None:
        """Wait for the acknowledgements of this pass's copies (up to ack_timeout_s in all)."""
        waiting = [ack for _, sent in self._sent for ack in sent if not ack.done()]
        if waiting:
            await asyncio.wait(waiting, timeout=self.ack_timeout_s)
            for ack in waiting:
                ack.cancel()  # no answer in time: failure_of reports it; a second call does not wait

    async def _cannot_publish(self, event: OutboxEvent, exc: Exception) -> bool:
        """Whether a failed publication is the event's fault (park it) rather than NATS's (retry)."""
        if isinstance(exc, _EVENT_ERRORS):
            return True
        sequence, failures = self._failed
        failures = failures + 1 if sequence == event.sequence else 1
        self._failed = (event.sequence, failures)
        if failures < self.park_after_attempts or self.stream is None:
            return False
        try:  # JetStream answers for the stream: the event is what it refuses
            await self.js.stream_info(self.stream)
        except Exception:
            return False
        return True

    async def resume(self, txn: Txn, upto: int) -> bool:
        """Mark published what the stream already holds: every sequence up to the stream's last
        `evt_<n>` (the relay publishes in sequence order up to its fence, so all of them are on the
        stream), then publish from there. A relay that died after JetStream's acknowledgement and
        before marking therefore republishes nothing, even after the duplicate window. A stream
        beyond every event the outbox holds means a database restored from an older backup: the
        outbox's sequence is moved past the stream's last (OutboxTxn.skip_sequences_past), so new
        events never reuse the id of a lost one. Needs `stream`. False: not yet (the fence is
        below the stream's last sequence; try again next pass)."""
        if self.stream is None:
            return True
        try:
            state = (await self.js.stream_info(self.stream)).state
            if not state.messages:
                return True
            last = await self.js.get_msg(self.stream, state.last_seq)
        except Exception:  # no stream, or its last message is gone: publish as usual
            logger.warning("could not read the last message of stream %s; not resuming from it", self.stream)
            return True
        through = self.subjects.published_through((last.headers or {}).get("Nats-Msg-Id", ""))
        if through is None:
            return True
        skipped = await txn.skip_sequences_past(through) if through > await txn.last_sequence() else None
        if skipped is not None:
            # The stream is ahead of the database (restored from a backup): every event the outbox
            # holds was on the stream already, and new ones are numbered after the stream's last.
            logger.warning(
                "stream %s holds events up to evt_%d, beyond this database's outbox (restored from a "
                "backup?): evt_%d to evt_%d are lost, new events are numbered after them",
                self.stream,
                through,
                skipped,
                through,
            )
            upto = through
        elif through > upto:
            return False
        result = await txn.conn.execute(
            text("UPDATE outbox SET published_at = :at WHERE published_at IS NULL AND sequence <= :through"),
            {"at": utc_now(), "through": through},
        )
        marked = int(getattr(result, "rowcount", 0) or 0)
        if marked:
            logger.info("resumed after evt_%d: %d events were on the stream already", through, marked)
        return True

    async def publish(self, event: OutboxEvent) -> None:
        """Send one event to each of its subjects (typed, then legacy) without waiting: the pass
        awaits the JetStream acknowledgements of all its events together (`_publish_all`). The
        copies differ only in subject and `Nats-Msg-Id`."""
        data = orjson.dumps(event.document())
        domain = str(event.event.get("domain", ""))
        acks: list[asyncio.Future[Any]] = []
        self._sent.append((event, acks))
        span = tracing.start(
            "publish outbox event",
            event.traceparent or "",
            kind=tracing.SpanKind.PRODUCER,
            attributes={"messaging.system": "nats", "lorebase.sequence": event.sequence},
        )
        if span is not None:
            self._spans[event.sequence] = span
        for subject, msg_id in self.subjects.copies(domain, event.type, event.branch, event.sequence):
            headers = {
                "Nats-Msg-Id": msg_id,
                "Lorebase-Event-Id": message_id(event.sequence),
                "Lorebase-Event": event.type,
            }
            if span is not None:
                headers["traceparent"] = tracing.traceparent(span)
            acks.append(await self._publisher.send(subject, data, headers))

    async def mark(self, txn: Txn, sequences: list[int]) -> None:
        """Mark acknowledged events published (committed with the pass, under the lock)."""
        await txn.mark_published(sequences, utc_now())

    async def run(self, stop: asyncio.Event) -> None:
        """Passes until `stop`: one right after each commit (PostgreSQL notifies OUTBOX_CHANNEL on
        commit), and every `interval_s` in any case. Beside them, the fence keeps moving every
        `interval_s` even while a pass waits on NATS (down or slow), so event streams still read
        new commits from PostgreSQL."""
        helpers = [
            asyncio.create_task(self._move_fence(stop)),
            asyncio.create_task(self._listen(stop)),
        ]
        try:
            await self._passes(stop)
        finally:
            for helper in helpers:
                helper.cancel()
            for helper in helpers:
                with contextlib.suppress(asyncio.CancelledError):
                    await helper

    async def _move_fence(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await asyncio.sleep(self.interval_s)
            if time.monotonic() - self.fence_moved_at >= self.interval_s:
                try:
                    await self.fence.advance(self.db)
                except Exception:
                    logger.exception("moving the outbox fence failed; retrying")
                self.fence_moved_at = time.monotonic()

    async def _listen(self, stop: asyncio.Event) -> None:
        """LISTEN on a connection of its own; connect again when it is lost (the passes go on at
        `interval_s` meanwhile)."""

        def notified(*_: object) -> None:
            self.wake.set()

        while not stop.is_set():
            try:
                async with self.db.engine.connect() as conn:
                    raw = await conn.get_raw_connection()
                    driver: Any = raw.driver_connection
                    await driver.add_listener(OUTBOX_CHANNEL, notified)
                    self.listening = True
                    self.wake.set()  # commits while not listening
                    try:
                        while not stop.is_set() and not driver.is_closed():
                            with contextlib.suppress(TimeoutError):
                                await asyncio.wait_for(stop.wait(), timeout=1)
                    finally:
                        self.listening = False
                        if not driver.is_closed():
                            await driver.remove_listener(OUTBOX_CHANNEL, notified)
            except Exception:
                logger.exception("listening for outbox commits failed; polling until it is back")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=1)

    async def _passes(self, stop: asyncio.Event) -> None:
        retry = PENDING_RETRY_S
        while not stop.is_set():
            failed = False
            try:
                count = await self.publish_pending()
            except Exception:
                logger.exception("outbox relay pass failed; retrying")
                count, failed = 0, True
            if count < self.batch and (failed or not self.wake.is_set()):
                # A commit the fence could not pass yet (a write transaction was still in flight)
                # sends no second notification: look again soon, backing off up to interval_s.
                timeout = self.interval_s
                if self.fence.pending and not failed:
                    timeout, retry = min(retry, self.interval_s), retry * 2
                else:
                    retry = PENDING_RETRY_S
                waits = [asyncio.create_task(stop.wait())]
                if not failed:  # after a failure, wait interval_s whatever commits
                    waits.append(asyncio.create_task(self.wake.wait()))
                await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                for waiting in waits:
                    waiting.cancel()


def nats_servers(url: str) -> list[str]:
    """The servers of `nats.url`: one URL, or several separated by commas (a NATS cluster; the
    client connects to one and moves to another when it goes away)."""
    return [server.strip() for server in url.split(",") if server.strip()]


async def connect_nats(url: str) -> NATS:
    client = NATS()
    await client.connect(
        servers=nats_servers(url), connect_timeout=5, max_reconnect_attempts=-1, allow_reconnect=True
    )
    return client


__all__ = [
    "RELAY_LOCK",
    "Relay",
    "Retention",
    "Subjects",
    "connect_nats",
    "ensure_stream",
    "nats_servers",
    "message_id",
    "subject_for",
]
