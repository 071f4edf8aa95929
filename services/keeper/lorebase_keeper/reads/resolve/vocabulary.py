"""The vocabulary resolve grounds words in, built once per Revision and set of readable names.

What a phrase can name, and at which level:

- exact: Kind names (also split: "purchase order"), Attribute names of Kinds and of Relations'
  Links (also with spaces: "lead time days"), Relation names and their inverses ("supplied by",
  "supplies"), and the indexed stored values of Attributes;
- synonym: the schema's aliases of Kinds and Attributes, and value_aliases;
- partial: a run of the words of a name ("risk" and "score" of `risk_score`, "lead time" of
  `lead_time_days`), scored by how much of the name it covers;
- titles: the title Attribute's values of each Kind with a title (Record names, however long), by
  word, for the Record level (titles.py); and the key Attribute of each Kind with one key.

Only what the caller may read goes in: readable Kinds, their cleared Attributes, Relations whose
two ends are readable with their cleared Link Attributes. Values of sensitive Attributes are never
indexed, nor are titles that are sensitive.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import msgspec

from lorebase.vocabulary import indexed
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.resolve.words import inflections, is_code, split_name, stop_words
from lorebase_keeper.reads.value_counts import ValueCounts
from lorebase_store import BranchChain, Txn

TITLE_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Term:
    """Something a phrase can mean: a Kind, an Attribute (of a Kind, or of a Relation's Links), a
    Relation, or stored values of an Attribute."""

    target: str  # kind | attribute | relation | value
    kind: str
    attribute: str | None = None
    type: str | None = None
    values: dict[str, int] = field(default_factory=dict)  # stored value -> Records
    relation: str | None = None
    to: str | None = None  # relation: the Kind at the other end
    inverse: str | None = None  # relation: its name read from the other end
    code: bool = False  # a value (or alias) that matches only as written
    written: str = ""  # the spelling a code must have
    cover: float = 1.0  # partial: the share of the name the phrase covers
    description: str = ""


@dataclass
class Titles:
    """The titles of one Kind's Records, by word, and how to find a Record from its title."""

    kind: str
    attribute: str
    key: str | None
    records: dict[str, int] = field(default_factory=dict)  # title -> Records holding it
    words: dict[str, set[str]] = field(default_factory=dict)  # word -> titles holding it


@dataclass
class Vocabulary:
    exact: dict[str, list[Term]] = field(default_factory=dict)
    synonyms: dict[str, list[Term]] = field(default_factory=dict)
    partial: dict[str, list[Term]] = field(default_factory=dict)
    attributes: list[Term] = field(default_factory=list)  # every readable Attribute, Links' too
    titles: list[Titles] = field(default_factory=list)
    keys: list[tuple[str, str, re.Pattern[str] | None]] = field(default_factory=list)  # Kind, key, pattern
    stop: frozenset[str] = frozenset()
    grams: dict[str, set[str]] = field(default_factory=dict)  # trigrams of the names, as first needed

    def add(self, table: dict[str, list[Term]], word: str, term: Term) -> None:
        table.setdefault(word.casefold().strip(), []).append(term)

    def add_name(self, name: str, term: Term) -> None:
        """A schema name: exact as written and with its words spaced; partial for runs of its words."""
        words = split_name(name)
        self.add(self.exact, name, term)
        if " ".join(words) != name.casefold():
            self.add(self.exact, " ".join(words), term)
        letters = sum(len(w) for w in words)
        for size in range(1, len(words)):
            for start in range(len(words) - size + 1):
                run = words[start : start + size]
                if all(w in self.stop or len(w) < 3 for w in run):
                    continue
                cover = sum(len(w) for w in run) / letters
                part = Term(**{**term.__dict__, "values": dict(term.values), "cover": cover})
                self.add(self.partial, " ".join(run), part)


_VOCABULARIES: OrderedDict[tuple[Any, ...], Vocabulary] = OrderedDict()
_COUNTS = ValueCounts()
_CACHED = 32


async def vocabulary(
    txn: Txn,
    access: Access,
    domain: Domain,
    branch: str,
    kinds: list[str],
    revision: str | None = None,
    snapshot: tuple[BranchChain, tuple[str, int]] | None = None,
    head: tuple[BranchChain, int] | None = None,
) -> Vocabulary:
    """The vocabulary of these Kinds at a Revision (the head, or with `snapshot` the Revision read as
    of), built once per Revision, readable names and resolve settings."""
    view = readable_view(access, domain, branch)
    readable = tuple(tuple(sorted(view.cleared(k))) for k in (*kinds, *view.relations))
    limits = domain.settings.model.read.resolve
    key = (domain.id, branch, revision, tuple(kinds), view.relations, readable, msgspec.json.encode(limits))
    if revision is not None and key in _VOCABULARIES:
        _VOCABULARIES.move_to_end(key)
        return _VOCABULARIES[key]
    vocab = await _build(txn, access, domain, branch, kinds, snapshot, head)
    if revision is not None:
        _VOCABULARIES[key] = vocab
        if len(_VOCABULARIES) > _CACHED:
            _VOCABULARIES.popitem(last=False)
    return vocab


async def _build(
    txn: Txn,
    access: Access,
    domain: Domain,
    branch: str,
    kinds: list[str],
    snapshot: tuple[BranchChain, tuple[str, int]] | None,
    head: tuple[BranchChain, int] | None = None,
) -> Vocabulary:
    limits = domain.settings.model.read.resolve
    vocab = Vocabulary(stop=stop_words(limits))
    view = readable_view(access, domain, branch)
    limit = limits.max_indexed_values
    for kind_name in kinds:
        kind = domain.schema.kinds[kind_name]
        readable_names = view.cleared(kind_name)
        title = kind.title if kind.title in readable_names else None
        if title is not None:
            shown = kind.attributes[title]
            if shown.sensitivity or shown.type != "string" or shown.resolvable is False:
                title = None  # resolvable: false keeps a title out of resolve altogether
        wanted = {
            name: max(limit, 1000 if attr.resolvable else limit)
            for name, attr in kind.attributes.items()
            if name in readable_names
            and not attr.sensitivity
            and attr.resolvable is not False
            and attr.type in ("enum", "string")
            and (attr.resolvable is True or kind.key != (name,))  # keys ground to their Record
        }
        if title is not None:
            wanted[title] = max(wanted.get(title, 0), limits.max_title_values)
        kept: dict[str, list[tuple[str, int]] | None] = {}
        if head is not None and snapshot is None and wanted:
            kept = await _COUNTS.distinct(txn, domain.id, branch, head[0], head[1], kind.name, wanted)
        vocab.add_name(kind.name, Term("kind", kind.name, description=kind.description))
        for alias in kind.aliases:
            vocab.add(vocab.synonyms, alias, Term("kind", kind.name))
        if len(kind.key) == 1 and kind.key[0] in readable_names:
            pattern = kind.attributes[kind.key[0]].pattern
            vocab.keys.append((kind.name, kind.key[0], re.compile(pattern) if pattern else None))
        for name, attr in kind.attributes.items():
            if name not in readable_names:
                continue
            attribute = Term("attribute", kind.name, name, attr.type_name, description=attr.description)
            vocab.attributes.append(attribute)
            vocab.add_name(name, attribute)
            for alias in attr.aliases:
                vocab.add(vocab.synonyms, alias, attribute)
            if name not in wanted:
                continue
            distinct = kept.get(name)
            if name in kept and distinct is None and attr.resolvable is not True and attr.type != "enum":
                continue  # more distinct values than could ever be indexed
            if distinct is None:
                distinct = await txn.value_counts(
                    domain.id, branch, kind.name, name, limit=wanted[name], snapshot=snapshot
                )
            if name == title and len(distinct) <= limits.max_title_values:
                where = (domain.id, branch, kind.name, name, snapshot is None)
                vocab.titles.append(_titles(where, kind.name, name, kind.key, distinct))
            if name == title and attr.resolvable is not True:
                continue  # a title grounds to its Record (titles.py), not to a filter value
            if not indexed(attr, distinct[: limit + 1], limits):
                continue
            counts = dict(distinct)
            for value, records in distinct:
                code = is_code(value, limits)
                term = Term(
                    "value", kind.name, name, attr.type_name, {value: records}, code=code, written=value
                )
                vocab.add(vocab.exact, value, term)
            for stored, aliases in attr.value_aliases.items():
                for alias in aliases:
                    term = Term(
                        "value",
                        kind.name,
                        name,
                        attr.type_name,
                        {stored: counts.get(stored, 0)},
                        code=is_code(alias, limits),
                        written=alias,
                    )
                    vocab.add(vocab.synonyms, alias, term)
    for relation_name in view.relations:
        if relation_name not in domain.schema.relations:
            continue
        relation = domain.schema.relations[relation_name]
        if relation.from_kind not in kinds and relation.to_kind not in kinds:
            continue
        term = Term(
            "relation",
            relation.from_kind,
            relation=relation.name,
            to=relation.to_kind,
            inverse=relation.inverse,
            description=relation.description,
        )
        for relation_word in (relation.name, relation.inverse or ""):
            if relation_word:
                vocab.add_name(relation_word, term)
                for base in inflections(relation_word) if "_" not in relation_word else []:
                    vocab.add(vocab.exact, base, term)  # "supplies": "supply"
        cleared = view.cleared(relation.name)
        for name, attr in relation.attributes.items():
            if name not in cleared:
                continue
            link_attribute = Term(
                "attribute",
                relation.from_kind,
                name,
                attr.type_name,
                relation=relation.name,
                to=relation.to_kind,
                description=attr.description,
            )
            vocab.attributes.append(link_attribute)
            vocab.add_name(name, link_attribute)
            for alias in attr.aliases:
                vocab.add(vocab.synonyms, alias, link_attribute)
    return vocab


_TITLES: OrderedDict[tuple[Any, ...], tuple[list[tuple[str, int]], Titles]] = OrderedDict()


def _titles(
    where: tuple[Any, ...], kind: str, attribute: str, key: tuple[str, ...], distinct: list[tuple[str, int]]
) -> Titles:
    """The titles of a Kind by word; kept per (Domain, branch, Kind) and reused while its titles
    are the same, so a commit that changes no title costs a comparison, not a new index."""
    cached = _TITLES.get(where)
    if cached is not None and cached[0] == distinct:
        _TITLES.move_to_end(where)
        return cached[1]
    found = Titles(kind, attribute, key[0] if len(key) == 1 else None)
    for title, records in distinct:
        found.records[title] = records
        for word in TITLE_WORD.findall(title.casefold()):
            found.words.setdefault(word, set()).add(title)
    _TITLES[where] = (distinct, found)
    if len(_TITLES) > _CACHED:
        _TITLES.popitem(last=False)
    return found


__all__ = ["Term", "Titles", "Vocabulary", "vocabulary"]
