"""A reference agent with no language model: it answers an analyst's question through
resolve -> query -> coverage -> explain, using only what resolve returns (issue 16).

The rules are about resolve's answer, never about one question:

1. POST /resolve the question.
2. A Record named (a `record` candidate) with an Attribute of its Kind: read that value from
   explain (GET .../explain), which also says where it came from.
   A Record named with a Relation one end of which is its Kind: the Records at the other end
   (GET .../links/{relation}).
3. Otherwise the Kind asked about: the Kind of a `count_links` hint (Links counted per Record of
   it), else the best `kind` candidate, the first in the question among equals; without one, the
   Kind of the best value or comparison candidate.
4. Its filter: per phrase, the `value` candidates on that Kind (their predicates as given), and
   every `comparison` on an Attribute of that Kind; all of them together (and).
5. Hints on that Kind: `count` -> aggregate count, `group_by` -> aggregate group_by, `order_by`
   -> the first Record in that order (the first `limit` Records when the hint has one);
   `has_link` -> the Records of the query having a Link along the hint's `path` (POST /traverse;
   with `negated`, those having none),
   `count_links` -> the number of those Links per Record (with `order`: the first `limit`, or one,
   Records by that number). A comparison whose words are also a
   stored value at a higher score is left out (the value is what the words say).
6. POST /query, read the coverage block (its notes are kept with the answer: a missing value means
   "none of those with a value", not "none"), and explain the Record when the answer is one Record.

    python -m examples.analyst.agent --url http://127.0.0.1:8080 --key KEY --domain supply "How many suppliers are in Poland?"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class Transcript:
    """The calls made for one question and the bytes they answered."""

    calls: list[tuple[str, str, int]] = field(default_factory=list)  # method, path, status
    response_bytes: int = 0
    notes: list[str] = field(default_factory=list)


async def _call(
    client: httpx.AsyncClient, log: Transcript, method: str, path: str, body: dict[str, Any] | None = None
) -> Any:
    response = await client.request(method, path, json=body)
    log.calls.append((method, path, response.status_code))
    log.response_bytes += len(response.content)
    response.raise_for_status()
    return response.json()


def _position(question: str, matched: str) -> int:
    at = question.casefold().find(matched)
    return at if at >= 0 else len(question)


def _best(candidates: list[dict[str, Any]], target: str, question: str) -> dict[str, Any] | None:
    found = [c for c in candidates if c["target"] == target]
    found.sort(key=lambda c: (-c["score"], _position(question, c["matched"])))
    return found[0] if found else None


async def answer(client: httpx.AsyncClient, domain: str, question: str) -> tuple[dict[str, Any], Transcript]:
    """The answer to `question` on `domain` ({"count"}, {"groups"}, {"keys"} or {"value"}), with
    the transcript; {} when the words do not say what to read."""
    log = Transcript()
    base = f"/api/v1/domains/{domain}"
    resolved = await _call(client, log, "POST", f"{base}/resolve", {"text": question, "record_misses": False})
    candidates: list[dict[str, Any]] = resolved["candidates"]
    hints: list[dict[str, Any]] = resolved["hints"]
    record = _best(candidates, "record", question)
    if record is not None and len(record["refs"]) == 1:
        kind, key = record["refs"][0].split("/", 1)
        attribute = next(
            (
                c
                for c in sorted(candidates, key=lambda c: -c["score"])
                if c["target"] == "attribute" and c["kind"] == kind and "relation" not in c
            ),
            None,
        )
        if attribute is not None and not any(c["target"] == "kind" and c["kind"] != kind for c in candidates):
            explained = await _call(client, log, "GET", f"{base}/kinds/{kind}/records/{key}/explain")
            shown = {a["name"]: a for a in explained.get("attributes", [])}
            if attribute["attribute"] in shown:
                return {"value": shown[attribute["attribute"]]["value"]}, log
            read = await _call(client, log, "GET", f"{base}/kinds/{kind}/records/{key}")
            return {"value": read["values"].get(attribute["attribute"])}, log
        relation = next(
            (c for c in candidates if c["target"] == "relation" and kind in (c["kind"], c["to"])), None
        )
        if relation is not None:
            name = (
                relation["relation"]
                if kind == relation["kind"]
                else relation.get("inverse", relation["relation"])
            )
            links = await _call(client, log, "GET", f"{base}/kinds/{kind}/records/{key}/links/{name}")
            ends = [
                link["from"].split("/", 1)[1]
                if link["to"] == record["refs"][0]
                else link["to"].split("/", 1)[1]
                for link in links["links"]
            ]
            return {"keys": sorted(ends)}, log
    target = next((h for h in hints if h["hint"] == "count_links"), None)  # counts per Record of its Kind
    if target is None:
        target = _best(candidates, "kind", question)
    if target is None:
        target = next((h for h in hints if "kind" in h), None)
    if target is None:
        filters = [c for c in candidates if c["target"] in ("value", "comparison")]
        filters.sort(key=lambda c: (-c["score"], _position(question, c["matched"])))
        target = filters[0] if filters else None
    if target is None:
        return {}, log
    kind = target["kind"]
    where: list[dict[str, Any]] = []
    phrases: dict[str, list[dict[str, Any]]] = {}
    for c in candidates:
        if c["kind"] == kind and "relation" not in c and c["target"] in ("value", "comparison"):
            phrases.setdefault(c["matched"] + c["target"], []).append(c)
    valued = {c["matched"]: c["score"] for c in candidates if c["target"] == "value"}
    for found in phrases.values():
        if found[0]["target"] == "comparison" and valued.get(found[0]["matched"], 0) > found[0]["score"]:
            continue  # the words are a stored value first ("expired" is a status)
        if found[0]["target"] == "value":
            best = max(found, key=lambda c: c["score"])
            where.append(best["predicate"])
        else:
            top = max(c["score"] for c in found)
            attributes = {c["attribute"] for c in found if c["score"] == top}
            if len(attributes) == 1:
                where += [c["predicate"] for c in found if c["score"] == top]
    body: dict[str, Any] = {"kind": kind}
    if where:
        body["where"] = where[0] if len(where) == 1 else {"and": where}
    mine = [h for h in hints if h.get("kind") in (None, kind)]
    group = next((h for h in mine if h["hint"] == "group_by"), None)
    order = next((h for h in mine if h["hint"] == "order_by"), None)
    counting = any(h["hint"] == "count" for h in mine)
    linked = next((h for h in mine if h["hint"] in ("has_link", "count_links")), None)
    if linked is not None:
        return await _linked(client, log, base, body, linked, order, counting), log
    if group is not None:
        body["aggregate"] = group["aggregate"]
    elif counting:
        body["aggregate"] = {"count": True}
    elif order is not None:
        body.update(order_by=order["order_by"], limit=order.get("limit", 1))
    else:
        body["limit"] = 1000
    result = await _call(client, log, "POST", f"{base}/query", body)
    log.notes += result.get("coverage", {}).get("notes", [])
    if group is not None:
        return {"groups": {str(g["value"]): g["count"] for g in result["aggregate"]["groups"]}}, log
    if counting:
        return {"count": result["aggregate"]["count"]}, log
    found_keys = sorted(r["key"] for r in result["records"])
    if len(found_keys) == 1:
        await _call(client, log, "GET", f"{base}/kinds/{kind}/records/{found_keys[0]}/explain")
    return {"keys": found_keys}, log


async def _linked(
    client: httpx.AsyncClient,
    log: Transcript,
    base: str,
    body: dict[str, Any],
    linked: dict[str, Any],
    order: dict[str, Any] | None,
    counting: bool,
) -> dict[str, Any]:
    """The Records of the query with their Links along the hint's path (POST /traverse): those
    having one (`has_link`), or the number each has (`count_links`)."""
    if order is not None:
        body["order_by"] = order["order_by"]
    result = await _call(client, log, "POST", f"{base}/query", {**body, "limit": 1000})
    log.notes += result.get("coverage", {}).get("notes", [])
    refs = [r["ref"] for r in result["records"]]
    per: dict[str, int] = dict.fromkeys(refs, 0)
    if refs:
        walked = await _call(
            client, log, "POST", f"{base}/traverse", {"from": refs, "path": linked["path"], "values": False}
        )
        for link in walked["links"]:
            start = link["from"] if link["from"] in per else link["to"]
            if start in per:
                per[start] += 1
    if linked["hint"] == "count_links" and "order" in linked:  # the most / the fewest
        sign = -1 if linked["order"] == "desc" else 1
        ranked = sorted(refs, key=lambda ref: (sign * per[ref], ref))[: linked.get("limit", 1)]
        return {"keys": sorted(ref.split("/", 1)[1] for ref in ranked)}
    if linked["hint"] == "count_links":
        return {"groups": {ref.split("/", 1)[1]: n for ref, n in per.items()}}
    kept = [ref for ref in refs if bool(per[ref]) != bool(linked.get("negated"))]
    if counting:
        return {"count": len(kept)}
    if order is not None:
        kept = kept[: order.get("limit", 1)]
    return {"keys": sorted(ref.split("/", 1)[1] for ref in kept)}


async def _main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("question")
    parser.add_argument("--url", default=os.environ.get("LOREBASE_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--key", default=os.environ.get("LOREBASE_KEY", ""))
    parser.add_argument("--domain", default="supply")
    args = parser.parse_args()
    headers = {"Authorization": f"Bearer {args.key}"}
    async with httpx.AsyncClient(base_url=args.url, headers=headers) as client:
        found, log = await answer(client, args.domain, args.question)
    print(json.dumps({"answer": found, "calls": log.calls, "notes": log.notes}, indent=1))


if __name__ == "__main__":
    asyncio.run(_main())
