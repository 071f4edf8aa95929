"""GET /branches/{b}/changes: the polling feed through the gateway, the feed service and Keeper."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from tests.integration.conftest import Stack
from tests.integration.feed_stack import Feed, running_feed

CHANGES = "/api/v1/domains/supply/branches/{}/changes"


@pytest_asyncio.fixture
async def feed(supply: Stack, nats_url: str) -> AsyncIterator[Feed]:
    async with running_feed(supply, nats_url, relay=False) as running:
        yield running


async def raise_risk(stack: Stack, score: int, branch: str = "main") -> str:
    response = await stack.http.post(
        "/api/v1/domains/supply/operations/update_supplier/execute",
        json={
            "parameters": {"key": "S-1001", "risk_score": score},
            "branch": branch,
            "message": f"risk {score}",
        },
        headers=stack.admin,
    )
    assert response.status_code == 200, response.text
    return str(response.json()["revision"])


async def get(stack: Stack, branch: str = "main", headers: dict[str, str] | None = None, **query: Any) -> Any:
    return await stack.http.get(CHANGES.format(branch), params=query, headers=headers or stack.admin)


async def test_changes_page_through_the_first_parent_history(supply: Stack, feed: Feed) -> None:
    latest = await get(supply)
    assert latest.status_code == 200, latest.text
    body = latest.json()
    import_event, update_event = body["events"]
    assert [e["message"] for e in body["events"]] == [
        "Import the supply example data",
        "Raise the risk of S-1001",
    ]
    assert update_event["type"] == "revision.committed" and update_event["keys"] == {"Supplier": ["S-1001"]}
    for member in (
        "sequence",
        "domain",
        "branch",
        "revision",
        "parents",
        "generation",
        "author",
        "message",
        "origin",
        "stats",
        "created_at",
        "kinds",
        "relations",
        "schema_changed",
        "keys",
        "keys_truncated",
    ):
        assert member in update_event, member
    assert body["next_since"] == body["head"] == update_event["revision"] and body["more"] is False
    assert latest.headers["Lorebase-Revision"] == body["head"]

    revisions = [await raise_risk(supply, score) for score in (10, 11, 12, 13, 14)]
    since = update_event["revision"]
    seen: list[str] = []
    pages = 0
    while True:
        page = (await get(supply, since=since, limit=2)).json()
        pages += 1
        seen += [e["revision"] for e in page["events"]]
        since = page["next_since"]
        if not page["more"]:
            break
    assert seen == revisions and pages == 3 and since == revisions[-1]
    assert (await get(supply, since=revisions[-1])).json()["events"] == []
    # Without since: the latest ones, oldest first.
    assert [e["revision"] for e in (await get(supply, limit=2)).json()["events"]] == revisions[-2:]
    # kinds= keeps the Revisions changing those Kinds.
    parts = (await get(supply, since=import_event["revision"], kinds="Part")).json()
    assert parts["events"] == [] and parts["next_since"] == revisions[-1] and parts["more"] is False
    assert [e["revision"] for e in (await get(supply, kinds="Part,Plant")).json()["events"]] == [
        import_event["revision"]
    ]


async def test_changes_of_a_branch_with_slashes_and_off_history(supply: Stack, feed: Feed) -> None:
    response = await supply.http.post(
        "/api/v1/domains/supply/branches", json={"name": "team/work-1", "from": "main"}, headers=supply.admin
    )
    assert response.status_code == 201, response.text
    on_branch = await raise_risk(supply, 33, branch="team/work-1")
    page = await get(supply, "team/work-1")
    assert page.status_code == 200, page.text
    assert [e["revision"] for e in page.json()["events"]][-1] == on_branch
    on_main = await raise_risk(supply, 44)
    refused = await get(supply, since=on_branch)
    assert refused.status_code == 409, refused.text
    assert refused.json()["type"].endswith("resync-required") and refused.json()["reason"] == "off-history"
    assert (await get(supply, "team/work-1", since=on_main)).status_code == 409
    assert (await get(supply, since="0" * 64)).status_code == 409
    assert (await get(supply, "nope")).status_code == 404


async def test_changes_more_than_max_scan_behind_is_409(supply: Stack, feed: Feed) -> None:
    first = (await get(supply)).json()["events"][0]["revision"]
    feed.servicer.changes_limits = dataclasses.replace(feed.servicer.changes_limits, max_scan=1)
    await raise_risk(supply, 20)
    response = await get(supply, since=first)
    assert response.status_code == 409 and response.json()["reason"] == "too-far-behind"
    assert "agents.feed.max_scan" in response.json()["detail"]


async def test_changes_bad_input_and_grants(supply: Stack, feed: Feed) -> None:
    cases: tuple[tuple[dict[str, Any], str], ...] = (
        ({"since": "not hex"}, "since"),
        ({"kinds": "Supplier,Nope"}, "kinds"),
        ({"limit": "1000"}, "limit"),
        ({"limit": "-1"}, "limit"),
    )
    for query, parameter in cases:
        response = await get(supply, **query)
        assert response.status_code == 400, (query, response.text)
        assert response.json()["parameter"] == parameter
    assert (await supply.http.get(CHANGES.format("main"))).status_code == 401
    narrowed = await supply.principal("usr_narrow")
    await supply.grant("supply", "usr_narrow", "viewer", kinds=["Supplier"])
    response = await get(supply, headers=narrowed)
    assert response.status_code == 403 and "narrowed" in response.json()["detail"]
    # No grant in the Domain: 403 (the seed's answer to a follower whose grant was withdrawn), the
    # same for a Domain that does not exist, so the two cannot be told apart.
    outsider = await supply.principal("usr_outside")
    refused = await get(supply, headers=outsider)
    assert refused.status_code == 403, refused.text
    unknown = await supply.http.get("/api/v1/domains/nowhere/branches/main/changes", headers=outsider)
    assert unknown.status_code == 403 and unknown.json()["detail"] == refused.json()["detail"].replace(
        "'supply'", "'nowhere'"
    )
    viewer = await supply.principal("usr_viewer")
    await supply.grant("supply", "usr_viewer", "viewer", branches=["main"])
    assert (await get(supply, headers=viewer)).status_code == 200
    assert (await get(supply, "team/x", headers=viewer)).status_code == 403


async def test_feed_calls_count_against_the_rate_limits(supply: Stack, feed: Feed) -> None:
    from lorebase.rate_limits import Limit, RateLimiter

    follower = await supply.principal("usr_poller")
    await supply.grant("supply", "usr_poller", "viewer")
    object.__setattr__(supply.rt, "limits", RateLimiter({"reads": Limit(0.01, 2), "writes": Limit(0.01, 1)}))
    for _ in range(2):
        assert (await get(supply, headers=follower)).status_code == 200
    refused = await get(supply, headers=follower)
    assert refused.status_code == 429, refused.text
    assert refused.json()["code"] == "rate-limited" and int(refused.headers["Retry-After"]) >= 1
    assert (await get(supply)).status_code == 200  # the admin is not limited


async def test_changes_since_a_tag_are_the_changes_since_its_revision(supply: Stack, feed: Feed) -> None:
    first = (await get(supply)).json()["events"][0]["revision"]
    await raise_risk(supply, 91)
    created = await supply.http.post(
        "/api/v1/domains/supply/tags", json={"name": "imported", "revision": first}, headers=supply.admin
    )
    assert created.status_code == 201, created.text
    by_tag = await get(supply, since="imported")
    assert by_tag.status_code == 200, by_tag.text
    assert by_tag.content == (await get(supply, since=first)).content
    assert len(by_tag.json()["events"]) == 2
    untagged = await get(supply, since="no-such-tag")
    assert untagged.status_code == (await get(supply, since="0" * 64)).status_code == 409
