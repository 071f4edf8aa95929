"""The authorization matrix: every operation of /openapi.json, called by six callers, aimed at canaries.

A Domain `canary` holds a visible Kind (Vendor, with a pii Attribute) and a hidden one (Zeppelin,
linked to Vendors by `moors_at`, summed into Vendor by a derived Attribute), each with names, keys,
values and Link attributes no other data in the test holds; a branch and a Proposal that change a
Zeppelin, a reconciliation candidate of two Zeppelins, a tag, a grant narrowed to Zeppelin, and a
memory record hold more. Six callers then make every call of the contract (`PROBES`, one request
template per endpoint, aimed at a canary where the call names something, and the same request
naming something absent where there is one):

- the admin principal; a Domain admin narrowed to Vendor; an editor narrowed to Vendor; a viewer of
  every Kind without clearances; a principal with a key and no grant; no key at all.

Asserted, for every call: no 5xx; no canary string the caller may not read in the answer's body or
headers (a name the caller sent itself excepted: an echo tells nothing); the status its endpoint's
policy documents (401 without a key, 403 or 404 where the policy refuses the caller); and the same
status and problem code for the hidden target and the absent one (no existence oracle). After every
caller but the admin has made its calls, the canaries are exactly as they were: no write reached
them. Each caller's agent session is read back last: the steps it recorded leak nothing either.

An endpoint without a probe fails the test: a new endpoint is in the matrix from its first commit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
import pytest_asyncio
from lorebase_scribe.reconciliation import reconcile

from lorebase.contract import BY_NAME, ENDPOINTS
from lorebase.contract.policy import ROLES, Permission, Scope, Who
from tests.integration.conftest import ADMIN_KEY, Stack, open_stack
from tests.integration.feed_stack import Feed, running_feed

D = "/api/v1/domains/canary"
SCOPE = {"project_id": "matrix", "mission_id": None, "agent_id": "agent", "visibility": "shared"}
GRANT_SCOPE = {"project_id": "matrix", "mission_id": None, "agent_id": "agent"}

SCHEMA: dict[str, Any] = {
    "description": "The authorization matrix's Domain.",
    "kinds": {
        "Vendor": {
            "key": ["code"],
            "title": "name",
            "attributes": {
                "code": {"type": "string", "required": True},
                "name": {"type": "string", "required": True},
                "tax_id": {"type": "string", "sensitivity": ["pii"]},
                "rating": {"type": "integer", "min": 0, "max": 10},
                "zeppelins_moored": {"type": "integer", "derived": "count(zq_moorings)"},
            },
        },
        "Zeppelin": {
            "key": ["zq_code"],
            "title": "zq_name",
            "attributes": {
                "zq_code": {"type": "string", "required": True},
                "zq_name": {"type": "string", "required": True},
                "zq_secret": {"type": "text"},
            },
        },
    },
    "relations": {
        "moors_at": {
            "from": "Zeppelin",
            "to": "Vendor",
            "inverse": "zq_moorings",
            "cardinality": "many_to_many",
            "attributes": {"zq_note": {"type": "string"}},
        }
    },
    "operations": {
        "rate_vendor": {
            "description": "Rate a Vendor.",
            "parameters": {
                "code": {"type": "string", "required": True},
                "rating": {"type": "integer", "min": 0, "max": 10},
            },
            "edits": [
                {"op": "update_record", "kind": "Vendor", "key": "$code", "values": {"rating": "$rating"}}
            ],
        },
        "commission_zeppelin": {
            "description": "Commission a Zeppelin at a Vendor.",
            "parameters": {
                "zq_code": {"type": "string", "required": True},
                "vendor": {"type": "string", "required": True},
            },
            "edits": [
                {
                    "op": "upsert_record",
                    "kind": "Zeppelin",
                    "key": "$zq_code",
                    "values": {"zq_code": "$zq_code", "zq_name": "Zqcanary Airship"},
                },
                {"op": "upsert_link", "relation": "moors_at", "from": "$zq_code", "to": "$vendor"},
            ],
        },
    },
}

# What each caller may not read: strings of the hidden Kind, the pii value, anything of the Domain,
# and the memory record's content (nobody but the admin holds a memory grant).
HIDDEN = ("zeppelin", "zq_", "zq-canary", "zqcanary", "moors_at")
PII = ("piicanary4242",)
VISIBLE = ("vndcanary", "v-1")
MEMORY = ("memcanary",)
CALLERS = ("admin", "narrow_admin", "narrow_editor", "viewer", "no_grant", "no_key")
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "admin": (),
    "narrow_admin": HIDDEN + MEMORY,
    "narrow_editor": HIDDEN + PII + MEMORY,
    "viewer": PII + MEMORY,
    "no_grant": HIDDEN + PII + VISIBLE + MEMORY,
    "no_key": HIDDEN + PII + VISIBLE + MEMORY,
}
# What each caller's grant in `canary` allows: its role and whether it is narrowed to Vendor.
GRANTS: dict[str, tuple[str, bool] | None] = {
    "admin": ("admin", False),
    "narrow_admin": ("admin", True),
    "narrow_editor": ("editor", True),
    "viewer": ("viewer", False),
    "no_grant": None,
    "no_key": None,
}


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    params: dict[str, str] = field(default_factory=dict)
    body: Any = None


NARROWED = frozenset({"narrow_admin", "narrow_editor", "no_grant"})  # who may not read Zeppelins
ONLY_NO_GRANT = frozenset({"no_grant"})  # a tag or the Domain itself: hidden from nobody with a grant


@dataclass(frozen=True)
class Probe:
    """One endpoint's call aimed at a canary, and (when it names something) the same call naming
    something absent; the two must answer alike for the callers the canary is hidden from."""

    hidden: Request
    absent: Request | None = None
    hidden_from: frozenset[str] = NARROWED


@dataclass
class Planted:
    """What the fixture planted, by name, for the request templates."""

    ids: dict[str, str] = field(default_factory=dict)


def _probes(p: Planted) -> dict[str, Probe]:
    """Request templates; `{caller}` is replaced by the caller's name (names it creates)."""
    i = p.ids
    rec = D + "/kinds/Zeppelin/records/ZQ-CANARY-1"
    nope = D + "/kinds/Gizmo/records/ZQ-CANARY-1"
    mem = "/api/v1/memory"
    command = {"idempotency_key": "mx-{caller}"}
    return {
        "health": Probe(Request("GET", "/health")),
        "create_principal": Probe(
            Request("POST", "/api/v1/principals", body={"id": "usr_mx_new_{caller_}", "type": "user"})
        ),
        "create_key": Probe(Request("POST", "/api/v1/principals/usr_mx_target/keys")),
        "revoke_key": Probe(Request("DELETE", "/api/v1/principals/usr_mx_target/keys/key_not_there")),
        "add_session_note": Probe(
            Request("POST", "/api/v1/sessions/ses-mx-{caller}/notes", body={"text": "note"})
        ),
        "list_sessions": Probe(Request("GET", "/api/v1/sessions")),
        "get_session": Probe(Request("GET", "/api/v1/sessions/ses-mx-{caller}")),
        "list_domains": Probe(Request("GET", "/api/v1/domains")),
        "create_domain": Probe(
            Request("POST", "/api/v1/domains", body={"name": "mx-{caller}", "schema": {"kinds": {}}})
        ),
        "get_domain": Probe(Request("GET", D), Request("GET", "/api/v1/domains/nowhere"), ONLY_NO_GRANT),
        "create_grant": Probe(
            Request(
                "POST",
                D + "/grants",
                body={"principal": "usr_mx_target", "role": "viewer", "kinds": ["Zeppelin"]},
            ),
            Request(
                "POST",
                D + "/grants",
                body={"principal": "usr_mx_target", "role": "viewer", "kinds": ["Gizmo"]},
            ),
        ),
        "delete_grant": Probe(
            Request("DELETE", D + "/grants/" + i["grant"]), Request("DELETE", D + "/grants/grt_absent")
        ),
        "changes": Probe(
            Request("GET", D + "/branches/main/changes", {"kinds": "Zeppelin"}),
            Request("GET", D + "/branches/main/changes", {"kinds": "Gizmo"}),
        ),
        "events": Probe(Request("GET", D + "/branches/main/events", {"last_event_id": "0"})),
        "create_webhook": Probe(
            Request("POST", D + "/webhooks", body={"url": "https://1.1.1.1/{caller}", "clearances": ["pii"]})
        ),
        "list_webhooks": Probe(Request("GET", D + "/webhooks")),
        "delete_webhook": Probe(Request("DELETE", D + "/webhooks/whk_absent")),
        "update_webhook": Probe(Request("PATCH", D + "/webhooks/whk_absent", body={"clearances": ["pii"]})),
        "get_schema": Probe(Request("GET", D + "/schema")),
        "get_revision": Probe(
            Request("GET", D + "/revisions/" + i["zeppelin_revision"]),
            Request("GET", D + "/revisions/" + "0" * 64),
        ),
        "change_schema": Probe(
            Request(
                "POST",
                D + "/branches/main/schema/changes",
                body={
                    "changes": [
                        {"op": "rename_attribute", "kind": "Zeppelin", "attribute": "zq_secret", "to": "zq_x"}
                    ],
                    "dry_run": True,
                },
            ),
            Request(
                "POST",
                D + "/branches/main/schema/changes",
                body={
                    "changes": [
                        {"op": "rename_attribute", "kind": "Gizmo", "attribute": "zq_secret", "to": "zq_x"}
                    ],
                    "dry_run": True,
                },
            ),
        ),
        "get_schema_change": Probe(
            Request("GET", D + "/schema/changes/" + i["schema_job"]),
            Request("GET", D + "/schema/changes/scj_absent"),
            ONLY_NO_GRANT,
        ),
        "list_schema_changes": Probe(Request("GET", D + "/schema/changes")),
        "create_branch": Probe(
            Request("POST", D + "/branches", body={"name": "mx-{caller}", "from": "main"})
        ),
        "list_branches": Probe(Request("GET", D + "/branches")),
        "get_branch": Probe(Request("GET", D + "/branches/canary-work")),
        "update_branch": Probe(Request("PATCH", D + "/branches/canary-work", body={"required_approvals": 1})),
        "delete_branch": Probe(Request("DELETE", D + "/branches/mx-gone")),
        "create_tag": Probe(
            Request("POST", D + "/tags", body={"name": "mx-{caller}", "revision": i["zeppelin_revision"]})
        ),
        "list_tags": Probe(Request("GET", D + "/tags")),
        "get_tag": Probe(
            Request("GET", D + "/tags/mx-tag"), Request("GET", D + "/tags/mx-no-tag"), ONLY_NO_GRANT
        ),
        "delete_tag": Probe(
            Request("DELETE", D + "/tags/mx-tag-{caller}"),
            Request("DELETE", D + "/tags/mx-no-tag"),
            ONLY_NO_GRANT,
        ),
        "create_proposal": Probe(
            Request(
                "POST", D + "/proposals", body={"source": "canary-other", "target": "main", "title": "Mx"}
            )
        ),
        "list_proposals": Probe(Request("GET", D + "/proposals")),
        "get_proposal": Probe(
            Request("GET", f"{D}/proposals/{i['proposal']}"), Request("GET", D + "/proposals/prp_absent")
        ),
        "review_proposal": Probe(
            Request("POST", f"{D}/proposals/{i['proposal']}/reviews", body={"decision": "request_changes"}),
            Request("POST", D + "/proposals/prp_absent/reviews", body={"decision": "request_changes"}),
        ),
        "merge_proposal": Probe(
            Request("POST", f"{D}/proposals/{i['proposal']}/merge"),
            Request("POST", D + "/proposals/prp_absent/merge"),
        ),
        "close_proposal": Probe(
            Request("POST", f"{D}/proposals/{i['proposal']}/close"),
            Request("POST", D + "/proposals/prp_absent/close"),
        ),
        "list_conflicts": Probe(
            Request("GET", f"{D}/proposals/{i['proposal']}/conflicts"),
            Request("GET", D + "/proposals/prp_absent/conflicts"),
        ),
        "resolve_conflict": Probe(
            Request(
                "POST",
                f"{D}/proposals/{i['proposal']}/conflicts/cfl_absent/resolve",
                body={"resolution": "ours"},
            ),
            Request(
                "POST", D + "/proposals/prp_absent/conflicts/cfl_absent/resolve", body={"resolution": "ours"}
            ),
        ),
        "execute_operation": Probe(
            Request(
                "POST",
                D + "/operations/commission_zeppelin/execute",
                body={"parameters": {"zq_code": "ZQ-CANARY-1", "vendor": "V-2"}},
            ),
            Request(
                "POST",
                D + "/operations/commission_gizmo/execute",
                body={"parameters": {"zq_code": "ZQ-CANARY-1", "vendor": "V-2"}},
            ),
        ),
        "import_data": Probe(
            Request(
                "POST",
                D + "/imports",
                body={
                    "records": [{"kind": "Zeppelin", "values": {"zq_code": "ZQ-CANARY-1", "zq_name": "x"}}]
                },
            ),
            Request(
                "POST",
                D + "/imports",
                body={"records": [{"kind": "Gizmo", "values": {"zq_code": "ZQ-CANARY-1", "zq_name": "x"}}]},
            ),
        ),
        "sync_source": Probe(
            Request("POST", D + "/sources/zq_source/sync", body={"records": []}),
            Request("POST", D + "/sources/gizmo_source/sync", body={"records": []}),
        ),
        "set_embedding": Probe(
            Request("PUT", rec + "/embedding", body={"vector": [0.5, 0.5], "model": "m"}),
            Request("PUT", nope + "/embedding", body={"vector": [0.5, 0.5], "model": "m"}),
        ),
        "create_erasure": Probe(
            Request("POST", D + "/erasures", body={"records": ["Zeppelin/ZQ-CANARY-1"], "reason": "probe"}),
            Request("POST", D + "/erasures", body={"records": ["Gizmo/ZQ-CANARY-1"], "reason": "probe"}),
        ),
        "list_erasures": Probe(Request("GET", D + "/erasures")),
        "list_suggestions": Probe(Request("GET", D + "/suggestions")),
        "accept_suggestion": Probe(Request("POST", D + "/suggestions/sug_absent/accept")),
        "dismiss_suggestion": Probe(Request("POST", D + "/suggestions/sug_absent/dismiss")),
        "list_reconciliation": Probe(
            Request("GET", D + "/reconciliation", {"kind": "Zeppelin"}),
            Request("GET", D + "/reconciliation", {"kind": "Gizmo"}),
        ),
        "get_reconciliation": Probe(
            Request("GET", f"{D}/reconciliation/{i['candidate']}"),
            Request("GET", D + "/reconciliation/rcn_absent"),
        ),
        # Two Vendors the narrowed callers may read, one moored to a Zeppelin: merging them would move
        # a Link they may not see (hole 2 of the second probe).
        "accept_reconciliation": Probe(
            Request("POST", f"{D}/reconciliation/{i['vendor_candidate']}/accept", body={"keep": "V-3"}),
            Request("POST", D + "/reconciliation/rcn_absent/accept", body={"keep": "V-3"}),
            ONLY_NO_GRANT,
        ),
        "dismiss_reconciliation": Probe(
            Request("POST", f"{D}/reconciliation/{i['candidate']}/dismiss", body={"reason": "probe"}),
            Request("POST", D + "/reconciliation/rcn_absent/dismiss", body={"reason": "probe"}),
        ),
        "scan_reconciliation": Probe(Request("POST", D + "/reconciliation/scan")),
        "get_record": Probe(Request("GET", rec, {"links": "true", "lineage": "true"}), Request("GET", nope)),
        "list_records": Probe(
            Request("GET", D + "/kinds/Zeppelin/records"), Request("GET", D + "/kinds/Gizmo/records")
        ),
        "list_links": Probe(
            Request("GET", D + "/relations/moors_at/links"), Request("GET", D + "/relations/gizmos/links")
        ),
        "get_links": Probe(
            Request("GET", D + "/kinds/Vendor/records/V-1/links/zq_moorings"),
            Request("GET", D + "/kinds/Vendor/records/V-1/links/gizmos"),
        ),
        "get_history": Probe(
            Request("GET", rec + "/history", {"values": "true"}), Request("GET", nope + "/history")
        ),
        "get_lineage": Probe(Request("GET", rec + "/lineage"), Request("GET", nope + "/lineage")),
        "explain": Probe(Request("GET", rec + "/explain"), Request("GET", nope + "/explain")),
        "diff": Probe(
            Request("GET", D + "/diff", {"from": i["import_revision"], "to": i["zeppelin_revision"]})
        ),
        "get_health": Probe(Request("GET", D + "/health")),
        "get_kind_health": Probe(
            Request("GET", D + "/kinds/Zeppelin/health"), Request("GET", D + "/kinds/Gizmo/health")
        ),
        "context": Probe(
            Request("POST", D + "/context", body={"refs": ["Zeppelin/ZQ-CANARY-1"]}),
            Request("POST", D + "/context", body={"refs": ["Gizmo/ZQ-CANARY-1"]}),
        ),
        "neighborhood": Probe(
            Request("POST", D + "/neighborhood", body={"refs": ["Vendor/V-1"], "depth": 2})
        ),
        "traverse": Probe(
            Request("POST", D + "/traverse", body={"from": ["Vendor/V-1"], "path": ["zq_moorings"]}),
            Request("POST", D + "/traverse", body={"from": ["Vendor/V-1"], "path": ["gizmos"]}),
        ),
        "search": Probe(Request("POST", D + "/search", body={"text": "canary"})),
        "resolve": Probe(Request("POST", D + "/resolve", body={"text": "vendor canary airship"})),
        "query": Probe(
            Request("POST", D + "/query", body={"kind": "Zeppelin"}),
            Request("POST", D + "/query", body={"kind": "Gizmo"}),
        ),
        "create_memory": Probe(
            Request("POST", mem + "/records", body={**command, "scope": SCOPE, "content": "x"})
        ),
        "derive_memory": Probe(
            Request(
                "POST",
                mem + "/derivations",
                body={**command, "scope": SCOPE, "content": "x", "derived_from": [i["memory"]]},
            )
        ),
        "update_memory": Probe(
            Request(
                "PATCH",
                f"{mem}/records/{i['memory']}",
                body={**command, "record_revision": 1, "content": "x"},
            )
        ),
        "delete_memory": Probe(Request("DELETE", f"{mem}/records/{i['memory']}", body=command)),
        "attach_memory_embedding": Probe(
            Request(
                "PUT",
                f"{mem}/records/{i['memory']}/embedding",
                body={**command, "record_revision": 1, "model": "m", "vector": [1.0]},
            )
        ),
        "review_memory": Probe(
            Request(
                "POST",
                f"{mem}/records/{i['memory']}/reviews",
                body={**command, "decision": "approve", "reason": "ok"},
            )
        ),
        "get_memory": Probe(Request("GET", f"{mem}/records/{i['memory']}")),
        "query_memory": Probe(Request("POST", mem + "/query", body={"scope": SCOPE})),
        "create_memory_grant": Probe(
            Request(
                "POST",
                mem + "/grants",
                body={"principal": "usr_mx_target", "scope": GRANT_SCOPE, "capabilities": ["memory_read"]},
            )
        ),
        "delete_memory_grant": Probe(Request("DELETE", mem + "/grants/mgr_absent")),
        "read_memory_changes": Probe(
            Request("POST", mem + "/changes", body={"contract_version": 1, "scope": SCOPE})
        ),
        "save_memory_checkpoint": Probe(
            Request(
                "PUT",
                mem + "/checkpoints/mx-{caller}",
                body={
                    "contract_version": 1,
                    "scope": SCOPE,
                    "cursor": orjson.loads(i["cursor"]),
                    "revision": 0,
                },
            )
        ),
        "get_memory_checkpoint": Probe(Request("GET", mem + "/checkpoints/mx-{caller}")),
        "list_memory_checkpoints": Probe(Request("GET", mem + "/checkpoints")),
        "delete_memory_checkpoint": Probe(Request("DELETE", mem + "/checkpoints/mx-{caller}")),
        "start_web_session": Probe(Request("POST", "/api/v1/web/session", body={"key": "{key}"})),
        "get_web_session": Probe(Request("GET", "/api/v1/web/session")),
        "end_web_session": Probe(Request("DELETE", "/api/v1/web/session")),
        # No identity provider is offered to the web app here: the list is empty, the sign-in 404.
        "list_identity_providers": Probe(Request("GET", "/api/v1/web/identity-providers")),
        "start_oidc_sign_in": Probe(Request("GET", "/api/v1/web/oidc/corp/start")),
        "finish_oidc_sign_in": Probe(
            Request("GET", "/api/v1/web/oidc/callback", params={"code": "c", "state": "s"})
        ),
    }


