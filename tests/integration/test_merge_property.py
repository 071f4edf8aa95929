"""Property: random updates on two branches forked from main merge to what applying the
non-conflicting changes by hand gives, and the Attributes both sides changed to different values are
exactly the both_changed Conflicts. A fresh Domain per example, on one stack.

"Changed" on the target counts both ways the merge sees it: a value other than the merge base's
(the source where the last merge took it), and a value other than the target's own at that merge.
So a target that set an Attribute back to the base's value after a merge, while the source changed
it, is a Conflict, not a silent take of the source's value (git would take it)."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.integration.conftest import Stack

KEYS = ("R-0", "R-1", "R-2")
ATTRIBUTES = ("a", "b", "c")
SCHEMA: dict[str, Any] = {
    "kinds": {
        "Rec": {
            "key": ["code"],
            "attributes": {"code": {"type": "string"}, **{a: {"type": "integer"} for a in ATTRIBUTES}},
        }
    },
    "operations": {
        "put": {
            "parameters": {
                "code": {"type": "string", "required": True},
                **{a: {"type": "integer"} for a in ATTRIBUTES},
            },
            "edits": [
                {
                    "op": "upsert_record",
                    "kind": "Rec",
                    "key": "$code",
                    "values": {a: f"${a}" for a in ATTRIBUTES},
                }
            ],
        }
    },
}
_names = itertools.count()

update = st.tuples(
    st.sampled_from(("work", "main")), st.sampled_from(KEYS), st.sampled_from(ATTRIBUTES), st.integers(0, 3)
)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rounds=st.lists(st.lists(update, max_size=6), min_size=1, max_size=2),
    mode=st.sampled_from(("copy", "overlay")),
)
# A merge that brings nothing is still the base of the next: the target's value set back after it
# is its change (a Conflict), and its own earlier change is not lost to a fast-forward.
@example(rounds=[[("main", "R-1", "b", 2)], [("main", "R-1", "b", 0), ("work", "R-1", "b", 2)]], mode="copy")
@example(rounds=[[("main", "R-0", "a", 1)], [("work", "R-1", "b", 2)]], mode="overlay")
async def test_merge_applies_the_changes_of_each_side(
    stack: Stack, rounds: list[list[tuple[str, str, str, int]]], mode: str
) -> None:
    """Each round: updates on both branches, then a Proposal of work into main merged (its Conflicts
    resolved with ours). The base of a round is the fork, then the source at the last merge."""
    http, admin = stack.http, stack.admin
    domain = f"prop{next(_names)}"
    api = f"/api/v1/domains/{domain}"
    response = await http.post("/api/v1/domains", json={"name": domain, "schema": SCHEMA}, headers=admin)
    assert response.status_code == 201, response.text

    async def put(branch: str, key: str, **values: int) -> None:
        response = await http.post(
            f"{api}/operations/put/execute",
            json={"parameters": {"code": key, **values}, "branch": branch},
            headers=admin,
        )
        assert response.status_code == 200, response.text

    start = {key: {a: 0 for a in ATTRIBUTES} for key in KEYS}
    for key in KEYS:
        await put("main", key, **start[key])
    response = await http.patch(
        f"{api}/branches/main", json={"protected": False, "required_approvals": 0}, headers=admin
    )
    assert response.status_code == 200, response.text
    response = await http.post(f"{api}/branches", json={"name": "work", "mode": mode}, headers=admin)
    assert response.status_code == 201, response.text

    state = {"work": {k: dict(v) for k, v in start.items()}, "main": {k: dict(v) for k, v in start.items()}}
    base = {k: dict(v) for k, v in start.items()}
    # The target's values when the last merge committed (the fork before the first): an Attribute
    # the target changed since then is its change too, even when it went back to the base's value.
    merged_main = {k: dict(v) for k, v in start.items()}
    for updates in rounds:
        for branch, key, attribute, value in updates:
            await put(branch, key, **{attribute: value})
            state[branch][key][attribute] = value

        expected: dict[str, dict[str, int]] = {}
        conflicts = set()
        for key in KEYS:
            expected[key] = {}
            for attribute in ATTRIBUTES:
                s, t = state["work"][key][attribute], state["main"][key][attribute]
                s_changed = s != base[key][attribute]
                t_changed = t != base[key][attribute] or t != merged_main[key][attribute]
                if s_changed and t_changed and s != t:
                    conflicts.add((key, attribute, str(t), str(s)))
                expected[key][attribute] = s if s_changed and not t_changed else t

        response = await http.post(f"{api}/proposals", json={"source": "work", "title": "p"}, headers=admin)
        assert response.status_code == 201, response.text
        url = f"{api}/proposals/{response.json()['id']}"
        attempt = await http.post(url + "/merge", headers=admin)
        assert attempt.status_code == 200, attempt.text
        if conflicts:
            assert attempt.json()["status"] == "open", (rounds, attempt.json())
            assert attempt.json()["attempt"]["counts"] == {"both_changed": len(conflicts)}
            listed = (await http.get(url + "/conflicts", headers=admin)).json()["conflicts"]
            assert {(c["key"], c["attribute"], c["ours"], c["theirs"]) for c in listed} == conflicts
            for conflict in listed:  # the target's values stay
                resolved = await http.post(conflict["href"], json={"resolution": "ours"}, headers=admin)
                assert resolved.status_code == 200, resolved.text
            attempt = await http.post(url + "/merge", headers=admin)
            assert attempt.status_code == 200, attempt.text
        assert attempt.json()["status"] == "merged", (rounds, attempt.json())
        for key in KEYS:
            response = await http.get(f"{api}/kinds/Rec/records/{key}", headers=admin)
            assert response.status_code == 200, response.text
            values = response.json()["values"]
            assert {a: int(values[a]) for a in ATTRIBUTES} == expected[key], (key, rounds)
        state["main"] = expected
        merged_main = {k: dict(v) for k, v in expected.items()}
        # The next merge base: the source where this merge took it (as in git: a change the target
        # made before, which the source never saw, still counts as the target's).
        base = {k: dict(v) for k, v in state["work"].items()}
