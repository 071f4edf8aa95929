"""The Record level of resolve: Record keys (`S-1001`) and Record names (title Attributes, however
long) ground to the Records themselves.

Keys: a word with a digit that fits the pattern of a Kind's key Attribute (any word with a digit
when the key has no pattern) and names a Record at the read point. Titles: a run of words the
earlier levels left, longest first, found in the titles of each Kind by whole words, in order:
the whole title (exact, 1.0), its beginning (prefix, 0.9), or anywhere (words, 0.85); a word of
`one_edit_min_letters` letters or more may be a typo of a title word (similar, below those). A
run that fits more than `max_record_candidates` titles of a Kind names none of them, nor does one
whose words are together in more than TITLE_SCAN titles: they are common words, not a name. Titles are the title Attribute's distinct values, kept per Revision with the
other indexed values (vocabulary.py), so a name costs no scan; the Records holding a title are
found by the values index.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import Any

from lorebase.contract.reads import QueryBody
from lorebase.settings_model import ResolveLimits
from lorebase_keeper.access import Access
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.graph import load_records
from lorebase_keeper.reads.query import query_in
from lorebase_keeper.reads.resolve.ground import is_number
from lorebase_keeper.reads.resolve.vocabulary import TITLE_WORD, Titles, Vocabulary
from lorebase_keeper.reads.resolve.words import Word, edit_distance, edits_allowed, is_number_word, typo_score
from lorebase_keeper.reads.snapshots import ReadPoint
from lorebase_store import Txn

TITLE_SCAN = 1000  # titles holding every word of a run looked at, at most (more: not a name)


def _record(
    kind: str, attribute: str, type_: str, values: list[str], keys: list[str], key_attr: str | None
) -> dict[str, Any]:
    if key_attr is not None:
        attr, shown = key_attr, sorted(keys)
    else:
        attr, shown = attribute, sorted(values)
    predicate = (
        {"attr": attr, "op": "eq", "value": shown[0]}
        if len(shown) == 1
        else {"attr": attr, "op": "in", "value": shown}
    )
    return {
        "target": "record",
        "kind": kind,
        "attribute": attribute,
        "type": type_,
        "values": sorted(values),
        "refs": [f"{kind}/{k}" for k in sorted(keys)],
        "predicate": predicate,
    }


async def keys(
    txn: Txn, domain: Domain, point: ReadPoint, words: list[Word], used: list[bool], vocab: Vocabulary
) -> list[dict[str, Any]]:
    """Record candidates for words that are keys of Records; their words are marked used."""
    wanted: dict[tuple[str, str], list[int]] = {}
    for index, word in enumerate(words):
        if used[index] or not any(c.isdigit() for c in word.raw) or is_number(word):
            continue
        for kind, _, pattern in vocab.keys:
            for written in dict.fromkeys((word.raw, word.raw.upper())):
                if pattern is None or pattern.search(written):
                    wanted.setdefault((kind, written), []).append(index)
    if not wanted:
        return []
    found = await load_records(txn, domain, point, sorted(wanted))
    out: list[dict[str, Any]] = []
    key_attr = {kind: attr for kind, attr, _ in vocab.keys}
    for kind, key in sorted(found):
        attr = key_attr[kind]
        entry = _record(kind, attr, domain.schema.kinds[kind].attributes[attr].type_name, [key], [key], attr)
        index = wanted[(kind, key)][0]
        entry.update(score=1.0, level="exact", matched=words[index].key, records=1)
        out.append(entry)
        for i in wanted[(kind, key)]:
            used[i] = True
    return out


def _fix(word: str, known_words: set[str], limits: ResolveLimits) -> tuple[str, int] | None:
    """The word of `known_words` that `word` is a typo of (with the edits), if any."""
    allowed = edits_allowed(word, limits)
    if not allowed:
        return None
    best = None
    for known in sorted(known_words):
        if abs(len(known) - len(word)) > allowed:
            continue
        edits = edit_distance(word, known, allowed)
        if edits <= allowed and (best is None or (edits, known) < (best[1], best[0])):
            best = (known, edits)
    return best


def _match(run: list[str], titles: Titles, limits: ResolveLimits) -> tuple[list[str], str, float] | None:
    """The titles holding the words of `run` in order; a misspelt word is looked for among the
    words of the titles holding the others (so one word at least must be spelled right)."""
    spelled = [w for w in run if w in titles.words]
    if not spelled:
        return None
    sets = sorted((titles.words[w] for w in spelled), key=len)
    if len(sets) == 1 and len(run) == 1 and len(sets[0]) > TITLE_SCAN:
        return None  # a common word, not a name (what the scan below finds, without scanning)
    # the titles holding every word, the rarest word's first (no intersection of large sets is made)
    holding: Iterable[str] = (t for t in sets[0] if all(t in other for other in sets[1:]))
    words, edits = list(run), 0
    if len(spelled) < len(run):
        if len(sets[0]) > TITLE_SCAN:
            return None
        kept = set(holding)
        near = {w for title in kept for w in TITLE_WORD.findall(title.casefold())}
        for index, word in enumerate(run):
            if word in titles.words:
                continue
            fixed = _fix(word, near, limits)
            if fixed is None:
                return None
            words[index], edits = fixed[0], edits + fixed[1]
            holding_fixed = titles.words[fixed[0]]
            kept = {title for title in kept if title in holding_fixed}
        holding = kept
    together = list(islice(holding, TITLE_SCAN + 1))
    if len(together) > TITLE_SCAN:
        return None  # words together in that many titles are common words, not a name
    found: list[tuple[str, float]] = []
    for title in together:
        if len(found) > limits.max_record_candidates:
            return None  # more titles than a name may name: the answer is None in any order
        parts = TITLE_WORD.findall(title.casefold())
        if parts == words:
            level, score = "exact", 1.0
        elif parts[: len(words)] == words:
            level, score = "prefix", 0.9
        elif any(parts[i : i + len(words)] == words for i in range(len(parts))):
            level, score = "words", 0.85
        else:
            continue
        found.append((title, score))
    if not found or len(found) > limits.max_record_candidates:
        return None
    best = max(score for _, score in found)
    level = {1.0: "exact", 0.9: "prefix", 0.85: "words"}[best]
    if edits:
        level, best = "similar", min(best, typo_score(" ".join(run), edits))
    return sorted(title for title, _ in found), level, best


async def titles(
    txn: Txn,
    access: Access,
    domain: Domain,
    point: ReadPoint,
    words: list[Word],
    used: list[bool],
    vocab: Vocabulary,
    limits: ResolveLimits,
    *,
    whole: bool = False,
) -> list[dict[str, Any]]:
    """Record candidates for runs of words that name Records by their titles. With `whole`, only
    runs of two words or more that are a whole title or its beginning (tried before the other
    levels, so that "Depot Duisburg Logport" is the Record, not a Kind, a city and a word)."""
    out: list[dict[str, Any]] = []
    # a number word is a word of a name only when the whole name (or its beginning) is written
    free = [
        not u and w.key not in vocab.stop and (not is_number(w) or (whole and is_number_word(w)))
        for u, w in zip(used, words, strict=True)
    ]
    for size in (4, 3, 2) if whole else (4, 3, 2, 1):
        for start in range(len(words) - size + 1):
            if not all(free[start : start + size]):
                continue
            if size == 1 and len(words[start].key) < 4:
                continue
            # titles are held by their \w+ words: "three-phase" is "three" and "phase"
            run = [part for w in words[start : start + size] for part in TITLE_WORD.findall(w.key)]
            matched: list[dict[str, Any]] = []
            for index in vocab.titles:
                found = _match(run, index, limits)
                if found is None:
                    continue
                values, level, score = found
                if whole and level not in ("exact", "prefix"):
                    continue
                keys_ = await _keys_of(txn, access, domain, point, index, values)
                if not keys_:
                    continue
                attr = domain.schema.kinds[index.kind].attributes[index.attribute]
                entry = _record(index.kind, index.attribute, attr.type_name, values, keys_, index.key)
                matched_words = " ".join(w.key for w in words[start : start + size])
                entry.update(score=score, level=level, matched=matched_words, records=len(keys_))
                matched.append(entry)
            if matched:
                out += matched
                free[start : start + size] = [False] * size
                used[start : start + size] = [True] * size
    return out


async def _keys_of(
    txn: Txn, access: Access, domain: Domain, point: ReadPoint, index: Titles, values: list[str]
) -> list[str]:
    if point.at is None:
        found: list[str] = []
        for value in values:
            held = await txn.keys_with_value(
                domain.id, point.branch.name, index.kind, index.attribute, [value]
            )
            found += held.get(value, [])
        return sorted(set(found))
    body = QueryBody(
        kind=index.kind,
        where={"attr": index.attribute, "op": "in", "value": values},
        limit=max(len(values) * 10, 10),
        branch=point.branch.name,
        at=point.revision,
        coverage=False,
    )
    answer = await query_in(txn, access, domain, body)
    return sorted({r["key"] for r in answer["records"]})


__all__ = ["keys", "titles"]