def _fill(value: Any, caller: str, key: str) -> Any:
    if isinstance(value, Request):
        return Request(*(_fill(getattr(value, f), caller, key) for f in ("method", "path", "params", "body")))
    if isinstance(value, str):
        hyphened = caller.replace("_", "-")
        return value.replace("{caller}", hyphened).replace("{caller_}", caller).replace("{key}", key)
    if isinstance(value, dict):
        return {k: _fill(v, caller, key) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, caller, key) for v in value]
    return value


async def _ok(response: Any) -> Any:
    assert response.status_code < 300, response.text
    return response.json() if response.content else None


@dataclass
class Matrix:
    stack: Stack
    feed: Feed
    planted: Planted
    headers: dict[str, dict[str, str]]
    keys: dict[str, str]


async def _plant(stack: Stack) -> Planted:
    """The canary Domain, its callers and everything the probes name."""
    http, admin = stack.http, stack.admin
    await _ok(await http.post("/api/v1/domains", json={"name": "canary", "schema": SCHEMA}, headers=admin))
    await _ok(await http.patch(D + "/branches/main", json={"protected": False}, headers=admin))
    records = [
        {
            "kind": "Vendor",
            "values": {"code": "V-1", "name": "Vndcanary Ltd", "tax_id": "PIICANARY4242", "rating": 3},
        },
        {"kind": "Vendor", "values": {"code": "V-2", "name": "Plain Supplies", "rating": 5}},
        {"kind": "Vendor", "values": {"code": "V-3", "name": "Vndcanary Ltd", "rating": 4}},
        {
            "kind": "Zeppelin",
            "values": {
                "zq_code": "ZQ-CANARY-1",
                "zq_name": "Zqcanary Airship",
                "zq_secret": "ZQCANARYSECRET",
            },
        },
        {
            "kind": "Zeppelin",
            "values": {
                "zq_code": "ZQ-CANARY-2",
                "zq_name": "Zqcanary Airship",
                "zq_secret": "ZQCANARYSECRET",
            },
        },
    ]
    links = [
        {"relation": "moors_at", "from": "ZQ-CANARY-1", "to": "V-1", "values": {"zq_note": "ZQCANARYNOTE"}}
    ]
    imported = await _ok(
        await http.post(
            D + "/imports", json={"source": "canary", "records": records, "links": links}, headers=admin
        )
    )
    planted = Planted({"import_revision": imported["revision"]})
    changed = await _ok(
        await http.post(
            D + "/operations/commission_zeppelin/execute",
            json={"parameters": {"zq_code": "ZQ-CANARY-3", "vendor": "V-1"}},
            headers=admin,
        )
    )
    planted.ids["zeppelin_revision"] = changed["revision"]
    for name in ("canary-work", "canary-other"):
        await _ok(await http.post(D + "/branches", json={"name": name, "from": "main"}, headers=admin))
        await _ok(
            await http.post(
                D + "/operations/commission_zeppelin/execute",
                json={"parameters": {"zq_code": "ZQ-CANARY-9", "vendor": "V-2"}, "branch": name},
                headers=admin,
            )
        )
    proposal = await _ok(
        await http.post(
            D + "/proposals", json={"source": "canary-work", "title": "Zqcanary moorings"}, headers=admin
        )
    )
    planted.ids["proposal"] = proposal["id"]
    await reconcile(stack.rt.db, stack.rt.settings)
    candidates = (await _ok(await http.get(D + "/reconciliation", headers=admin)))["candidates"]
    by_kind = {c["kind"]: c["id"] for c in candidates}
    planted.ids["candidate"], planted.ids["vendor_candidate"] = by_kind["Zeppelin"], by_kind["Vendor"]
    head = changed["revision"]
    for tag in ("mx-tag", *(f"mx-tag-{c.replace('_', '-')}" for c in CALLERS)):
        await _ok(await http.post(D + "/tags", json={"name": tag, "revision": head}, headers=admin))
    # A schema change job whose dry run copied the hidden and the pii values (its samples hold them).
    copies = [
        {
            "op": "add_attribute",
            "kind": k,
            "attribute": a,
            "definition": {"type": "text"},
            "backfill": {"expression": e},
        }
        for k, a, e in (("Zeppelin", "zq_copy", "zq_secret"), ("Vendor", "tax_copy", "tax_id"))
    ]
    accepted = await http.post(
        D + "/branches/canary-work/schema/changes",
        json={"changes": copies, "dry_run": True, "on_invalid": "clear"},
        headers={**admin, "Prefer": "respond-async"},
    )
    assert accepted.status_code == 202, accepted.text
    await stack.rt.background.settled()
    job = await _ok(await http.get(accepted.headers["Location"], headers=admin))
    assert job["status"] == "dry_run" and "ZQCANARYSECRET" in orjson.dumps(job).decode(), job
    assert "PIICANARY4242" in orjson.dumps(job).decode(), job
    planted.ids["schema_job"] = job["id"]
    await stack.principal("usr_mx_target")
    planted.ids["grant"] = await stack.grant("canary", "usr_mx_target", "viewer", kinds=["Zeppelin"])
    memory = await _ok(
        await http.post(
            "/api/v1/memory/records",
            json={"idempotency_key": "mx-plant", "scope": SCOPE, "content": "MEMCANARY note"},
            headers=admin,
        )
    )
    planted.ids["memory"] = memory["record"]["record_id"]
    page = await _ok(
        await http.post("/api/v1/memory/changes", json={"contract_version": 1, "scope": SCOPE}, headers=admin)
    )
    planted.ids["cursor"] = orjson.dumps(page["next_cursor"]).decode()
    return planted


