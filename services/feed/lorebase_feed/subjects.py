"""The NATS subjects and message ids of committed events: the typed layout and the deprecated one.

Typed (from 0.9.0): `<nats.domain_subject_prefix>.<domain>.<category>.<name>.<branch levels>`, the
event type `revision.committed` or `operation.<side effect>` as two levels between the Domain and
the branch. The type sits at a fixed position, before the branch (whose number of levels varies), so
one wildcard subscription selects a Domain and a type server-side
(`lorebase.domains.supply.operation.*.>`, `lorebase.domains.*.revision.committed.>`), and the branch
levels stay last, so a branch prefix still works (`lorebase.domains.supply.*.*.agent.>`).

Legacy (deprecated in 0.9.0, removed in 0.10.0): `<nats.subject_prefix>.<domain>.<branch levels>`,
published beside the typed one while `nats.legacy_subjects` is true. The two prefixes must not
overlap: a legacy subscriber to `lorebase.events.supply.>` must not get the typed copies, and a typed
subject must never read as the legacy subject of another branch.

Each event is one message per subject, in this order: typed, then legacy. JetStream drops a repeated
`Nats-Msg-Id` per stream, so the copies need distinct ids: the legacy copy keeps `evt_<sequence>`
(what consumers of 0.8 dedupe by), the typed copy is `evt_<sequence>.typed`. Both carry
`Lorebase-Event-Id: evt_<sequence>` and the payload's `sequence`, the id consumers should use.
Subject levels: lorebase.names.subject_token (total and injective). docs/feed.md, "Stream and subjects".
"""

from __future__ import annotations

from dataclasses import dataclass

from lorebase.names import subject_level, subject_prefixes_overlap, subject_token

TYPED_SUFFIX = ".typed"


def message_id(sequence: int) -> str:
    """The event's id: `Lorebase-Event-Id` on every copy, and the legacy copy's `Nats-Msg-Id`."""
    return f"evt_{sequence}"


def type_levels(event_type: str) -> str:
    """The event type as two subject levels: `<category>.<name>` (`revision.committed`,
    `operation.risk_flag_raised`), each escaped as one level (a '.' in the name is `%2E`)."""
    category, _, name = event_type.partition(".")
    return f"{subject_level(category)}.{subject_level(name)}"


@dataclass(frozen=True)
class Subjects:
    """Where the relay publishes: `prefix` (typed) and, when `legacy`, `legacy_prefix` too."""

    prefix: str
    legacy_prefix: str = ""  # nats.subject_prefix ("": none)
    legacy: bool = True  # nats.legacy_subjects

    @property
    def publishes_legacy(self) -> bool:
        return self.legacy and bool(self.legacy_prefix)

    def __post_init__(self) -> None:
        if self.publishes_legacy and subject_prefixes_overlap(self.prefix, self.legacy_prefix):
            raise ValueError(
                f"nats.domain_subject_prefix ({self.prefix!r}) and nats.subject_prefix "
                f"({self.legacy_prefix!r}) overlap: change one of them, or set nats.legacy_subjects "
                "to false"
            )

    def typed(self, domain: str, event_type: str, branch: str) -> str:
        return f"{self.prefix}.{subject_token(domain)}.{type_levels(event_type)}.{subject_token(branch)}"

    def legacy_subject(self, domain: str, branch: str) -> str:
        return f"{self.legacy_prefix}.{subject_token(domain)}.{subject_token(branch)}"  # relay.subject_for

    def copies(self, domain: str, event_type: str, branch: str, sequence: int) -> list[tuple[str, str]]:
        """(subject, Nats-Msg-Id) of each message that carries one event, in publication order."""
        out = [(self.typed(domain, event_type, branch), message_id(sequence) + TYPED_SUFFIX)]
        if self.publishes_legacy:
            out.append((self.legacy_subject(domain, branch), message_id(sequence)))
        return out

    def stream_subjects(self) -> list[str]:
        """The stream subjects Lorebase needs."""
        return [f"{self.prefix}.>"] + ([f"{self.legacy_prefix}.>"] if self.publishes_legacy else [])

    def managed(self) -> set[str]:
        """The stream subjects Lorebase adds and removes (the legacy one also when it is off); an
        operator's other subjects on the stream are kept."""
        return {f"{self.prefix}.>"} | ({f"{self.legacy_prefix}.>"} if self.legacy_prefix else set())

    def published_through(self, msg_id: str) -> int | None:
        """From the stream's last `Nats-Msg-Id`: the sequence through which every copy of every event
        is on the stream (None: not one of ours). The legacy copy is always an event's last; a typed
        copy is its last only when no legacy copy is published."""
        typed = msg_id.endswith(TYPED_SUFFIX)
        core = msg_id[: -len(TYPED_SUFFIX)] if typed else msg_id
        if not core.startswith("evt_") or not core[4:].isdigit():
            return None
        sequence = int(core[4:])
        return sequence - 1 if typed and self.publishes_legacy else sequence


__all__ = ["TYPED_SUFFIX", "Subjects", "message_id", "type_levels"]
