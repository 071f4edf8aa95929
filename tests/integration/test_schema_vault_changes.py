"""Vault flags in change sets (docs/schema.md, "Change sets"; docs/erasure.md): an existing
Attribute's `vault` flag does not change (422 saying what to do instead, either way), and no
change set computes values into a vault Attribute (a backfill, a split or a merge would store
them outside the vault, unsealed); each refusal changes nothing."""

from __future__ import annotations

from typing import Any

from tests.integration.conftest import Stack
from tests.integration.test_schema_changes import D, change, head

S1001 = D + "/kinds/Supplier/records/S-1001"
EMAIL = {
    "op": "add_attribute",
    "kind": "Supplier",
    "attribute": "email",
    "definition": {"type": "string", "vault": True},
}


async def refused(stack: Stack, items: list[dict[str, Any]], path: str, rule: str) -> str:
    """The change set (and its dry run) answers 422 with one issue at `path`; its message."""
    for dry_run in (True, False):
        answer = await change(stack, {"changes": items, "dry_run": dry_run})
        assert answer.status_code == 422 and answer.json()["code"] == "validation-failed", answer.text
        issues = answer.json()["issues"]
        assert [(i["path"], i["rule"]) for i in issues] == [(path, rule)], issues
    return str(issues[0]["message"])


async def test_a_vault_flag_does_not_change_and_the_answer_says_what_to_do(supply: Stack) -> None:
    before, s1001 = await head(supply), (await supply.http.get(S1001, headers=supply.admin)).json()
    into = {
        "op": "change_attribute",
        "kind": "Supplier",
        "attribute": "vat_number",
        "definition": {"vault": True},
    }
    message = await refused(supply, [into], "changes[0].definition.vault", "change.vault")
    assert "cannot move into the vault" in message and "add_attribute" in message
    assert "import or an Operation" in message and "remove_attribute" in message
    assert await head(supply) == before and await supply.count("vault_entries") == 0
    assert (await supply.http.get(S1001, headers=supply.admin)).json()["values"] == s1001["values"]

    added = await change(supply, {"changes": [EMAIL]})
    assert added.status_code == 200, added.text
    after = await head(supply)
    out = {"op": "change_attribute", "kind": "Supplier", "attribute": "email", "definition": {"vault": False}}
    message = await refused(supply, [out], "changes[0].definition.vault", "change.vault")
    assert "cannot leave the vault" in message and "vault entries stay" in message
    assert await head(supply) == after
    # Stating the flag it has is no change of it.
    same = {**out, "definition": {"vault": True, "description": "Where to write to the supplier."}}
    assert (await change(supply, {"changes": [same]})).status_code == 200


async def test_no_change_set_computes_values_into_a_vault_attribute(supply: Stack) -> None:
    before = await head(supply)
    for backfill in ({"value": "ops@example.org"}, {"expression": "legal_name"}):
        message = await refused(
            supply, [{**EMAIL, "backfill": backfill}], "changes[0].backfill", "backfill.vault"
        )
        assert (
            "unsealed" not in message
            and "outside the vault" in message
            and "import or an Operation" in message
        )
    split = {
        "op": "split_attribute",
        "kind": "Supplier",
        "attribute": "vat_number",
        "pattern": "(?P<vat_country>[A-Z]{2})(?P<vat_digits>[0-9]+)",
        "into": {"vat_country": {"type": "string"}, "vat_digits": {"type": "string", "vault": True}},
    }
    await refused(supply, [split], "changes[0].into.vat_digits.vault", "change.vault")
    merge = {
        "op": "merge_attributes",
        "kind": "Supplier",
        "attributes": ["city", "country"],
        "to": "address",
        "definition": {"type": "string", "vault": True},
        "backfill": {"expression": "city + ', ' + country"},
    }
    unlocated = {"op": "change_kind", "kind": "Supplier", "definition": {"implements": []}}
    await refused(supply, [unlocated, merge], "changes[1].definition.vault", "change.vault")
    assert await head(supply) == before and await supply.count("vault_entries") == 0
    s1001 = (await supply.http.get(S1001, headers=supply.admin)).json()["values"]
    assert "email" not in s1001 and "address" not in s1001 and s1001["vat_number"]
