"""Operations through REST -> gRPC -> keeper -> PostgreSQL: commits, review, dry runs, idempotency, heads."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from tests.integration.conftest import Stack

EXECUTE = "/api/v1/domains/supply/operations/{}/execute"
S1001 = "/api/v1/domains/supply/kinds/Supplier/records/S-1001"


async def head(stack: Stack, branch: str = "main") -> str | None:
    response = await stack.http.get(f"/api/v1/domains/supply/branches/{branch}", headers=stack.admin)
    assert response.status_code == 200, response.text
    return response.json()["head"]


async def work_branch(stack: Stack, name: str = "work-1") -> None:
    response = await stack.http.post(
        "/api/v1/domains/supply/branches", json={"name": name, "from": "main"}, headers=stack.admin
    )
    assert response.status_code == 201, response.text


async def test_supply_example_has_two_revisions_on_main(supply: Stack) -> None:
    revisions = await supply.count("revisions")
    assert revisions == 2
    record = await supply.http.get(S1001, headers=supply.admin)
    body = record.json()
    assert body["values"]["risk_score"] == "90"
    assert body["values"]["legal_name"] == "Kavsen Alloys Sp. z o.o."
    assert body["values"]["city"] == "Poznan"
    assert record.headers["Lorebase-Revision"] == body["revision"] == await head(supply)
    part = (
        await supply.http.get("/api/v1/domains/supply/kinds/Part/records/P-10028", headers=supply.admin)
    ).json()
    assert part["title"] == "Radial shaft seal 25x42x7"
    assert part["values"]["unit_cost"] == "24.01"


async def test_user_with_operation_execute_commits_on_protected_main(supply: Stack) -> None:
    editor = await supply.principal("usr_analyst")
    await supply.grant("supply", "usr_analyst", "editor")
    before = await head(supply)
    response = await supply.http.post(
        EXECUTE.format("update_supplier"),
        json={
            "parameters": {"key": "S-1002", "risk_score": 40},
            "message": "Audit result",
            "expected_head": before,
        },
        headers=editor,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "committed"
    assert body["revision"] and len(body["revision"]) == 64
    assert body["changes"] == [
        {"ref": "Supplier/S-1002", "entity": "record", "change": "modified", "attributes": ["risk_score"]}
    ]
    assert response.headers["Lorebase-Revision"] == body["revision"] == await head(supply)
    record = (
        await supply.http.get(
            "/api/v1/domains/supply/kinds/Supplier/records/S-1002?lineage=true", headers=editor
        )
    ).json()
    assert record["values"]["risk_score"] == "40"
    assert record["lineage"]["risk_score"]["revision"] == body["revision"]
    assert record["lineage"]["risk_score"]["actor"] == "usr_analyst"
    assert record["lineage"]["risk_score"]["origin"] == {"type": "operation", "ref": body["invocation_id"]}


async def test_agent_principal_gets_review_required_on_protected_branch(supply: Stack) -> None:
    agent = await supply.principal("agt_risk", type="service")
    await supply.grant("supply", "agt_risk", "editor")
    before = await head(supply)
    rows = await supply.count("history")
    response = await supply.http.post(
        EXECUTE.format("update_supplier"),
        json={"parameters": {"key": "S-1001", "risk_score": 75}},
        headers=agent,
    )
    assert response.status_code == 409
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"].endswith("/review-required")
    assert problem["reason"] == "protected-branch"
    assert problem["branch"] == "main"
    assert problem["operation"] == "update_supplier"
    assert problem["proposals"] == []
    assert [n["action"] for n in problem["next"]] == ["name_a_task", "create_branch"]
    assert await head(supply) == before
    assert await supply.count("history") == rows


async def test_review_policy_refuses_on_every_branch(supply: Stack) -> None:
    await work_branch(supply)
    response = await supply.http.post(
        EXECUTE.format("flag_supplier_risk"),
        json={
            "parameters": {"supplier": "S-1002", "severity": "critical", "reason": "Insolvency"},
            "branch": "work-1",
        },
        headers=supply.admin,
    )
    assert response.status_code == 409
    assert response.json()["reason"] == "review-policy"
    assert response.json()["branch"] == "work-1"


async def test_flag_on_work_branch_writes_record_link_and_side_effect_event(supply: Stack) -> None:
    await work_branch(supply)
    response = await supply.http.post(
        EXECUTE.format("flag_supplier_risk"),
        json={
            "parameters": {"supplier": "S-1002", "severity": "high", "reason": "Two late deliveries"},
            "branch": "work-1",
        },
        headers=supply.admin,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    refs = {(c["ref"], c["change"]) for c in body["changes"]}
    assert ("RiskFlag/RF-S-1002-high", "created") in refs
    assert ("flags/RF-S-1002-high->S-1002", "created") in refs
    links = await supply.http.get(
        "/api/v1/domains/supply/kinds/Supplier/records/S-1002/links/risk_flags?branch=work-1",
        headers=supply.admin,
    )
    assert [link["from"] for link in links.json()["links"]] == ["RiskFlag/RF-S-1002-high"]
    # main is untouched
    main = await supply.http.get(
        "/api/v1/domains/supply/kinds/Supplier/records/S-1002/links/risk_flags", headers=supply.admin
    )
    assert main.json()["links"] == []
    from sqlalchemy import text

    async with supply.rt.db.engine.connect() as conn:
        types = [row[0] for row in await conn.execute(text("select type from outbox order by sequence"))]
        event = await conn.scalar(text("select event from outbox where type = 'operation.risk_flag_raised'"))
    assert types[-2:] == ["revision.committed", "operation.risk_flag_raised"]
    assert event["operation"] == "flag_supplier_risk"
    assert event["parameters"]["severity"] == "high"
    assert event["revisions"] == [body["revision"]]
    assert event["edit_count"] == 2


async def test_dry_run_stores_nothing(supply: Stack) -> None:
    before = await head(supply)
    counts = [await supply.count(t) for t in ("revisions", "history", "outbox", "idempotency_receipts")]
    response = await supply.http.post(
        EXECUTE.format("update_supplier"),
        json={"parameters": {"key": "S-1001", "risk_score": 75}, "dry_run": True},
        headers={**supply.admin, "Idempotency-Key": "dry-1"},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["dry_run"] is True and body["valid"] is True and body["violations"] == []
    assert body["edits"] == [
        {"op": "update_record", "kind": "Supplier", "key": "S-1001", "values": {"risk_score": "75"}}
    ]
    assert body["changes"][0]["attributes"] == ["risk_score"]
    assert await head(supply) == before
    assert [
        await supply.count(t) for t in ("revisions", "history", "outbox", "idempotency_receipts")
    ] == counts
    record = (await supply.http.get(S1001, headers=supply.admin)).json()
    assert record["values"]["risk_score"] == "90"


async def test_dry_run_lists_violations(supply: Stack) -> None:
    response = await supply.http.post(
        EXECUTE.format("update_supplier"),
        json={"parameters": {"key": "S-9999", "risk_score": 10}, "dry_run": True},
        headers=supply.admin,
    )
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is False
    assert body["violations"][0]["rule"] == "record.not_found"


async def test_idempotent_replay_and_key_reuse(supply: Stack) -> None:
    request = {"parameters": {"key": "S-1003", "risk_score": 33}}
    headers = {**supply.admin, "Idempotency-Key": "risk-review-S-1003"}
    first = await supply.http.post(EXECUTE.format("update_supplier"), json=request, headers=headers)
    assert first.status_code == 200
    assert "Idempotent-Replayed" not in first.headers
    revisions = await supply.count("revisions")
    again = await supply.http.post(EXECUTE.format("update_supplier"), json=request, headers=headers)
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["revision"] == first.json()["revision"]
    assert again.json()["replayed"] is True
    assert await supply.count("revisions") == revisions
    # the key in the body works the same way
    member = await supply.http.post(
        EXECUTE.format("update_supplier"),
        json={**request, "idempotency_key": "risk-review-S-1003"},
        headers=supply.admin,
    )
    assert member.headers["Idempotent-Replayed"] == "true"
    reused = await supply.http.post(
        EXECUTE.format("update_supplier"),
        json={"parameters": {"key": "S-1003", "risk_score": 34}},
        headers=headers,
    )
    assert reused.status_code == 422
    assert reused.json()["type"].endswith("/idempotency-key-reused")
    assert await supply.count("revisions") == revisions


async def test_stale_expected_head_is_409_and_changes_nothing(supply: Stack) -> None:
    first_revision = (
        await supply.http.get(
            "/api/v1/domains/supply/kinds/Supplier/records/S-1001?lineage=true", headers=supply.admin
        )
    ).json()["lineage"]["city"]["revision"]
    before = await head(supply)
    response = await supply.http.post(
        EXECUTE.format("update_supplier"),
        json={"parameters": {"key": "S-1001", "risk_score": 75}, "expected_head": first_revision},
        headers=supply.admin,
    )
    assert response.status_code == 409
    problem = response.json()
    assert problem["type"].endswith("/stale-head")
    assert problem["head"] == before
    assert await head(supply) == before


async def test_nothing_to_change_commits_no_revision(supply: Stack) -> None:
    revisions = await supply.count("revisions")
    response = await supply.http.post(
        EXECUTE.format("update_supplier"),
        json={"parameters": {"key": "S-1001", "risk_score": 90}},
        headers=supply.admin,
    )
    assert response.status_code == 200
    assert response.json()["status"] == "committed"
    assert response.json()["revision"] is None
    assert response.json()["changes"] == []
    assert await supply.count("revisions") == revisions


async def test_parameters_are_validated_with_every_issue(supply: Stack) -> None:
    response = await supply.http.post(
        EXECUTE.format("update_supplier"),
        json={"parameters": {"risk_score": 150, "colour": "red"}},
        headers=supply.admin,
    )
    assert response.status_code == 422
    problem = response.json()
    paths = {(i["path"], i["rule"]) for i in problem["issues"]}
    assert ("parameters.key", "parameter.required") in paths
    assert ("parameters.risk_score", "value.max") in paths
    assert ("parameters.colour", "parameter.unknown") in paths


async def test_concurrent_operations_each_get_their_own_revision_in_a_chain(supply: Stack) -> None:
    async def one(i: int) -> str:
        response = await supply.http.post(
            EXECUTE.format("update_supplier"),
            json={"parameters": {"key": f"S-10{10 + i:02d}", "risk_score": i}},
            headers=supply.admin,
        )
        assert response.status_code == 200, response.text
        return str(response.json()["revision"])

    revisions = await asyncio.gather(*[one(i) for i in range(16)])
    assert len(set(revisions)) == 16
    from sqlalchemy import text

    async with supply.rt.db.engine.connect() as conn:
        rows = (
            await conn.execute(text("select id, parents, generation from revisions order by generation"))
        ).all()
    generations = [row.generation for row in rows]
    assert generations == list(range(1, len(rows) + 1))
    for previous, row in zip(rows, rows[1:], strict=False):
        assert row.parents == [previous.id]
    assert rows[-1].id == await head(supply)


async def test_concurrent_commits_to_one_record_keep_the_last_state_and_every_change(
    supply: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    async def one(i: int) -> dict:
        response = await supply.http.post(
            EXECUTE.format("update_supplier"),
            json={"parameters": {"key": "S-1002", "risk_score": i}},
            headers=supply.admin,
        )
        assert response.status_code == 200, response.text
        return response.json()

    results = await asyncio.gather(*[one(i) for i in range(1, 13)])
    committed = [r for r in results if r["revision"]]
    from sqlalchemy import text

    async with supply.rt.db.engine.connect() as conn:
        history = (
            await conn.execute(
                text(
                    "select h.after->>'risk_score' from history h where h.key = 'S-1002' and h.name = 'Supplier' "
                    "order by h.generation"
                )
            )
        ).all()
        last = await conn.scalar(text("select id from revisions order by generation desc limit 1"))
    record = (
        await supply.http.get("/api/v1/domains/supply/kinds/Supplier/records/S-1002", headers=supply.admin)
    ).json()
    # Every commit that changed the Record is in its history, in order, and the head holds the last one.
    assert len(history) == 1 + len(committed)
    assert record["values"]["risk_score"] == history[-1][0]
    assert record["revision"] == last
    at_head = (
        await supply.http.get(
            f"/api/v1/domains/supply/kinds/Supplier/records/S-1002?at={last}", headers=supply.admin
        )
    ).json()
    assert at_head["values"] == record["values"], "the snapshot rebuilt from history agrees with the head"
    assert "retrying one commit at a time" not in caplog.text, "groups wrote their commits in one go"


async def test_create_and_delete_in_one_group_agree_with_history(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    schema = {
        "kinds": {
            "Note": {"key": ["id"], "attributes": {"id": {"type": "string"}, "text": {"type": "string"}}}
        },
        "operations": {
            "put_note": {
                "parameters": {"id": {"type": "string", "required": True}, "text": {"type": "string"}},
                "edits": [{"op": "upsert_record", "kind": "Note", "key": "$id", "values": {"text": "$text"}}],
            },
            "drop_note": {
                "parameters": {"id": {"type": "string", "required": True}},
                "edits": [{"op": "delete_record", "kind": "Note", "key": "$id"}],
            },
        },
    }
    created = await stack.http.post(
        "/api/v1/domains", json={"name": "notes", "schema": schema}, headers=stack.admin
    )
    assert created.status_code == 201
    base = "/api/v1/domains/notes/operations"

    async def call(op: str, params: dict) -> int:
        response = await stack.http.post(
            f"{base}/{op}/execute", json={"parameters": params}, headers=stack.admin
        )
        return response.status_code

    await call("put_note", {"id": "k1", "text": "one"})
    statuses = await asyncio.gather(
        call("put_note", {"id": "k2", "text": "two"}),
        call("drop_note", {"id": "k2"}),
        call("put_note", {"id": "k3", "text": "three"}),
        call("drop_note", {"id": "k3"}),
        call("drop_note", {"id": "k1"}),
        call("put_note", {"id": "k1", "text": "again"}),
    )
    assert all(s in (200, 422) for s in statuses)
    from sqlalchemy import text

    async with stack.rt.db.engine.connect() as conn:
        head = await conn.scalar(text("select head from branches where name = 'main'"))
        materialised = {
            row.key: row.values
            for row in await conn.execute(
                text("select key, values from records where kind = 'Note' order by key")
            )
        }
    for key in ("k1", "k2", "k3"):
        response = await stack.http.get(
            f"/api/v1/domains/notes/kinds/Note/records/{key}?at={head}", headers=stack.admin
        )
        if key in materialised:
            assert response.status_code == 200 and response.json()["values"] == materialised[key]
        else:
            assert response.status_code == 404
    assert "retrying one commit at a time" not in caplog.text


async def test_two_keepers_writing_one_branch_see_each_others_commits(supply: Stack) -> None:
    """Two keeper processes (two runtimes, two committers) on one database: the branch lock orders
    their groups, and a group that waited for the other's commit reads what that commit wrote."""
    from lorebase_keeper import operations
    from lorebase_keeper.runtime import Runtime

    from lorebase.config import load_settings
    from lorebase.contract.writes import Execution
    from lorebase_store import Database

    other_db = Database.connect(supply.database_url, pool_size=4)
    other = Runtime.create(other_db, load_settings({"LOREBASE_DATABASE_URL": supply.database_url}))
    try:
        runtimes = [supply.rt, other]
        domain = [await rt.domains.get("supply") for rt in runtimes]
        from lorebase_keeper.access import ADMIN_PRINCIPAL, Principal

        admin = Principal(ADMIN_PRINCIPAL, "user", "Administrator")
        access = [await rt.auth.access(admin, d.id) for rt, d in zip(runtimes, domain, strict=True)]

        async def one(i: int) -> None:
            side = i % 2
            await operations.execute(
                runtimes[side],
                access[side],
                domain[side],
                "update_supplier",
                Execution(parameters={"key": "S-1003", "risk_score": i}),
                "",
            )

        await asyncio.gather(*[one(i) for i in range(1, 25)])
    finally:
        await other_db.close()
    from sqlalchemy import text

    async with supply.rt.db.engine.connect() as conn:
        rows = (
            await conn.execute(
                text(
                    "select before->>'risk_score' as before, after->>'risk_score' as after from history "
                    "where name = 'Supplier' and key = 'S-1003' order by generation"
                )
            )
        ).all()
        stored = await conn.scalar(text("select values->>'risk_score' from records where key = 'S-1003'"))
        generations = [
            r[0] for r in await conn.execute(text("select generation from revisions order by generation"))
        ]
    assert generations == list(range(1, len(generations) + 1)), "one chain, no generation twice"
    for previous, row in zip(rows, rows[1:], strict=False):
        assert row.before == previous.after, "each change starts from the state the one before it left"
    assert stored == rows[-1].after


