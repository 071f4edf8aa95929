"""The word levels of resolve: which phrases of the question name which Terms of the vocabulary.

Phrases of one to three words are tried longest first. A phrase matches at the levels exact (1.0),
synonym (0.95) and partial (0.5 to 0.9, by the share of the name it covers), then, for its last
word, in an inflected form ("suppliers" is the Kind Supplier). A single function word never
matches; a code matches only as written. What is left is tried word by word for similar spelling:
trigram similarity as pg_trgm computes it (at least `similarity_threshold`, capped at 0.9) or a few
edits for longer words (words.edits_allowed), whichever scores better, always below the exact and
synonym levels. Each step only takes words no earlier step took.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lorebase.settings_model import ResolveLimits
from lorebase.vocabulary import trigrams
from lorebase_keeper.reads.resolve.lexicon import WORDS
from lorebase_keeper.reads.resolve.vocabulary import Term, Vocabulary
from lorebase_keeper.reads.resolve.words import (
    Word,
    edit_distance,
    edits_allowed,
    inflections,
    is_number_word,
    typo_score,
)

LEVEL_SCORE = {"exact": 1.0, "synonym": 0.95}


@dataclass
class Hit:
    term: Term
    level: str
    score: float


@dataclass
class Span:
    """Words start..end (exclusive) of the question and what they name."""

    start: int
    end: int
    matched: str
    hits: list[Hit] = field(default_factory=list)


def is_number(word: Word) -> bool:
    """Digits or a number word ("3", "three", "twenty-five", "dozen")."""
    return word.sense.replace(".", "", 1).isdigit() or is_number_word(word)


def _written(term: Term, raw: str) -> bool:
    return not term.code or raw == term.written


def _lookup(vocab: Vocabulary, key: str, raw: str, codes: bool = True) -> list[Hit]:
    hits = [
        Hit(t, "exact", 1.0) for t in vocab.exact.get(key, []) if _written(t, raw) and (codes or not t.code)
    ]
    hits += [
        Hit(t, "synonym", LEVEL_SCORE["synonym"])
        for t in vocab.synonyms.get(key, [])
        if _written(t, raw) and (codes or not t.code)
    ]
    hits += [Hit(t, "partial", round(0.5 + 0.4 * t.cover, 4)) for t in vocab.partial.get(key, [])]
    return hits


def names(words: list[Word], used: list[bool], vocab: Vocabulary) -> list[Span]:
    """The exact, synonym and partial levels (also for an inflected last word)."""
    spans: list[Span] = []
    for size in (3, 2, 1):
        for start in range(len(words) - size + 1):
            if any(used[start : start + size]):
                continue
            window = words[start : start + size]
            function_word = size == 1 and window[0].key in vocab.stop
            if window[0].key in vocab.stop and size > 1 and window[-1].key in vocab.stop:
                continue
            key = " ".join(w.key for w in window)
            raw = " ".join(w.raw for w in window)
            hits = _lookup(vocab, key, raw)
            if not is_number(window[-1]):
                stem = " ".join(w.key for w in window[:-1])
                for base in inflections(window[-1].key):
                    found = _lookup(vocab, f"{stem} {base}".strip(), raw, codes=False)
                    if found:
                        hits += [h for h in found if h.term not in [k.term for k in hits]]
                        break
            if function_word:  # "in" is never a word of the Domain; "IN" may be a code
                hits = [h for h in hits if h.term.code and h.term.written == window[0].raw]
            if any(h.level == "exact" and h.term.target != "relation" for h in hits):
                hits = [h for h in hits if h.level != "partial"]  # a name written whole is that name
            if hits:
                spans.append(Span(start, start + size, key, hits))
                used[start : start + size] = [True] * size
    return spans


def similar(words: list[Word], used: list[bool], vocab: Vocabulary, limits: ResolveLimits) -> list[Span]:
    """The similar-spelling level, word by word: trigrams or a few edits, never for codes."""
    spans: list[Span] = []
    tables = [(vocab.exact, 1.0), (vocab.synonyms, 1.0)]
    for index, word in enumerate(words):
        if (
            used[index]
            or len(word.key) < 3
            or word.key in vocab.stop
            or is_number(word)
            or word.key in WORDS
            or word.sense != word.key  # a word of the lexicon in another language
            or word.key in vocab.graded
        ):
            continue  # words of the lexicon ("older", "cheaper") are English, not misspelt names
        forms = [word.key, *inflections(word.key)]
        grams = trigrams(word.key)
        best: dict[int, Hit] = {}
        for table, _ in tables:
            for term_word, terms in table.items():
                known = vocab.grams.get(term_word)
                if known is None:
                    known = vocab.grams[term_word] = trigrams(term_word)
                score = len(grams & known) / len(grams | known) if grams and known else 0.0
                level_score = min(score, 0.9) if score >= limits.similarity_threshold else 0.0
                for form in forms:
                    allowed = edits_allowed(form, limits)
                    if allowed and abs(len(term_word) - len(form)) <= allowed:
                        edits = edit_distance(form, term_word, allowed)
                        if edits <= allowed:
                            level_score = max(level_score, typo_score(form, edits))
                if not level_score:
                    continue
                for term in terms:
                    if term.code:
                        continue
                    seen = best.get(id(term))
                    if seen is None or seen.score < level_score:
                        best[id(term)] = Hit(term, "similar", level_score)
        if best:
            spans.append(Span(index, index + 1, word.key, list(best.values())))
            used[index] = True
    return spans


def candidate(term: Term, level: str, score: float, matched: str) -> dict[str, Any]:
    out: dict[str, Any] = {"target": term.target, "kind": term.kind}
    if term.relation is not None:
        out["relation"] = term.relation
        out["to"] = term.to
        if term.target == "relation" and term.inverse:
            out["inverse"] = term.inverse
    if term.attribute is not None:
        out["attribute"] = term.attribute
        out["type"] = term.type
    if term.target == "value":
        values = sorted(term.values)
        out["values"] = values
        out["predicate"] = (
            {"attr": term.attribute, "op": "eq", "value": values[0]}
            if len(values) == 1
            else {"attr": term.attribute, "op": "in", "value": values}
        )
    out.update(score=round(score, 4), level=level, matched=matched)
    if term.target == "value":
        out["records"] = sum(term.values.values())
    return out


def merged(span: Span) -> list[dict[str, Any]]:
    """One candidate per (target, Kind, Relation, Attribute) of a span: the values of every level
    that matched, the best level."""
    best: dict[tuple[str, str, str | None, str | None], tuple[Term, str, float]] = {}
    for hit in span.hits:
        term = hit.term
        key = (term.target, term.kind, term.relation, term.attribute)
        if key in best:
            known, level, score = best[key]
            values = {**known.values, **term.values}
            level, score = (level, score) if score >= hit.score else (hit.level, hit.score)
            best[key] = (Term(**{**known.__dict__, "values": values}), level, score)
        else:
            best[key] = (Term(**{**term.__dict__, "values": dict(term.values)}), hit.level, hit.score)
    return [candidate(term, level, score, span.matched) for term, level, score in best.values()]


def ordered(candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        candidates,
        key=lambda c: (
            -c["score"],
            c["matched"],
            c["target"],
            c["kind"],
            c.get("relation") or "",
            c.get("attribute") or "",
            str(c.get("predicate", {}).get("op", "")),
        ),
    )


__all__ = ["Hit", "Span", "candidate", "is_number", "merged", "names", "ordered", "similar"]
