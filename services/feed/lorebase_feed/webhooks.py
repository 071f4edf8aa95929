"""The webhook registry: create (the secret shown once), list, delete and update webhooks of a
Domain. Who may is keeper's to decide, from each endpoint's policy (Keeper.Authorize): domain.settings
through a grant that reads every Kind, and a clearance only by a caller holding it (pii.read, ...).
Every change is in the audit log. Delivery is Scribe's (lorebase_scribe.webhook_delivery.deliver_pending). A target
URL is checked here with the policy every delivery uses (lorebase.webhook_targets), so a target a
delivery would refuse is refused at creation with the reason."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, replace
from typing import Any

import orjson
from google.protobuf.message import Message

from lorebase.clients import KeeperClient
from lorebase.ids import utc_now
from lorebase.problems import Problem
from lorebase.webhook_secrets import Sealer, new_secret, standard_secret
from lorebase.webhook_targets import Resolver, TargetPolicy, TargetRefused, system_resolver
from lorebase_store import Database, Txn
from lorebase_store.webhooks import WebhookRow, start_position

DEFAULT_EVENTS = ("revision.committed", "operation.*")
CLEARANCES = ("pii", "confidential", "restricted")
EVENT = re.compile(r"revision\.committed|operation\.\*|operation\.[A-Za-z_][A-Za-z0-9_]*")
BRANCH_PATTERN = re.compile(r"[A-Za-z0-9._/*?\-]{1,200}")


@dataclass(frozen=True)
class Registry:
    db: Database
    keeper: KeeperClient
    sealer: Sealer | None  # None: the settings are wrong (sealer_error says how)
    sealer_error: str | None
    targets: TargetPolicy  # the policy Scribe's sender delivers with (lorebase.webhook_targets)
    resolver: Resolver = system_resolver
    lookup_s: float = 10  # webhooks.timeout_s: how long a target's name may take to resolve


def _invalid(path: str, message: str) -> Problem:
    return Problem(
        422,
        "validation-failed",
        message,
        issues=[{"path": path, "rule": "webhook." + path, "message": message}],
    )


def _document(row: WebhookRow, domain: str) -> dict[str, Any]:
    return {
        "id": row.id,
        "domain": domain,
        "url": row.url,
        "events": list(row.events),
        "branches": list(row.branches),
        "clearances": list(row.clearances),
        "created_by": row.created_by,
        "created_at": row.created_at.isoformat().replace("+00:00", "Z"),
        "updated_at": row.updated_at.isoformat().replace("+00:00", "Z"),
    }


def _body(data: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(data) if data else {}
    except orjson.JSONDecodeError as exc:
        raise Problem(400, "malformed-json", f"the body is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise Problem(400, "malformed-json", "the body must be a JSON object")
    unknown = sorted(set(value) - {"url", "events", "branches", "clearances"})
    if unknown:
        raise _invalid(
            unknown[0], f"unknown member {unknown[0]!r}; a webhook has url, events, branches, clearances"
        )
    return value


async def _url(value: Any, registry: Registry) -> str:
    """A target URL checked as every delivery will check it (scheme, user info, literal addresses
    and, where the name resolves now, its addresses); 422 at `url` with the reason."""
    if not isinstance(value, str) or not value:
        raise _invalid("url", "url is required: the address deliveries are POSTed to")
    try:
        await registry.targets.check_new(value, registry.resolver, lookup_s=registry.lookup_s)
    except TargetRefused as exc:
        raise _invalid("url", f"url cannot be a webhook target: {exc}") from None
    return value


def _strings(
    body: dict[str, Any], member: str, default: tuple[str, ...], pattern: re.Pattern[str]
) -> tuple[str, ...]:
    value = body.get(member)
    if value is None:
        return default
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(v, str) and pattern.fullmatch(v) for v in value)
    ):
        raise _invalid(member, f"{member} is a non-empty list of {_WHAT[member]}")
    return tuple(dict.fromkeys(value))


_WHAT = {
    "events": "event types: revision.committed, operation.* or operation.<side effect>",
    "branches": "branch names or patterns (main, agent/*)",
}


def _clearances(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v in CLEARANCES for v in value):
        raise _invalid("clearances", f"clearances is a list of sensitivity tags: {', '.join(CLEARANCES)}")
    return tuple(dict.fromkeys(value))


def _data(request: Message) -> bytes:
    data: bytes = getattr(request, "body", b"")
    return data


def _id(request: Message) -> str:
    webhook_id: str = getattr(request, "id", "")
    return webhook_id


class Webhooks:
    def __init__(self, registry: Registry) -> None:
        self.r = registry

    async def _access(self, credential: str, endpoint: str, request: Message) -> dict[str, Any]:
        """What keeper answers when the call passes its endpoint's policy (a Problem when not)."""
        if not credential:
            raise Problem(401, "unauthenticated", "send a credential as 'Authorization: Bearer <key>'")
        answer = await self.r.keeper.authorize(credential=credential, endpoint=endpoint, request=request)
        document: dict[str, Any] = answer.json()
        return document

    async def create(self, credential: str, request: Message) -> tuple[int, dict[str, Any]]:
        access = await self._access(credential, "create_webhook", request)
        body = _body(_data(request))
        url = await _url(body.get("url"), self.r)
        events = _strings(body, "events", DEFAULT_EVENTS, EVENT)
        branches = _strings(body, "branches", ("*",), BRANCH_PATTERN)
        clearances = _clearances(body.get("clearances"))
        if self.r.sealer is None:
            raise Problem(409, "encryption_key_required", str(self.r.sealer_error))
        secret, digest = new_secret()
        now = utc_now()
        row = WebhookRow(
            "whk_" + secrets.token_hex(8),
            int(access["domain_id"]),
            url,
            events,
            branches,
            clearances,
            self.r.sealer.seal(digest),
            access["principal"],
            now,
            now,
        )
        document = _document(row, access["domain"])

        async def write(txn: Txn) -> None:
            # It gets the events committed from now on, whatever the fan-out cursor's position.
            await txn.insert_webhook(replace(row, start_after=await start_position(txn)))
            await txn.audit(
                access["principal"],
                "webhook.create",
                now,
                domain=access["domain"],
                target=row.id,
                details={k: document[k] for k in ("url", "events", "branches", "clearances")},
            )

        await self.r.db.run_interaction("webhook_create", write)
        return 201, {**document, "secret": secret, "standard_webhooks_secret": standard_secret(digest)}

    async def list(self, credential: str, request: Message) -> tuple[int, dict[str, Any]]:
        access = await self._access(credential, "list_webhooks", request)
        rows = await self.r.db.read("webhook_list", lambda txn: txn.list_webhooks(int(access["domain_id"])))
        return 200, {"webhooks": [_document(row, access["domain"]) for row in rows]}

    async def _get(self, access: dict[str, Any], webhook_id: str) -> WebhookRow:
        row = await self.r.db.read(
            "webhook_get", lambda txn: txn.get_webhook(int(access["domain_id"]), webhook_id)
        )
        if row is None:
            raise Problem(404, "not-found", f"unknown webhook {webhook_id!r}; GET /webhooks lists them")
        return row

    async def delete(self, credential: str, request: Message) -> tuple[int, dict[str, Any]]:
        access = await self._access(credential, "delete_webhook", request)
        row = await self._get(access, _id(request))

        async def write(txn: Txn) -> None:
            await txn.delete_webhook(row.id)
            await txn.audit(
                access["principal"],
                "webhook.delete",
                utc_now(),
                domain=access["domain"],
                target=row.id,
                details={"url": row.url},
            )

        await self.r.db.run_interaction("webhook_delete", write)
        return 200, {"id": row.id, "deleted": True}

    async def update(self, credential: str, request: Message) -> tuple[int, dict[str, Any]]:
        access = await self._access(credential, "update_webhook", request)
        row = await self._get(access, _id(request))
        body = _body(_data(request))
        if not body:
            raise _invalid("clearances", "send the members to change: url, events, branches or clearances")
        values: dict[str, Any] = {}
        if "url" in body:
            values["url"] = await _url(body["url"], self.r)
        if "events" in body:
            values["events"] = list(_strings(body, "events", DEFAULT_EVENTS, EVENT))
        if "branches" in body:
            values["branches"] = list(_strings(body, "branches", ("*",), BRANCH_PATTERN))
        if "clearances" in body:
            values["clearances"] = list(_clearances(body["clearances"]))
        now = utc_now()

        async def write(txn: Txn) -> WebhookRow | None:
            await txn.update_webhook(row.id, updated_at=now, **values)
            await txn.audit(
                access["principal"],
                "webhook.update",
                now,
                domain=access["domain"],
                target=row.id,
                details=values,
            )
            return await txn.get_webhook(row.domain_id, row.id)

        updated = await self.r.db.run_interaction("webhook_update", write)
        assert updated is not None
        return 200, _document(updated, access["domain"])


__all__ = ["CLEARANCES", "DEFAULT_EVENTS", "Registry", "Webhooks"]
