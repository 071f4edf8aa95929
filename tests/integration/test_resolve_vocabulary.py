"""Property: the resolve vocabulary kept per process and brought to each new head from the commits
in between equals one built from nothing at that head (fresh counts), Term for Term and title for
title, whatever the commits did to titles, enum and string values. A fresh Domain per example."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lorebase_keeper.access import Access
from lorebase_keeper.reads import read_point
from lorebase_keeper.reads.resolve.vocabulary import vocabulary

from tests.integration.conftest import Stack

KEYS = tuple(f"I-{n}" for n in range(6))
WORDS = ("red", "seal", "ring", "gasket", "blue", "Flange")
SCHEMA: dict[str, Any] = {
    "kinds": {
        "Item": {
            "key": ["code"],
            "title": "name",
            "attributes": {
                "code": {"type": "string"},
                "name": {"type": "string"},
                "status": {
                    "type": "enum",
                    "values": ["open", "closed", "held"],
                    "value_aliases": {"held": ["paused"]},
                },
                "city": {"type": "string", "value_aliases": {"Berlin": ["Berolina"]}},
                "tag": {"type": "string", "resolvable": True},
            },
        },
        "Box": {
            "key": ["code"],
            "title": "label",
            "attributes": {
                "code": {"type": "string"},
                "label": {"type": "string"},
                "city": {"type": "string"},
            },
        },
    },
    "operations": {
        "put": {
            "parameters": {
                "code": {"type": "string", "required": True},
                "name": {"type": "string"},
                "status": {"type": "enum", "values": ["open", "closed", "held"]},
                "city": {"type": "string"},
            },
            "edits": [
                {
                    "op": "upsert_record",
                    "kind": "Item",
                    "key": "$code",
                    "values": {"name": "$name", "status": "$status", "city": "$city"},
                }
            ],
        },
        "drop": {
            "parameters": {"code": {"type": "string", "required": True}},
            "edits": [{"op": "delete_record", "kind": "Item", "key": "$code"}],
        },
    },
}
_names = itertools.count()

title = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
step = st.one_of(
    st.tuples(
        st.just("put"),
        st.sampled_from(KEYS),
        title,
        st.sampled_from(("open", "closed", "held")),
        st.sampled_from(("Berlin", "Poznan", "Brno")),
    ),
    st.tuples(st.just("drop"), st.sampled_from(KEYS)),
    st.tuples(st.just("box"), st.sampled_from(KEYS), title, st.sampled_from(("Berlin", "Delft"))),
    st.tuples(st.just("tag"), st.sampled_from(KEYS), st.sampled_from(WORDS)),
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rounds=st.lists(st.lists(step, min_size=1, max_size=3), min_size=1, max_size=5))
async def test_kept_vocabulary_equals_a_fresh_one(stack: Stack, rounds: list[list[tuple[Any, ...]]]) -> None:
    http, admin = stack.http, stack.admin
    name = f"voc{next(_names)}"
    api = f"/api/v1/domains/{name}"
    response = await http.post("/api/v1/domains", json={"name": name, "schema": SCHEMA}, headers=admin)
    assert response.status_code == 201, response.text
    principal = await stack.rt.auth.authenticate(admin["Authorization"])

    async def commit(change: tuple[Any, ...]) -> None:
        if change[0] == "put":
            _, code, label, status, city = change
            body = {"parameters": {"code": code, "name": label, "status": status, "city": city}}
            response = await http.post(f"{api}/operations/put/execute", json=body, headers=admin)
        elif change[0] == "drop":
            response = await http.post(
                f"{api}/operations/drop/execute", json={"parameters": {"code": change[1]}}, headers=admin
            )
            if response.status_code == 404 or response.status_code == 422:
                return  # nothing to delete
        else:
            values = (
                {"kind": "Box", "values": {"code": change[1], "label": change[2], "city": change[3]}}
                if change[0] == "box"
                else {"kind": "Item", "values": {"code": change[1], "tag": change[2]}}
            )
            response = await http.post(
                f"{api}/imports", json={"source": "t", "records": [values]}, headers=admin
            )
        assert response.status_code == 200, response.text

    async def compare() -> None:
        domain = await stack.rt.domains.get(name)
        access: Access = await stack.rt.auth.access(principal, domain.id)

        async def read(txn):  # type: ignore[no-untyped-def]
            point = await read_point(txn, domain, "main", None)
            head = (point.chain, point.branch.generation)
            pairs = []
            # Two views of the Domain (another Kind order ranks every Term otherwise): they share the
            # title indexes kept per branch and Kind, and each equals its fresh build.
            for kinds in (["Item", "Box"], ["Box", "Item"]):
                kept = await vocabulary(txn, access, domain, "main", kinds, point.revision, None, head)
                pairs.append((kept, await vocabulary(txn, access, domain, "main", kinds)))
            return pairs

        (kept, fresh), (other, other_fresh) = await stack.rt.db.read("vocabulary", read)
        assert other == other_fresh
        assert kept.exact == fresh.exact
        assert kept.synonyms == fresh.synonyms
        assert kept.partial == fresh.partial
        assert [(t.kind, dict(t.records), {w: set(s) for w, s in t.words.items()}) for t in kept.titles] == [
            (t.kind, dict(t.records), {w: set(s) for w, s in t.words.items()}) for t in fresh.titles
        ]
        assert kept == fresh

    await compare()
    for changes in rounds:
        for change in changes:
            await commit(change)
        await compare()
