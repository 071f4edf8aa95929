"""Intent hints: what the question asks to do with the Records, as POST /query members, so that an
agent builds the aggregate or the order without parsing English itself.

- "how many", "number of", "count": `{"hint": "count", "aggregate": {"count": true}}`;
- "per X", "by X", "for each X", "grouped by X", where X names an Attribute of a Kind:
  `{"hint": "group_by", "kind": K, "attribute": X, "aggregate": {"group_by": X}}` per Kind having it;
- a superlative next to an Attribute ("highest risk score", "lowest unit cost", "latest order
  date"): `{"hint": "order_by", "kind": K, "attribute": A, "order_by": ["-A"]}` (ascending for
  lowest, cheapest, earliest...);
- a superlative of the lexicon without an Attribute ("the most expensive", "the riskiest", "the
  most recent", "the oldest"): the same on the Attributes of the named Kinds having its dimension
  (graded.py), with `score` and `level: superlative` (ties offered, each with its score);
- with a count, "each X", "per X", "for each X" where X is a Kind and a Relation joins X to
  another Kind the question names: `{"hint": "count_links", "kind": X, "relation": R, "path": [R or
  its inverse, read from X], "to": the other Kind}`, Links counted per Record of X;
- "the most X", "the fewest X" where X is a Kind joined to another Kind the question names ("the
  supplier with the most risk flags"): a `count_links` hint with `order` (desc, asc) and `limit`
  when a number is said ("the two suppliers with the most parts");
- a number said with a superlative ("the three cheapest", "top 5 riskiest", "the cheapest ten") adds
  `limit`; "top 5 suppliers by risk score" is an order with a limit, not a grouping.

The words of a hint are taken: they are not unmatched. English words only, for now.
"""

from __future__ import annotations

from typing import Any

from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.resolve.comparisons import OPERATORS
from lorebase_keeper.reads.resolve.graded import along, base_type, declared_along, operator, superlative_at
from lorebase_keeper.reads.resolve.ground import Span
from lorebase_keeper.reads.resolve.lexicon import DATES, NUMERIC, TOP
from lorebase_keeper.reads.resolve.vocabulary import Term, Vocabulary, relations
from lorebase_keeper.reads.resolve.words import Word, number_at

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
ORDERED = (*NUMERIC, *DATES)


def _at(words: list[Word], used: list[bool], index: int, phrase: tuple[str, ...]) -> bool:
    window = tuple(w.sense for w in words[index : index + len(phrase)])
    return window == phrase and not any(used[index : index + len(phrase)])


def hints(
    words: list[Word], used: list[bool], spans: list[Span], vocab: Vocabulary, domain: Domain
) -> list[dict[str, Any]]:
    """The hints of the question, in the order of their words; their words are marked used."""
    by_start = {s.start: s for s in spans}
    out: list[dict[str, Any]] = []
    kinds = sorted({h.term.kind for s in spans for h in s.hits if h.term.target in ("kind", "value")})
    for index in range(len(words)):
        for phrase in COUNT:
            if _at(words, used, index, phrase):
                said = " ".join(w.key for w in words[index : index + len(phrase)])
                out.append({"hint": "count", "matched": said, "aggregate": {"count": True}})
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
                        "matched": " ".join(
                            [*(w.key for w in words[index : index + len(phrase)]), span.matched]
                        ),
                        "kind": term.kind,
                        "attribute": term.attribute,
                        "aggregate": {"group_by": term.attribute},
                    }
                )
            if terms:
                used[index : index + len(phrase)] = [True] * len(phrase)
                break
        if _top_by(words, used, index, by_start, out):
            continue
        _superlative(words, used, index, spans, by_start, vocab, domain, kinds, out)
    if any(h["hint"] == "count" for h in out):
        out += _count_links(words, used, spans, vocab)
    return out


PER = [("for", "each"), ("by", "each"), ("per",), ("each",), ("every",)]


def _count_links(
    words: list[Word], used: list[bool], spans: list[Span], vocab: Vocabulary
) -> list[dict[str, Any]]:
    """ "how many parts does each tier 1 supplier supply", "number of parts per supplier": with a
    count, a per-word before a Kind (within a few words) asks for the Links of a Relation counted per
    Record of that Kind. The Relation is the one the question names between that Kind and another
    it names, else every readable Relation between them (ties offered, in name order)."""
    named = sorted({h.term.kind for s in spans for h in s.hits if h.term.target == "kind"})
    for index in range(len(words)):
        for phrase in PER:
            if not _at(words, used, index, phrase):
                continue
            after = index + len(phrase)
            span = next(
                (
                    s
                    for s in spans
                    if after <= s.start <= after + 3 and any(h.term.target == "kind" for h in s.hits)
                ),
                None,
            )
            if span is None:
                continue
            out: list[dict[str, Any]] = []
            for per in sorted({h.term.kind for h in span.hits if h.term.target == "kind"}):
                others = [k for k in named if k != per]
                for term in _joins(per, others, spans, vocab):
                    hint = _linked_hint(per, term, " ".join(w.key for w in words[index : span.end]))
                    if hint is not None:
                        out.append(hint)
            if out:
                used[index:after] = [True] * len(phrase)
                return out
    return []


