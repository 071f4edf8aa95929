"""`vault: true` on Attributes (docs/erasure.md): where it is allowed, what it implies, what it
refuses, and that the normalised document keeps it."""

from __future__ import annotations

from typing import Any

import pytest

from lorebase.schema import load_schema
from lorebase.schema.errors import SchemaError


def document(**email: Any) -> dict[str, Any]:
    return {
        "kinds": {
            "Customer": {
                "key": ["id"],
                "title": "name",
                "attributes": {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "email": {"type": "string", **email},
                },
            },
            "Order": {
                "key": ["no"],
                "attributes": {"no": {"type": "string"}, "email": {"type": "string", "vault": True}},
            },
        },
        "relations": {"placed": {"from": "Order", "to": "Customer", "inverse": "orders"}},
    }


def problems(doc: dict[str, Any]) -> str:
    with pytest.raises(SchemaError) as raised:
        load_schema(doc)
    return str(raised.value) + repr(getattr(raised.value, "problems", ""))


def test_a_vault_attribute_is_pii_unless_tagged_and_round_trips() -> None:
    schema = load_schema(document(vault=True))
    email = schema.kinds["Customer"].attributes["email"]
    assert email.vault and email.sensitivity == ("pii",)
    assert schema.kinds["Customer"].vault == ("email",) and schema.kinds["Order"].vault == ("email",)
    tagged = load_schema(document(vault=True, sensitivity=["confidential"]))
    assert tagged.kinds["Customer"].attributes["email"].sensitivity == ("confidential",)
    assert load_schema(schema.document) == schema
    assert schema.document["kinds"]["Customer"]["attributes"]["email"]["vault"] is True
    assert "vault" not in schema.document["kinds"]["Customer"]["attributes"]["name"]
    assert load_schema(document()).kinds["Customer"].vault == ()


@pytest.mark.parametrize(
    ("email", "needle"),
    [
        ({"vault": True, "unique": True}, "cannot be unique"),
        ({"vault": "yes"}, "vault"),
    ],
)
def test_a_vault_attribute_is_not_unique(email: dict[str, Any], needle: str) -> None:
    assert needle in problems(document(**email))


def test_keys_titles_derivations_and_other_places_refuse_the_vault() -> None:
    titled = document(vault=True)
    titled["kinds"]["Customer"]["title"] = "email"
    assert "title Attribute cannot be a vault" in problems(titled)
    keyed = document()
    keyed["kinds"]["Customer"]["attributes"]["id"]["vault"] = True
    assert "key or title Attribute cannot be a vault" in problems(keyed)
    derived = document()
    derived["kinds"]["Customer"]["attributes"]["orders_by_mail"] = {
        "type": "integer",
        "derived": "count(orders where email == 'x')",
    }
    assert "cannot read a vault Attribute (Order.email)" in problems(derived)
    linked = document()
    linked["relations"]["placed"]["attributes"] = {"note": {"type": "string", "vault": True}}
    assert "only Attributes of Kinds can be vault Attributes" in problems(linked)
