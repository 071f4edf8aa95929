"""The vocabulary resolve grounds words in: made once per schema and set of readable names, and
brought to each new head from the changes of the commits in between, never built again whole on
the read path.

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

Two parts: the names (everything but stored values; one per schema, readable names and settings)
and one slot per Attribute whose values are read (slots.py). At a branch head the distinct values
come from value_counts.py, kept per process and moved by each commit's history rows; a slot whose
values did not move since the vocabulary of the same branch at an earlier head is taken as it is,
the others are updated from the moved values, and a word's Terms keep the order a build from
nothing gives them (`Term.rank`). A vocabulary is never changed once made: a resolve still running
at an earlier head keeps its own. The same read at the same Revision therefore grounds the same
words on any replica, whatever heads each process saw before (tests/keeper/test_resolve_vocabulary.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import msgspec
import orjson

from lorebase.vocabulary import values_read
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.resolve.slots import Slot, Wanted, share_titles, slot, titles_from
from lorebase_keeper.reads.resolve.terms import TITLE_WORD, Term, Titles
from lorebase_keeper.reads.resolve.words import inflections, split_name, stop_words
from lorebase_keeper.reads.value_counts import Counts, ValueCounts
from lorebase_keeper.writes import CountsMoved
from lorebase_store import BranchChain, Txn


@dataclass
class Vocabulary:
    exact: dict[str, list[Term]] = field(default_factory=dict)
    synonyms: dict[str, list[Term]] = field(default_factory=dict)
    partial: dict[str, list[Term]] = field(default_factory=dict)
    attributes: list[Term] = field(default_factory=list)  # every readable Attribute, Links' too
    titles: list[Titles] = field(default_factory=list)
    keys: list[tuple[str, str, re.Pattern[str] | None]] = field(default_factory=list)  # Kind, key, pattern
    stop: frozenset[str] = frozenset()
    # a schema's `comparatives`: word -> the readable Attributes declaring it, with the operator
    graded: dict[str, list[tuple[Term, str]]] = field(default_factory=dict)
    grams: dict[str, set[str]] = field(default_factory=dict, compare=False)  # trigrams, as first needed
    # How it was made: the Attributes whose values it holds, their slots, and the head it describes.
    wanted: list[Wanted] = field(default_factory=list, compare=False)
    slots: dict[tuple[str, str], Slot] = field(default_factory=dict, compare=False)
    head: tuple[tuple[tuple[str, int, int | None], ...], int] | None = field(default=None, compare=False)

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


_CACHED = 32
_BY_REVISION: OrderedDict[tuple[Any, ...], Vocabulary] = OrderedDict()  # exact Revisions
_LATEST: OrderedDict[tuple[Any, ...], Vocabulary] = OrderedDict()  # the newest head per branch and view
_NAMES: OrderedDict[tuple[Any, ...], Vocabulary] = OrderedDict()
_SCHEMAS: OrderedDict[int, tuple[Any, str]] = OrderedDict()
_COUNTS = ValueCounts()


def _schema_digest(domain: Domain) -> str:
    known = _SCHEMAS.get(id(domain.schema))
    if known is None or known[0] is not domain.schema:
        known = (domain.schema, hashlib.sha256(orjson.dumps(domain.schema.document)).hexdigest())
        _SCHEMAS[id(domain.schema)] = known
        if len(_SCHEMAS) > _CACHED:
            _SCHEMAS.popitem(last=False)
    return known[1]


async def vocabulary(
    txn: Txn,
    access: Access,
    domain: Domain,
    branch: str,
    kinds: list[str],
    revision: str | None = None,
    snapshot: tuple[BranchChain, tuple[str, int]] | None = None,
    head: tuple[BranchChain, int] | None = None,
    branch_created: Any = None,
) -> Vocabulary:
    """The vocabulary of these Kinds at a Revision: at the branch head (`head`: its chain and
    generation) updated from the one of an earlier head, as of an older Revision (`snapshot`)
    counted there. What is kept across heads is keyed by the Domain's and the branch's creation
    times too (`branch_created`): a Domain or branch made again under its id or name starts anew."""
    view = readable_view(access, domain, branch)
    readable = tuple(tuple(sorted(view.cleared(k))) for k in (*kinds, *view.relations))
    limits = domain.settings.model.read.resolve
    shape = (
        domain.id,
        _schema_digest(domain),
        tuple(kinds),
        view.relations,
        readable,
        msgspec.json.encode(limits),
    )
    by_revision = (*shape, branch, revision)
    if revision is not None and by_revision in _BY_REVISION:
        _BY_REVISION.move_to_end(by_revision)
        return _BY_REVISION[by_revision]
    names = _NAMES.get(shape)
    if names is None:
        names = _names(access, domain, branch, kinds)
        _remember(_NAMES, shape, names)
    else:
        _NAMES.move_to_end(shape)
    latest = (*shape, branch, branch_created)
    earlier = _LATEST.get(latest) if head is not None and snapshot is None else None
    if earlier is not None and head is not None:
        if earlier.head is None or earlier.head[0] != head[0].segments or earlier.head[1] > head[1]:
            earlier = None
    vocab = await _values(
        txn, domain, branch, names, earlier, snapshot, head, (domain.row.created_at, branch_created)
    )
    if revision is not None:
        _remember(_BY_REVISION, by_revision, vocab)
    if vocab.head is not None:
        known = _LATEST.get(latest)
        if (
            known is None
            or known.head is None
            or known.head[0] != vocab.head[0]
            or known.head[1] <= vocab.head[1]
        ):
            _remember(_LATEST, latest, vocab)
    return vocab


def _remember(cache: OrderedDict[Any, Vocabulary], key: Any, vocab: Vocabulary) -> None:
    cache[key] = vocab
    cache.move_to_end(key)
    if len(cache) > _CACHED:
        cache.popitem(last=False)


async def _values(
    txn: Txn,
    domain: Domain,
    branch: str,
    names: Vocabulary,
    earlier: Vocabulary | None,
    snapshot: tuple[BranchChain, tuple[str, int]] | None,
    head: tuple[BranchChain, int] | None,
    incarnation: tuple[Any, ...],
) -> Vocabulary:
    """`names` with the slots of its Attributes' values at this head (from `earlier`'s where they
    did not move) or as of the snapshot. At a head, one update at a time per process: the kept
    counts' views (value_counts.Counts) hold while no other read moves them."""
    limits = domain.settings.model.read.resolve
    counted: dict[tuple[str, str], Counts] = {}
    pairs: dict[tuple[str, str], list[tuple[str, int]]] = {}
    at_head = head is not None and snapshot is None
    async with _lock() if at_head else _NO_LOCK:
        if head is not None and at_head:
            attributes = {(wanted.kind, wanted.name): wanted.limit for wanted in names.wanted}
            counted = await _COUNTS.counted(txn, domain.id, branch, head[0], head[1], attributes, incarnation)
        for wanted in names.wanted:
            where = (wanted.kind, wanted.name)
            if where in counted:
                if counted[where].values is not None:
                    continue
                if wanted.attr.resolvable is not True and wanted.attr.type != "enum":
                    continue  # more distinct values than could ever be indexed
            pairs[where] = await txn.value_counts(
                domain.id, branch, wanted.kind, wanted.name, limit=wanted.limit, snapshot=snapshot
            )
        slots: dict[tuple[str, str], Slot] = {}
        since = earlier.head[1] if earlier is not None and earlier.head is not None else None
        for wanted in names.wanted:
            where = (wanted.kind, wanted.name)
            if where in pairs:
                slots[where] = await slot(wanted, pairs[where], limits)
                continue
            found = counted.get(where)
            if found is None or found.values is None:
                continue
            previous = earlier.slots.get(where) if earlier is not None else None
            moved = found.moved_since(since) if since is not None and previous is not None else None
            if previous is not None and moved is not None and not moved:
                slots[where] = previous
                continue
            shared = (domain.id, branch, incarnation, wanted.kind, wanted.name)
            base = titles_from(shared, head, found) if wanted.title and head is not None else None
            slots[where] = made = await slot(wanted, found.values, limits, base)
            if made.titles is not None and head is not None:
                share_titles(shared, head, made.titles)
    return _compose(
        names, earlier, slots, (head[0].segments, head[1]) if head is not None and at_head else None
    )