async def test_writes_on_several_branches_share_one_transaction_and_a_refused_one_changes_nothing(
    supply: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    """The commits of a Domain queued while its group runs go in the next group whatever their
    branches: one transaction, each branch with its own Revision and head; a stale expected head
    among them is refused alone, an idempotency key one branch's commit took is held for a later
    branch of the same group, and the writes of a branch another transaction holds wait in the
    branch's own queue instead of holding up the others or the Domain's next writes."""
    from sqlalchemy import text

    names = ("g1", "g2", "g3", "g4", "g5")
    for name in names:
        await work_branch(supply, name)
    heads = {name: await head(supply, name) for name in names}
    domain = await supply.rt.domains.get("supply")

    async def execute(branch: str, risk: int, **more: object) -> httpx.Response:
        body = {"parameters": {"key": "S-1004", "risk_score": risk}, "branch": branch, **more}
        return await supply.http.post(EXECUTE.format("update_supplier"), json=body, headers=supply.admin)

    engine = supply.rt.db.engine
    waiting_for_a_lock = text(
        "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()"
    )
    async with engine.connect() as busy, engine.connect() as watcher:
        watching = await watcher.execution_options(isolation_level="AUTOCOMMIT")

        async def until_a_group_waits_for_a_lock(writes: list[asyncio.Future[httpx.Response]]) -> None:
            for _ in range(1000):
                if await watching.scalar(waiting_for_a_lock) or any(w.done() for w in writes):
                    return
                await asyncio.sleep(0.01)

        # Hold the Domain's group with a commit on g1 whose work waits; the writes sent meanwhile
        # queue for the next group. g5's row stays held (a merge, an import) all along.
        await busy.execute(text("select 1 from branches where name = 'g5' for update"))
        release = asyncio.Event()

        async def hold(view: Any, row: Any, at: Any) -> tuple[None, Any, None]:
            await release.wait()
            return None, at, None

        first = asyncio.ensure_future(supply.rt.committer.run(domain.id, "g1", hold))
        rest = [
            asyncio.ensure_future(execute("g2", 42, idempotency_key="shared-key")),
            asyncio.ensure_future(execute("g3", 43, expected_head="0" * 64)),
            asyncio.ensure_future(execute("g4", 44)),
            asyncio.ensure_future(execute("g4", 45, idempotency_key="shared-key")),
        ]
        held = asyncio.ensure_future(execute("g5", 46))
        for _ in range(1000):
            if supply.rt.committer.waiting(domain.id) == len(rest) + 1:
                break
            await asyncio.sleep(0.01)
        assert supply.rt.committer.waiting(domain.id) == len(rest) + 1
        release.set()
        await first
        # Not held up by g5's branch (a wait here would outlast the bound: the lock is still held).
        g2, g3, g4, reused = await asyncio.wait_for(asyncio.gather(*rest), 120)
        await until_a_group_waits_for_a_lock([held])
        assert not held.done(), "g5's write waits for its branch in the branch's own queue"
        # And the Domain's next writes do not queue behind it.
        assert (await asyncio.wait_for(execute("g1", 41), 120)).status_code == 200
        assert not held.done()
        await busy.rollback()
        assert (await held).status_code == 200
    assert g2.status_code == 200 and g4.status_code == 200, (g2.text, g4.text)
    assert g3.status_code == 409 and g3.json()["type"].endswith("/stale-head")
    assert reused.status_code == 422 and reused.json()["type"].endswith("/idempotency-key-reused")
    assert await head(supply, "g3") == heads["g3"], "the refused write moved nothing"
    async with engine.connect() as conn:
        written = {
            row.branch: row
            for row in await conn.execute(
                text(
                    "select r.branch, r.id, r.parents, r.xmin::text as xid, b.head from revisions r "
                    "join branches b on b.name = r.branch where r.branch like 'g_' and r.generation = "
                    "(select max(generation) from revisions v where v.branch = r.branch)"
                )
            )
        }
        events = (
            await conn.execute(
                text("select branch, revision from outbox where branch like 'g_' order by sequence")
            )
        ).all()
        receipts = await conn.scalar(
            text("select count(*) from idempotency_receipts where key = 'shared-key'")
        )
    assert set(written) == {"g1", "g2", "g4", "g5"}
    assert written["g2"].xid == written["g4"].xid, "g2 and g4 committed in one transaction"
    assert len({written["g1"].xid, written["g2"].xid, written["g5"].xid}) == 3
    for name, response in (("g2", g2), ("g4", g4)):
        assert written[name].head == written[name].id == response.json()["revision"]
        assert written[name].parents == [heads[name]], "each branch's Revision follows its own head"
        assert (name, written[name].id) in events
    assert receipts == 1
    assert "retrying one commit at a time" not in caplog.text