@pytest_asyncio.fixture
async def matrix(database_url: str, nats_url: str) -> AsyncIterator[Matrix]:
    # Rate limits of the callers are not what this test is about: each makes about 120 calls.
    # Nor are the per-address limits of requests without a valid credential.
    async with open_stack(
        database_url,
        LOREBASE_KEEPER__RATE_LIMITS__ENABLED="false",
        LOREBASE_HTTP__UNAUTHENTICATED_RATE_LIMIT__ENABLED="false",
    ) as stack:
        settings = {"LOREBASE_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "false"}
        async with running_feed(stack, nats_url, relay=False, settings=settings) as feed:
            feed.servicer.stream_limits = _short(feed.servicer.stream_limits)
            planted = await _plant(stack)
            headers = {"admin": stack.admin, "no_key": {}}
            keys = {"admin": ADMIN_KEY, "no_key": ""}
            for caller in ("narrow_admin", "narrow_editor", "viewer", "no_grant"):
                principal = f"usr_mx_{caller}"
                headers[caller] = await stack.principal(principal)
                keys[caller] = headers[caller]["Authorization"].removeprefix("Bearer ")
                grant = GRANTS[caller]
                if grant is not None:
                    role, narrowed = grant
                    await stack.grant("canary", principal, role, kinds=["Vendor"] if narrowed else None)
            yield Matrix(stack, feed, planted, headers, keys)


def _short(limits: Any) -> Any:
    import dataclasses

    return dataclasses.replace(limits, max_connection_s=1)


@dataclass
class Answer:
    status: int
    code: str
    text: str  # body and headers, lower-cased


async def _call(m: Matrix, caller: str, request: Request) -> Answer:
    filled = _fill(request, caller, m.keys[caller])
    headers = {**m.headers[caller], "Lorebase-Session": f"ses-mx-{caller.replace('_', '-')}"}
    response = await m.stack.http.request(
        filled.method,
        filled.path,
        params=filled.params or None,
        json=filled.body,
        headers=headers,
    )
    code = ""
    if response.headers.get("content-type", "").startswith("application/problem+json"):
        code = response.json().get("code", "")
    text = (response.text + " " + " ".join(f"{k}: {v}" for k, v in response.headers.items())).lower()
    return Answer(response.status_code, code, text)


def _sent(request: Request) -> str:
    return orjson.dumps([request.path, request.params, request.body]).decode().lower()


def _refused(endpoint: Any, caller: str) -> bool:
    """Whether the endpoint's policy refuses the caller outright (before anything it names)."""
    policy = endpoint.policy
    if policy.who is Who.ANYONE:
        return False
    if caller == "no_key" or policy.who is Who.WEB_SESSION:  # an API key is no web session
        return True
    if caller == "admin" or policy.who is Who.CALLER or endpoint.name == "list_memory_checkpoints":
        return False  # list_memory_checkpoints names no scope: it answers the caller's own, maybe none
    if policy.who in (Who.ADMIN, Who.MEMORY):
        return True
    grant = GRANTS[caller]
    if grant is None:
        return True
    role, narrowed = grant
    held = ROLES[role]
    if any(need.permission not in held for need in policy.needs if not need.when):
        return True
    return narrowed and policy.scope is Scope.EVERY_KIND


async def _snapshot(m: Matrix) -> bytes:
    """The canaries as the admin reads them: the hidden Records with their Links, and the pii value."""
    parts = []
    for path in (
        D + "/kinds/Zeppelin/records/ZQ-CANARY-1",
        D + "/kinds/Zeppelin/records/ZQ-CANARY-2",
        D + "/kinds/Zeppelin/records/ZQ-CANARY-1/links/moors_at",
        D + "/kinds/Vendor/records/V-1",
    ):
        response = await m.stack.http.get(path, headers=m.stack.admin)
        document = response.json()
        parts.append({k: document.get(k) for k in ("values", "links", "updated_revision")})
    return orjson.dumps(parts)


async def test_every_operation_by_every_caller_leaks_no_canary(matrix: Matrix) -> None:
    probes = _probes(matrix.planted)
    declared = {e.name for e in ENDPOINTS}
    assert set(probes) == declared, f"endpoints without a probe: {sorted(declared - set(probes))}"
    before = await _snapshot(matrix)
    failures: list[str] = []
    sent: dict[str, str] = {caller: "" for caller in CALLERS}  # what a caller sent: its session echoes it
    # Every caller but the admin first (their writes must leave the canaries alone), then the admin.
    for caller in (*CALLERS[1:], "admin"):
        if caller == "admin":
            assert await _snapshot(matrix) == before, "a caller's write reached a canary"
        for name in sorted(probes, key=lambda n: n in ("get_session", "list_sessions")):
            endpoint, probe = BY_NAME[name], probes[name]
            echoes = sent[caller] if name in ("get_session", "list_sessions") else ""
            hidden = await _call(matrix, caller, probe.hidden)
            sent[caller] += _sent(_fill(probe.hidden, caller, ""))
            failures += _judge(name, caller, endpoint, probe.hidden, hidden, echoes)
            if probe.absent is not None and caller != "admin":
                absent = await _call(matrix, caller, probe.absent)
                sent[caller] += _sent(_fill(probe.absent, caller, ""))
                failures += _judge(name, caller, endpoint, probe.absent, absent, echoes)
                if caller in probe.hidden_from and (hidden.status, hidden.code) != (
                    absent.status,
                    absent.code,
                ):
                    failures.append(
                        f"{name} as {caller}: hidden answers {hidden.status} {hidden.code}, absent "
                        f"{absent.status} {absent.code} (an existence oracle)"
                    )
    assert not failures, "\n".join(failures)


def _judge(name: str, caller: str, endpoint: Any, request: Request, answer: Answer, echoes: str) -> list[str]:
    found = []
    where = f"{name} as {caller} ({request.method} {request.path})"
    if answer.status >= 500:
        found.append(f"{where}: {answer.status} {answer.text[:300]}")
    sent = _sent(_fill(request, caller, "")) + echoes
    leaked = [c for c in FORBIDDEN[caller] if c in answer.text and c not in sent]
    if leaked:
        found.append(f"{where}: leaks {leaked}: {answer.text[:400]}")
    who = endpoint.policy.who
    if caller == "no_key" and who is not Who.ANYONE and answer.status != 401:
        found.append(f"{where}: {answer.status} without a key, not 401")
    elif who is Who.WEB_SESSION and answer.status != 401:
        found.append(f"{where}: {answer.status} for an API key where a web session is needed, not 401")
    elif _refused(endpoint, caller) and answer.status not in (401, 403, 404):
        found.append(f"{where}: its policy refuses the caller, yet it answered {answer.status}")
    elif not _refused(endpoint, caller) and answer.status == 401:
        found.append(f"{where}: 401 for a live credential")
    return found


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_endpoint_declares_its_policy(name: str) -> None:
    """A policy for each endpoint, whose needs are permissions a role holds (no typo can make an
    endpoint unreachable or open)."""
    policy = BY_NAME[name].policy
    for need in (*policy.needs, *policy.owner_needs):
        assert isinstance(need.permission, Permission)
        assert any(need.permission in held for held in ROLES.values())