class _KeptCounts:
    """This process's kept counts (`_COUNTS`) as a schema change set reaches them
    (writes/kept_counts.py): read under the same lock as a resolve's, so no read moves them between
    the count and its copy."""

    async def at_head(
        self,
        txn: Txn,
        domain_id: int,
        branch: str,
        chain: BranchChain,
        generation: int,
        attributes: dict[tuple[str, str], int],
        incarnation: tuple[Any, ...],
    ) -> dict[tuple[str, str], dict[str, int] | None]:
        async with _lock():
            counted = await _COUNTS.counted(
                txn, domain_id, branch, chain, generation, attributes, incarnation
            )
            return {where: None if c.values is None else dict(c.values) for where, c in counted.items()}

    def landing(self, moved: CountsMoved) -> None:
        _COUNTS.landing(moved)

    def committed(self, moved: CountsMoved) -> None:
        _COUNTS.committed(moved)

    def abandoned(self, moved: CountsMoved) -> None:
        _COUNTS.landed(moved)


KEPT_COUNTS = _KeptCounts()


class _NoLock:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


_NO_LOCK = _NoLock()
_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


def _lock() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    lock = _LOCKS.get(loop)
    if lock is None:
        lock = _LOCKS[loop] = asyncio.Lock()
    return lock


def _compose(
    names: Vocabulary,
    earlier: Vocabulary | None,
    slots: dict[tuple[str, str], Slot],
    at: tuple[tuple[tuple[str, int, int | None], ...], int] | None,
) -> Vocabulary:
    """The names with the value terms and title indexes of `slots`, updating `earlier`'s tables
    (copied, never changed) where only some slots changed."""
    if earlier is not None:
        exact, synonyms = dict(earlier.exact), dict(earlier.synonyms)
        changed = [w for w, s in slots.items() if earlier.slots.get(w) is not s]
        changed += [w for w in earlier.slots if w not in slots]
        old = [earlier.slots[w] for w in changed if w in earlier.slots]
    else:
        exact = {w: list(ts) for w, ts in names.exact.items()}
        synonyms = {w: list(ts) for w, ts in names.synonyms.items()}
        changed, old = list(slots), []
    gone = {(s.wanted.kind, s.wanted.name) for s in old}
    for table, part in ((exact, "exact"), (synonyms, "synonyms")):
        touched: set[str] = set()
        for previous in old:
            touched.update(getattr(previous, part))
        for word in touched:
            kept = [
                t for t in table.get(word, ()) if t.target != "value" or (t.kind, t.attribute) not in gone
            ]
            if kept:
                table[word] = kept
            else:
                table.pop(word, None)
        added: set[str] = set()
        for where in changed:
            new = slots.get(where)
            if new is None:
                continue
            for word, terms in getattr(new, part).items():
                table[word] = [*table.get(word, ()), *terms] if word in table else list(terms)
                added.add(word)
        for word in added:
            table[word].sort(key=lambda term: term.rank)
    return Vocabulary(
        exact=exact,
        synonyms=synonyms,
        partial=names.partial,
        attributes=names.attributes,
        titles=[
            s.titles for w in names.wanted if (s := slots.get((w.kind, w.name))) and s.titles is not None
        ],
        keys=names.keys,
        stop=names.stop,
        graded=names.graded,
        grams=earlier.grams if earlier is not None else {},
        wanted=names.wanted,
        slots=slots,
        head=at,
    )