LINKED = {"most": "desc", "fewest": "asc", "least": "asc"}


def _joins(per: str, others: list[str], spans: list[Span], vocab: Vocabulary) -> list[Term]:
    """The Relations joining `per` to one of `others`: those the question names, else every
    readable one between them, in name order, one Term each."""
    said = [h.term for s in spans for h in s.hits if h.term.target == "relation"]
    joins = [
        t
        for t in said
        if per in (t.kind, t.to)
        and t.kind != t.to
        and (not others or ({t.kind, t.to} - {per}) <= set(others))
    ]
    if not joins:
        joins = [
            t
            for t in relations(vocab)
            if t.kind != t.to and per in (t.kind, t.to) and {t.kind, t.to} - {per} <= set(others)
        ]
    unique: dict[str, Term] = {}
    for term in joins:
        unique.setdefault(str(term.relation), term)
    return [unique[name] for name in sorted(unique)]


def _linked_hint(per: str, term: Term, matched: str) -> dict[str, Any] | None:
    forward = term.kind == per
    path = term.relation if forward else term.inverse
    if not path:
        return None
    return {
        "hint": "count_links",
        "matched": matched,
        "kind": per,
        "relation": term.relation,
        "path": [path],
        "to": term.to if forward else term.kind,
    }


def _most_linked(
    words: list[Word],
    used: list[bool],
    index: int,
    spans: list[Span],
    by_start: dict[int, Span],
    vocab: Vocabulary,
    out: list[dict[str, Any]],
) -> bool:
    """ "the supplier with the most risk flags", "the two parts with the fewest suppliers": Links
    counted per Record of the other Kind named, ordered (`order`), with `limit` when a number is
    said."""
    word = words[index].sense
    span = by_start.get(index + 1)
    if used[index] or word not in LINKED or span is None:
        return False
    counted = sorted({h.term.kind for h in span.hits if h.term.target == "kind"})
    asked = sorted(
        {h.term.kind for s in spans if s is not span for h in s.hits if h.term.target == "kind"}
        - set(counted)
    )
    if len(counted) != 1 or not asked:
        return False
    kind_start = next(
        (
            s.start
            for s in spans
            if s.end <= index and s.start >= index - 6 and any(h.term.target == "kind" for h in s.hits)
        ),
        None,
    )
    before = _count_before(words, used, kind_start) if kind_start is not None else None
    made = []
    for per in asked:
        for term in _joins(per, counted, spans, vocab):
            hint = _linked_hint(per, term, " ".join(w.key for w in words[index : span.end]))
            if hint is not None:
                hint["order"] = LINKED[word]
                if before is not None:
                    hint["limit"] = before[1]
                made.append(hint)
    if not made:
        return False
    out += made
    used[index] = True
    if before is not None and kind_start is not None:
        used[before[0] : kind_start] = [True] * (kind_start - before[0])
    return True


def _count_before(words: list[Word], used: list[bool], index: int) -> tuple[int, int] | None:
    """(first word, number) of a count said just before `index`: "three", "top 5", "the 10"."""
    for start in range(max(0, index - 4), index):
        number = number_at(words, start)
        if number is None or start + number[0] != index or any(used[start:index]):
            continue
        if not number[1].isdigit() or int(number[1]) < 1:
            return None
        first = start - 1 if start > 0 and words[start - 1].sense in TOP and not used[start - 1] else start
        return first, int(number[1])
    return None


def _count_before_kind(
    words: list[Word], used: list[bool], index: int, spans: list[Span], vocab: Vocabulary
) -> tuple[int, int] | None:
    """(first word, number) of a count said before the Kind a superlative ranks, with only function
    words between them: "the three parts with the lowest unit cost", "which 5 suppliers are the
    riskiest", "les trois pièces les moins chères"."""
    for span in spans:
        if span.end > index or index - span.end > 4 or not any(h.term.target == "kind" for h in span.hits):
            continue
        between = range(span.end, index)
        if all(not used[i] and (words[i].key in vocab.stop or words[i].sense == "the") for i in between):
            found = _count_before(words, used, span.start)
            if found is None or any(
                tuple(w.sense for w in words[max(0, found[0] - len(p)) : found[0]]) == p for p, _ in OPERATORS
            ):
                return None  # "more than 5 parts": a number compared, not a count of Records
            return found
    return None


