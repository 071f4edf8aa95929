"""Memory commands from their typed bodies (lorebase_keeper.memory.commands): the request digest a
receipt keeps is the one keeper computed before the bodies were typed, so a command retried across
the upgrade still finds its receipt; and the rules the models cannot say are still keeper's."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from lorebase_keeper.memory import command_of

from lorebase.contract.memory import (
    DerivedMemory,
    EmbeddingBinding,
    MemoryDeletion,
    MemoryReviewCommand,
    MemoryUpdate,
    NewMemory,
)
from lorebase.problems import Problem

SCOPE = {"project_id": "proj", "mission_id": None, "agent_id": "agent", "visibility": "shared"}
MODELS: dict[str, type[Any]] = {
    "create": NewMemory,
    "derive": DerivedMemory,
    "update": MemoryUpdate,
    "delete": MemoryDeletion,
    "attach_embedding": EmbeddingBinding,
    "review": MemoryReviewCommand,
}

# (command, record id, body, the digest keeper's hand-written parser gave it)
DIGESTS = [
    (
        "create",
        None,
        {"scope": SCOPE, "content": {"fact": "x", "n": 1.5}, "idempotency_key": "k1"},
        "6e6196deb50f2b02238b5ae9f66fc3573f507e6203eb582ed2d2e690f6cb9832",
    ),
    (
        "create",
        None,
        {
            "scope": {**SCOPE, "mission_id": "m-1", "visibility": "private"},
            "content": "s",
            "valid_until_millis": 5,
            "idempotency_key": "k1",
        },
        "9ed009f8b511f6b56077e895c01ab180fe6699073f4dff8ee007344da65dcc5a",
    ),
    (
        "derive",
        None,
        {"scope": SCOPE, "content": [1, 2], "derived_from": ["mem_a", "mem_b"], "idempotency_key": "k1"},
        "2a5ac0864481abbc33d65d0a822af8bf9931f6d7fae3848025b83fe7350d3443",
    ),
    (
        "update",
        "mem_a",
        {"record_revision": 2, "content": {"u": 1}, "idempotency_key": "k1"},
        "c8a4dc2954fb8cff0acd824786c1fff7c6059f8cb58a3730148b1bf4514e811e",
    ),
    (
        "update",
        "mem_a",
        {"record_revision": 2, "valid_until_millis": None, "idempotency_key": "k1"},
        "967d84f33643a15f136491fbb6259a764b03e1dd81c570422545ebbce4ed659f",
    ),
    (
        "update",
        "mem_a",
        {"record_revision": 3, "content": True, "valid_until_millis": 99, "idempotency_key": "k1"},
        "7258aa6c76cc58c95b95f3d998993e7d8b65df6c02c5c00ec823c03cc55fe98e",
    ),
    (
        "delete",
        "mem_a",
        {"idempotency_key": "k1"},
        "96438ecc1a9035981f0c53cf4f545de2f610978142ba53d7a5a87fa546b5f923",
    ),
    (
        "delete",
        "mem_a",
        {"record_revision": 4, "idempotency_key": "k1"},
        "7fcb5520ebc9efb022576490537fd28d29269d9cba32eb497223ee6b12615a2d",
    ),
    (
        "attach_embedding",
        "mem_a",
        {"record_revision": 2, "model": "mini", "vector": [0.1, 2, -3.5], "idempotency_key": "k1"},
        "0e1d32f4ad5d6781db7fd0bb2e10c6935ca76a582d21152da37b6f951f1b9474",
    ),
    (
        "review",
        "mem_a",
        {"decision": "approve", "reason": "checked", "idempotency_key": "k1"},
        "0168889ab833154d939c1a220083de0f7b74b505ecba1b35b00d04d23d4108e6",
    ),
    (
        "review",
        "mem_a",
        {"record_revision": 2, "decision": "reject", "reason": "no", "idempotency_key": "k1"},
        "8c4e9c1c1cefd73727e77b7334be982a0930d375ddabf638cab46dc80d1e2cc4",
    ),
]


def _command(name: str, body: dict[str, Any], record_id: str | None = None, header: str = "") -> Any:
    typed = msgspec.json.decode(msgspec.json.encode(body), type=MODELS[name])
    return command_of(name, typed, record_id, header, 32768)


@pytest.mark.parametrize(("name", "record_id", "body", "digest"), DIGESTS)
def test_the_request_digest_is_the_one_receipts_hold(
    name: str, record_id: str | None, body: dict[str, Any], digest: str
) -> None:
    assert _command(name, body, record_id).digest == digest
    header = {k: v for k, v in body.items() if k != "idempotency_key"}
    by_header = _command(name, header, record_id, header="k1")  # the key travels apart
    assert by_header.digest == digest and by_header.key == "k1"


def _issues(name: str, body: dict[str, Any], header: str = "") -> list[str]:
    with pytest.raises(Problem) as raised:
        _command(name, body, None if name in ("create", "derive") else "mem_a", header)
    assert (raised.value.status, raised.value.code) == (422, "validation-failed")
    return [i["path"] for i in raised.value.extra["issues"]]


def test_what_the_models_cannot_say_keeper_checks() -> None:
    assert _issues("create", {"scope": SCOPE, "content": None}) == ["idempotency_key", "content"]
    assert _issues("create", {"scope": SCOPE, "content": 1}, header="bad key") == ["idempotency_key"]
    assert _issues("create", {"scope": SCOPE, "content": "x" * 40000, "idempotency_key": "k"}) == ["content"]
    assert _issues("create", {"scope": SCOPE, "content": [2**64], "idempotency_key": "k"}) == ["content"]
    derive = {"scope": SCOPE, "content": 1, "derived_from": ["mem_a", "mem_a"], "idempotency_key": "k"}
    assert _issues("derive", derive) == ["derived_from"]
    assert _issues("update", {"record_revision": 1, "idempotency_key": "k"}) == ["content"]
    assert _issues("update", {"record_revision": 1, "content": None, "idempotency_key": "k"}) == ["content"]
    assert _command("update", {"record_revision": 1, "valid_until_millis": None}, "mem_a", "k").key == "k"