def _names(access: Access, domain: Domain, branch: str, kinds: list[str]) -> Vocabulary:
    """Everything but the stored values: the names, aliases, keys and Relations the caller may read,
    and the Attributes whose values are read (`wanted`), each Term ranked in the order added."""
    limits = domain.settings.model.read.resolve
    vocab = Vocabulary(stop=stop_words(limits))
    view = readable_view(access, domain, branch)
    counter = iter(range(1 << 62))

    def ranked(term: Term, kind_index: int, attribute_index: int) -> Term:
        term.rank = (kind_index, attribute_index, 0, next(counter))
        return term

    for kind_index, kind_name in enumerate(kinds):
        kind = domain.schema.kinds[kind_name]
        readable_names = view.cleared(kind_name)
        title = kind.title if kind.title in readable_names else None
        if title is not None:
            shown = kind.attributes[title]
            if shown.sensitivity or shown.type != "string" or shown.resolvable is False:
                title = None  # resolvable: false keeps a title out of resolve altogether
        vocab.add_name(
            kind.name, ranked(Term("kind", kind.name, description=kind.description), kind_index, -1)
        )
        for alias in kind.aliases:
            vocab.add(vocab.synonyms, alias, ranked(Term("kind", kind.name), kind_index, -1))
        if len(kind.key) == 1 and kind.key[0] in readable_names:
            pattern = kind.attributes[kind.key[0]].pattern
            vocab.keys.append((kind.name, kind.key[0], re.compile(pattern) if pattern else None))
        for attribute_index, (name, attr) in enumerate(kind.attributes.items()):
            if name not in readable_names:
                continue
            attribute = ranked(
                Term("attribute", kind.name, name, attr.type_name, description=attr.description),
                kind_index,
                attribute_index,
            )
            vocab.attributes.append(attribute)
            vocab.add_name(name, attribute)
            for alias in attr.aliases:
                vocab.add(vocab.synonyms, alias, attribute)
            for word, op in attr.comparatives.items():
                vocab.graded.setdefault(word.casefold(), []).append((attribute, op))
            most = values_read(kind, name, limits)  # its title only when readable: so is `name`
            if most is not None:
                key = kind.key[0] if len(kind.key) == 1 else None
                vocab.wanted.append(
                    Wanted(kind_index, attribute_index, kind.name, name, attr, most, name == title, key)
                )
    for relation_index, relation_name in enumerate(view.relations, start=len(kinds)):
        if relation_name not in domain.schema.relations:
            continue
        relation = domain.schema.relations[relation_name]
        if relation.from_kind not in kinds and relation.to_kind not in kinds:
            continue
        term = ranked(
            Term(
                "relation",
                relation.from_kind,
                relation=relation.name,
                to=relation.to_kind,
                inverse=relation.inverse,
                description=relation.description,
            ),
            relation_index,
            -1,
        )
        for relation_word in (relation.name, relation.inverse or ""):
            if relation_word:
                vocab.add_name(relation_word, term)
                for base in inflections(relation_word) if "_" not in relation_word else []:
                    vocab.add(vocab.exact, base, term)  # "supplies": "supply"
        cleared = view.cleared(relation.name)
        for attribute_index, (name, attr) in enumerate(relation.attributes.items()):
            if name not in cleared:
                continue
            link_attribute = ranked(
                Term(
                    "attribute",
                    relation.from_kind,
                    name,
                    attr.type_name,
                    relation=relation.name,
                    to=relation.to_kind,
                    description=attr.description,
                ),
                relation_index,
                attribute_index,
            )
            vocab.attributes.append(link_attribute)
            vocab.add_name(name, link_attribute)
            for alias in attr.aliases:
                vocab.add(vocab.synonyms, alias, link_attribute)
            for word, op in attr.comparatives.items():
                vocab.graded.setdefault(word.casefold(), []).append((link_attribute, op))
    return vocab


def names_vocabulary(access: Access, domain: Domain, branch: str, kinds: list[str]) -> Vocabulary:
    """The vocabulary of names only (no stored values): what the levels that read no data use."""
    return _names(access, domain, branch, kinds)


def relations(vocab: Vocabulary) -> list[Term]:
    """One Term per readable Relation of the vocabulary, in name order."""
    seen: dict[str, Term] = {}
    for terms in vocab.exact.values():
        for term in terms:
            if term.target == "relation" and term.relation is not None:
                seen.setdefault(term.relation, term)
    return [seen[name] for name in sorted(seen)]


__all__ = ["TITLE_WORD", "Term", "Titles", "Vocabulary", "names_vocabulary", "relations", "vocabulary"]
