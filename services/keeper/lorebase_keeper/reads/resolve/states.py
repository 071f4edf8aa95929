"""Verbs and participles of state: words that say something holds of a Record.

- A verb of state of the lexicon (lexicon.STATES: "expired", "lapsed", "expire", "expiring") speaks
  of the date a Record ends (graded.ends: a date Attribute whose name or description says it ends
  something, "valid_to", "Last day the agreement applies"). A past participle alone ("expired
  contracts") is that date before the day of the Revision read: a `comparison` `lt` that day (level
  `state`). With a date after it ("expire before 2027") the comparison level binds the date to that
  Attribute. A stored value spelled the same ("expired", a Contract status) is found first, at the
  exact level, and takes the word.
- A participle of a Relation's verb ("flagged" of `flags`, "stocked" of `stocks`, "supplied" of
  `supplies`) is a `has_link` hint: the Records at the object end of the verb having at least one
  Link of that Relation, with the `path` to follow from them (POST /traverse). Not for a Kind the
  caller may not read: the vocabulary holds only readable Relations. "not flagged", "never
  flagged" and "unflagged" add `negated: true`: the Records with no such Link. A participle the
  names level grounded to its Relation ("inspected" of `inspects`) is read so too; the Relation
  candidate stays.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.resolve.comparisons import entry
from lorebase_keeper.reads.resolve.graded import ends
from lorebase_keeper.reads.resolve.ground import Span
from lorebase_keeper.reads.resolve.lexicon import STATES
from lorebase_keeper.reads.resolve.vocabulary import Vocabulary, relations
from lorebase_keeper.reads.resolve.words import Word, inflections

NEGATIONS = frozenset({"not", "never"})


def _bases(word: str) -> list[str]:
    """The verbs a participle may come from: "flagged" flag, "stocked" stock, "supplied" supply."""
    out: list[str] = []
    if len(word) > 4 and word.endswith("ied"):
        out.append(word[:-3] + "y")
    if len(word) > 4 and word.endswith("ed"):
        out += [word[:-2], word[:-1]]
        if len(word) > 5 and word[-3] == word[-4]:
            out.append(word[:-3])  # a doubled consonant
    return out


def states(
    words: list[Word],
    used: list[bool],
    spans: list[Span],
    vocab: Vocabulary,
    domain: Domain,
    today: date | None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Comparisons and `has_link` hints of the verbs of state left; their words are marked used."""
    kinds = sorted({h.term.kind for s in spans for h in s.hits if h.term.target in ("kind", "value")})
    candidates: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    found = relations(vocab)
    # a participle the names level read as its Relation ("inspected": inspects) is still a state
    participles = {
        s.start
        for s in spans
        if s.end == s.start + 1 and s.hits and all(h.term.target == "relation" for h in s.hits)
    }
    for index, word in enumerate(words):
        if used[index] and index not in participles:
            continue
        state = STATES.get(word.sense)
        if state is not None:
            if state[1] and today is not None:
                for term, score in ends(domain, vocab, kinds):
                    shown = today.isoformat()
                    candidates.append(entry(term, "lt", shown, score, "state", word.key, None))
                    used[index] = True
            continue
        key = word.key
        negated = key.startswith("un") and bool(_bases(key[2:]))  # "unflagged"
        if negated:
            key = key[2:]
        before = index - 1
        if not negated and before >= 0 and not used[before] and words[before].sense in NEGATIONS:
            negated = True  # "not flagged"
        else:
            before = index
        bases = _bases(key)
        if not bases:
            continue
        for term in found:
            relation = domain.schema.relations[str(term.relation)]
            for name, forward in ((relation.name, True), (relation.inverse, False)):
                if not name or "_" in name or not {name, *inflections(name)} & set(bases):
                    continue
                # the object of the verb: the to end of a forward name, the from end of an inverse
                target = relation.to_kind if forward else relation.from_kind
                other = relation.from_kind if forward else relation.to_kind
                path = (relation.inverse if forward else relation.name) or ""
                if (kinds and target not in kinds) or not path:
                    continue
                hint: dict[str, Any] = {
                    "hint": "has_link",
                    "matched": " ".join(w.key for w in words[before : index + 1]),
                    "kind": target,
                    "relation": relation.name,
                    "path": [path],
                    "to": other,
                }
                if negated:
                    hint["negated"] = True  # the Records with no such Link
                out.append(hint)
                used[before : index + 1] = [True] * (index + 1 - before)
    out += _without(words, used, spans, found)
    return candidates, out


WITHOUT = [("without", "any"), ("with", "no"), ("without",)]
SKIPPED = frozenset({"a", "an", "any", "the"})


def _without(
    words: list[Word], used: list[bool], spans: list[Span], found: list[Any]
) -> list[dict[str, Any]]:
    """ "suppliers without risk flags", "parts with no supplier": a negated `has_link` on the other
    Kind the question names, along every readable Relation joining it to the Kind said after."""
    out: list[dict[str, Any]] = []
    named = {h.term.kind for s in spans for h in s.hits if h.term.target in ("kind", "value")}
    for index in range(len(words)):
        phrase = next(
            (
                p
                for p in WITHOUT
                if tuple(w.sense for w in words[index : index + len(p)]) == p
                and not any(used[index : index + len(p)])
            ),
            None,
        )
        if phrase is None:
            continue
        after = index + len(phrase)
        while after < len(words) and words[after].sense in SKIPPED:
            after += 1
        span = next((s for s in spans if s.start == after), None)
        if span is None or any(h.term.target == "attribute" for h in span.hits):
            continue
        others = sorted({h.term.kind for h in span.hits if h.term.target == "kind"})
        made = []
        for other in others:
            for per in sorted(named - {other}):
                for term in found:
                    if {term.kind, term.to} != {per, other} or term.kind == term.to:
                        continue
                    path = term.relation if term.kind == per else term.inverse
                    if not path:
                        continue
                    made.append(
                        {
                            "hint": "has_link",
                            "matched": " ".join(w.key for w in words[index : span.end]),
                            "kind": per,
                            "relation": term.relation,
                            "path": [path],
                            "to": other,
                            "negated": True,
                        }
                    )
        if made:
            out += made
            used[index:after] = [True] * (after - index)
    return out


__all__ = ["states"]
