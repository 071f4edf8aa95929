"""Resolve's lexicon in German and French (read.resolve.language de, fr; languages.py): number words,
comparisons, comparatives, superlatives and top-k, verbs of state and dates as people say them read
as their English senses, with the same properties (same bytes, ties ranked, nothing hidden named).
The supply schema gets German and French aliases for its Kinds, as a Domain in those languages
would have; the lexicon adds no Domain word."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import orjson
import pytest
from lorebase_keeper.reads.resolve.words import number_at, stop_words, tokens

from tests.unit.resolve_words import SUPPLY, TODAY, domain, ground, named

ALIASES = {
    "Part": ["teil", "teile", "teilen", "pièce", "pièces"],
    "PurchaseOrder": ["bestellung", "bestellungen", "commande", "commandes"],
    "Contract": ["vertrag", "verträge", "contrat", "contrats"],
    "Supplier": ["lieferant", "lieferanten", "fournisseur", "fournisseurs"],
    "RiskFlag": ["risikomeldung", "risikomeldungen", "alerte", "alertes"],
}


def _schema() -> dict[str, Any]:
    schema = json.loads(json.dumps(SUPPLY))
    for kind, words in ALIASES.items():
        schema["kinds"][kind]["aliases"] = [*schema["kinds"][kind].get("aliases", []), *words]
    return schema


SCHEMA = _schema()


def say(
    text: str, language: str, kinds: tuple[str, ...] | None = None, today: date = TODAY
) -> dict[str, Any]:
    return ground(text, kinds, today, schema=SCHEMA, language=language)


def compared(body: dict[str, Any]) -> list[tuple[str, str, str, str, float]]:
    return [
        (c["kind"], c["attribute"], c["predicate"]["op"], c["predicate"]["value"], c["score"])
        for c in named(body, "comparison")
    ]


@pytest.mark.parametrize(
    ("language", "said", "number"),
    [
        ("de", "drei", "3"),
        ("de", "zwölf", "12"),
        ("de", "einundzwanzig", "21"),
        ("de", "dreißig", "30"),
        ("de", "ein Dutzend", "12"),
        ("de", "zweihundert", "200"),
        ("fr", "trois", "3"),
        ("fr", "vingt-cinq", "25"),
        ("fr", "vingt et un", "21"),
        ("fr", "soixante-dix", "70"),
        ("fr", "quatre-vingt-dix-neuf", "99"),
        ("fr", "une douzaine", "12"),
        ("fr", "deux cents", "200"),
    ],
)
def test_number_words(language: str, said: str, number: str) -> None:
    words = tokens(said, language)
    assert number_at(words, 0) == (len(words), number)
    assert number_at(tokens(said), 0) is None or said == "une douzaine", "English reads them as nothing"


def test_german_comparisons_and_comparatives() -> None:
    assert compared(say("Teile billiger als 20 EUR", "de")) == [("Part", "unit_cost", "lt", "20.00", 0.8)]
    assert compared(say("Bestellungen teurer als tausend Euro", "de")) == [
        ("PurchaseOrder", "total", "gt", "1000.00", 0.8)
    ]
    assert compared(say("Verträge älter als 2023", "de"))[0] == (
        "Contract",
        "valid_from",
        "lt",
        "2023-01-01",
        0.8,
    )
    assert compared(say("Lieferanten mit einem risk score über siebzig", "de")) == [
        ("Supplier", "risk_score", "gt", "70", 1.0)
    ]
    assert ("PurchaseOrder", "quantity", "gt", "12", 1.0) in compared(
        say("Bestellungen mit einer quantity von mehr als einem Dutzend", "de")
    )
    assert compared(say("Teile, die billiger als 5 EUR sind", "de")) == [
        ("Part", "unit_cost", "lt", "5.00", 0.8)
    ]


def test_french_comparisons_and_comparatives() -> None:
    assert compared(say("pièces moins chères que 20 EUR", "fr")) == [
        ("Part", "unit_cost", "lt", "20.00", 0.8)
    ]
    assert compared(say("commandes plus chères que mille euros", "fr")) == [
        ("PurchaseOrder", "total", "gt", "1000.00", 0.8)
    ]
    assert compared(say("contrats plus anciens que 2023", "fr"))[0] == (
        "Contract",
        "valid_from",
        "lt",
        "2023-01-01",
        0.8,
    )
    assert compared(say("fournisseurs avec un risk score supérieur à soixante-dix", "fr")) == [
        ("Supplier", "risk_score", "gt", "70", 1.0)
    ]
    assert ("PurchaseOrder", "quantity", "gt", "12", 1.0) in compared(
        say("commandes avec une quantity de plus de douze", "fr")
    )
    assert ("PurchaseOrder", "quantity", "ge", "25", 1.0) in compared(
        say("commandes avec une quantity d'au moins vingt-cinq", "fr")
    )


def _orders(body: dict[str, Any]) -> list[tuple[str, list[str], int | None]]:
    return [(h["kind"], h["order_by"], h.get("limit")) for h in body["hints"] if h["hint"] == "order_by"]


def test_superlatives_and_top_k() -> None:
    assert _orders(say("die drei billigsten Teile", "de")) == [("Part", ["unit_cost"], 3)]
    riskiest = _orders(say("the riskiest supplier", "en"))
    assert riskiest[0] == ("Supplier", ["-risk_score"], None)
    assert _orders(say("der riskanteste Lieferant", "de")) == riskiest
    assert _orders(say("die älteste Risikomeldung", "de")) == [("RiskFlag", ["raised_on"], None)]
    assert _orders(say("les trois pièces les moins chères", "fr")) == [("Part", ["unit_cost"], 3)]
    assert _orders(say("die drei Teile mit den niedrigsten unit cost", "de")) == [("Part", ["unit_cost"], 3)]
    assert _orders(say("les trois moins chères pièces", "fr")) == [("Part", ["unit_cost"], 3)]
    assert _orders(say("le fournisseur le plus risqué", "fr")) == riskiest
    assert _orders(say("la commande la plus récente", "fr")) == [("PurchaseOrder", ["-ordered_on"], None)]
    # "plus" without an article is a comparison, not a superlative
    assert not _orders(say("pièces plus chères que 5", "fr"))


def test_counts_and_states() -> None:
    body = say("wie viele abgelaufene Verträge", "de")
    assert [h["hint"] for h in body["hints"]] == ["count"]
    assert body["hints"][0]["matched"] == "wie viele"
    assert named(body, "value", kind="Contract") or compared(body)
    body = say("combien de fournisseurs ne sont jamais flagged", "fr")
    assert [h["hint"] for h in body["hints"]][0] == "count"


def _interval(body: dict[str, Any]) -> list[dict[str, str]]:
    return [c["interval"] for c in named(body, "comparison") if "interval" in c]


def test_dates_as_people_say_them() -> None:
    last_month = {"from": "2026-09-01", "before": "2026-10-01", "today": TODAY.isoformat()}
    assert _interval(say("Bestellungen letzten Monat", "de")) == [last_month, last_month]
    assert _interval(say("commandes du mois dernier", "fr")) == [last_month, last_month]
    assert _interval(say("commandes le mois dernier", "fr")) == [last_month, last_month]
    this_year = {"from": "2026-01-01", "before": "2027-01-01", "today": TODAY.isoformat()}
    assert _interval(say("Risikomeldungen dieses Jahr", "de")) == [this_year, this_year]
    assert _interval(say("alertes cette année", "fr")) == [this_year, this_year]
    assert compared(say("Bestellungen seit Q3", "de")) == [
        ("PurchaseOrder", "ordered_on", "ge", "2026-07-01", 0.8)
    ]
    assert compared(say("commandes depuis mars 2026", "fr")) == [
        ("PurchaseOrder", "ordered_on", "ge", "2026-03-01", 0.8)
    ]
    assert compared(say("Bestellungen vor Ende März", "de")) == [
        ("PurchaseOrder", "ordered_on", "lt", "2026-04-01", 0.8)
    ]
    assert compared(say("commandes avant la fin de mars", "fr")) == [
        ("PurchaseOrder", "ordered_on", "lt", "2026-04-01", 0.8)
    ]
    days = {"from": "2026-09-16", "before": "2026-10-16", "today": TODAY.isoformat()}
    assert _interval(say("Bestellungen der letzten 30 Tage", "de")) == [days, days]
    assert _interval(say("commandes des 30 derniers jours", "fr")) == [days, days]


def test_the_same_bytes_and_nothing_hidden() -> None:
    for text, language in (("die drei billigsten Teile", "de"), ("les trois moins chères pièces", "fr")):
        assert orjson.dumps(say(text, language)) == orjson.dumps(say(text, language))
    body = say("Lieferanten riskanter als 40", "de", kinds=("Part",))
    assert not named(body, "comparison")
    assert not say("der riskanteste Lieferant", "de", kinds=("Part",))["hints"]


def test_english_words_mean_what_they_did_and_other_languages_words_nothing() -> None:
    assert compared(say("parts cheaper than 20 EUR", "en")) == [("Part", "unit_cost", "lt", "20.00", 0.8)]
    assert not compared(say("Teile billiger als 20 EUR", "en"))
    assert not compared(say("pièces moins chères que 20 EUR", "de"))


def test_verbs_of_state() -> None:
    expired = compared(say("expired contracts", "en"))
    assert expired and compared(say("abgelaufene Verträge", "de")) == expired
    assert compared(say("contrats expirés", "fr")) == expired
    energy_overdue = [("Contract", "valid_to", "lt", TODAY.isoformat(), 0.8)]
    assert compared(say("Verträge überfällig", "de")) == energy_overdue
    assert compared(say("contrats en retard", "fr")) == energy_overdue


def test_french_elisions_are_two_words_and_function_words() -> None:
    assert [w.key for w in tokens("l'année dernière, d'au moins", "fr")] == [
        "l'",
        "année",
        "dernière",
        "d'",
        "au",
        "moins",
    ]
    body = say("combien d'alertes l'année dernière", "fr")
    assert [h["hint"] for h in body["hints"]] == ["count"]
    # the elided article is a function word: never unknown, never a miss
    assert {"l'", "d'"} <= stop_words(domain(SCHEMA, "fr").settings.model.read.resolve)
    assert "aujourd'hui" in [w.key for w in tokens("aujourd'hui", "fr")]