def _count_after(words: list[Word], used: list[bool], index: int) -> tuple[int, int] | None:
    """(words taken, number) of a count said just after a superlative: "the cheapest three"."""
    number = number_at(words, index)
    if number is None or any(used[index : index + number[0]]) or not number[1].isdigit():
        return None
    return number[0], int(number[1])


def _top_by(
    words: list[Word], used: list[bool], index: int, by_start: dict[int, Span], out: list[dict[str, Any]]
) -> bool:
    """ "top 5 suppliers by risk score": an order, not a grouping (a number after top, then "by" and
    a number-like Attribute within a few words)."""
    if words[index].sense not in TOP or used[index]:
        return False
    number = number_at(words, index + 1)
    if number is None or not number[1].isdigit() or any(used[index + 1 : index + 1 + number[0]]):
        return False
    after = index + 1 + number[0]
    for at in range(after, min(len(words) - 1, after + 4)):
        if words[at].sense != "by" or used[at]:
            continue
        span = by_start.get(at + 1)
        if span is None:
            return False
        terms = [
            h.term
            for h in span.hits
            if h.term.target == "attribute" and h.term.relation is None and base_type(h.term) in ORDERED
        ]
        sign = "-" if TOP[words[index].sense] > 0 else ""
        for term in sorted(terms, key=lambda t: (t.kind, str(t.attribute))):
            matched = " ".join(w.key for w in [*words[index:after], words[at], *words[span.start : span.end]])
            out.append(
                {
                    "hint": "order_by",
                    "matched": matched,
                    "kind": term.kind,
                    "attribute": term.attribute,
                    "order_by": [f"{sign}{term.attribute}"],
                    "limit": int(number[1]),
                }
            )
        if terms:
            used[index:after] = [True] * (after - index)
            used[at] = True
            return True
        return False
    return False


def _superlative(
    words: list[Word],
    used: list[bool],
    index: int,
    spans: list[Span],
    by_start: dict[int, Span],
    vocab: Vocabulary,
    domain: Domain,
    kinds: list[str],
    out: list[dict[str, Any]],
) -> None:
    """A superlative at `index`: on the Attribute next to it ("highest risk score"), else on the
    Attributes of the named Kinds having its dimension ("the most expensive", "the riskiest"),
    with `limit` when a number is said ("the three cheapest", "top 5 riskiest")."""
    if _most_linked(words, used, index, spans, by_start, vocab, out):
        return
    graded = superlative_at(words, used, index, vocab)
    word = words[index].sense
    if graded is None and (used[index] or word not in DESCENDING | ASCENDING):
        return
    size = graded.size if graded is not None else 1
    found = [by_start.get(index + size), next((s for s in spans if s.end == index), None)]
    named: list[Term] = []
    for span in found:
        if span is not None:
            named = [h.term for h in span.hits if h.term.target == "attribute" and h.term.relation is None]
        if named:
            break
    scored: list[tuple[Term, float | None]] = [
        (t, None) for t in sorted(named, key=lambda t: (t.kind, str(t.attribute)))
    ]
    if not scored and graded is not None:
        if graded.declared:
            scored = [(t, s) for t, s in declared_along(graded, kinds)]
        else:
            scored = [(t, s) for t, s in along(domain, vocab, kinds, graded.dimension)]
    if not scored:
        return
    before = _count_before(words, used, index)
    after = None if before is not None else _count_after(words, used, index + size)
    if before is None and after is None:  # "the three parts with the lowest unit cost"
        before = _count_before_kind(words, used, index, spans, vocab)
    first = before[0] if before is not None else index
    last = index + size + (after[0] if after is not None else 0)
    limit = before[1] if before is not None else (after[1] if after is not None else None)
    matched = " ".join(w.key for w in words[first:last])
    for term, score in scored:
        if graded is not None:
            descending = operator(graded.dimension, graded.direction, term, graded) == "gt"
        else:
            descending = word in DESCENDING
        hint: dict[str, Any] = {
            "hint": "order_by",
            "matched": matched,
            "kind": term.kind,
            "attribute": term.attribute,
            "order_by": [f"{'-' if descending else ''}{term.attribute}"],
        }
        if limit is not None:
            hint["limit"] = limit
        if score is not None:
            hint.update(score=score, level="superlative")
        out.append(hint)
    used[first:last] = [True] * (last - first)


__all__ = ["hints"]
