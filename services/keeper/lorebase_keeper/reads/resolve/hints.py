"""Intent hints: what the question asks to do with the Records, as POST /query members, so that an
agent builds the aggregate or the order without parsing English itself.

- "how many", "number of", "count": `{"hint": "count", "aggregate": {"count": true}}`;
- "per X", "by X", "for each X", "grouped by X", where X names an Attribute of a Kind:
  `{"hint": "group_by", "kind": K, "attribute": X, "aggregate": {"group_by": X}}` per Kind having it;
- a superlative next to an Attribute ("highest risk score", "lowest unit cost", "latest order
  date"): `{"hint": "order_by", "kind": K, "attribute": A, "order_by": ["-A"]}` (ascending for
  lowest, cheapest, earliest...). "latest", "earliest", "newest" and "oldest" without an Attribute
  apply to the date Attribute of a Kind the question names, when it has exactly one.

The words of a hint are taken: they are not unmatched. English words only, for now.
"""

from __future__ import annotations

from typing import Any

from lorebase_keeper.reads.resolve.ground import Span
from lorebase_keeper.reads.resolve.vocabulary import Vocabulary
from lorebase_keeper.reads.resolve.words import Word

COUNT = [("how", "many"), ("number", "of"), ("count", "of"), ("count",)]
GROUP = [("broken", "down", "by"), ("grouped", "by"), ("for", "each"), ("per",), ("by",), ("each",)]
DESCENDING = {
    "highest",
    "largest",
    "biggest",
    "greatest",
    "top",
    "most",
    "maximum",
    "longest",
    "latest",
    "newest",
}
ASCENDING = {"lowest", "smallest", "least", "fewest", "minimum", "shortest", "cheapest", "earliest", "oldest"}
TIME_WORDS = {"latest", "newest", "earliest", "oldest"}
DATES = ("date", "datetime")


def _at(words: list[Word], used: list[bool], index: int, phrase: tuple[str, ...]) -> bool:
    window = tuple(w.key for w in words[index : index + len(phrase)])
    return window == phrase and not any(used[index : index + len(phrase)])


def hints(words: list[Word], used: list[bool], spans: list[Span], vocab: Vocabulary) -> list[dict[str, Any]]:
    """The hints of the question, in the order of their words; their words are marked used."""
    by_start = {s.start: s for s in spans}
    out: list[dict[str, Any]] = []
    kinds = sorted({h.term.kind for s in spans for h in s.hits if h.term.target in ("kind", "value")})
    for index in range(len(words)):
        for phrase in COUNT:
            if _at(words, used, index, phrase):
                out.append({"hint": "count", "matched": " ".join(phrase), "aggregate": {"count": True}})
                used[index : index + len(phrase)] = [True] * len(phrase)
                break
        for phrase in GROUP:
            if not _at(words, used, index, phrase):
                continue
            span = by_start.get(index + len(phrase))
            if span is None:
                continue
            terms = [h.term for h in span.hits if h.term.target == "attribute" and h.term.relation is None]
            for term in sorted(terms, key=lambda t: (t.kind, str(t.attribute))):
                out.append(
                    {
                        "hint": "group_by",
                        "matched": " ".join([*phrase, span.matched]),
                        "kind": term.kind,
                        "attribute": term.attribute,
                        "aggregate": {"group_by": term.attribute},
                    }
                )
            if terms:
                used[index : index + len(phrase)] = [True] * len(phrase)
                break
        word = words[index].key
        if used[index] or word not in DESCENDING | ASCENDING:
            continue
        sign = "-" if word in DESCENDING else ""
        found = [by_start.get(index + 1), next((s for s in spans if s.end == index), None)]
        terms = []
        for span in found:
            if span is not None:
                terms = [
                    h.term for h in span.hits if h.term.target == "attribute" and h.term.relation is None
                ]
            if terms:
                break
        if not terms and word in TIME_WORDS:
            for kind in kinds:
                dated = [
                    t for t in vocab.attributes if t.kind == kind and t.relation is None and t.type in DATES
                ]
                if len(dated) == 1:
                    terms.append(dated[0])
        for term in sorted(terms, key=lambda t: (t.kind, str(t.attribute))):
            out.append(
                {
                    "hint": "order_by",
                    "matched": word,
                    "kind": term.kind,
                    "attribute": term.attribute,
                    "order_by": [f"{sign}{term.attribute}"],
                }
            )
        if terms:
            used[index] = True
    return out


__all__ = ["hints"]
