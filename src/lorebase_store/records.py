"""The materialised head: Records and Links of each branch, one row each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Text, and_, any_, bindparam, func, literal, or_, select, tuple_, union_all
from sqlalchemy.dialects.postgresql import ARRAY, REGCONFIG

from lorebase_store.revisions import BranchChain, snapshot_of
from lorebase_store.stored_form import ALL, expand
from lorebase_store.tables import branches, links, records
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class RecordRow:
    kind: str
    key: str
    values: dict[str, Any]
    provenance: dict[str, Any]  # whole, whatever its stored form (stored_form.py)
    created_revision: str
    updated_revision: str

    def __post_init__(self) -> None:
        if ALL in self.provenance:
            object.__setattr__(self, "provenance", expand(self.values, self.provenance))


@dataclass(frozen=True)
class LinkRow:
    relation: str
    from_key: str
    to_key: str
    values: dict[str, Any]
    provenance: dict[str, Any]  # whole, whatever its stored form (stored_form.py)
    revision: str

    def __post_init__(self) -> None:
        if ALL in self.provenance:
            object.__setattr__(self, "provenance", expand(self.values, self.provenance))


@dataclass(frozen=True)
class RefsRead:
    """What `RecordsTxn.refs_read` found: whole rows, values only, and which Records exist."""

    rows: dict[tuple[str, str], RecordRow]
    values: dict[tuple[str, str], dict[str, Any]]
    existing: set[tuple[str, str]]


# Built once: the hottest read, a Record at the head of a branch, with the branch's head Revision.
_RECORD_AT_HEAD = (
    select(branches.c.head, records)
    .select_from(
        branches.outerjoin(
            records,
            and_(
                records.c.domain_id == branches.c.domain_id,
                records.c.branch == branches.c.name,
                records.c.kind == bindparam("kind"),
                records.c.key == bindparam("key"),
            ),
        )
    )
    .where(branches.c.domain_id == bindparam("domain_id"), branches.c.name == bindparam("branch"))
)


def _any(name: str) -> Any:
    return any_(bindparam(name, type_=ARRAY(Text)))


# Records of several Kinds in one statement (a context pack, a neighbourhood): `kind = ANY(kinds)
# AND key = ANY(keys)` is one index range whatever the table's statistics say (a join with
# unnest(kinds, keys) scanned the whole branch right after an import, before ANALYZE). The few
# rows of another requested Kind that share a key are dropped by the caller.
_OF_REFS = """
  FROM records
 WHERE domain_id = $1 AND branch = $2 AND kind = ANY(CAST($3 AS text[])) AND key = ANY(CAST($4 AS text[]))
"""
_RECORDS_OF = 'SELECT kind, key, "values", provenance, created_revision, updated_revision' + _OF_REFS
_VALUES_OF = 'SELECT kind, key, "values"' + _OF_REFS
_KEYS_OF = "SELECT kind, key" + _OF_REFS  # an index-only scan of the primary key once vacuumed
# The three reads of `refs_read` as the arms of one statement: whole rows, values, existence.
_REFS_READ_ARMS = (
    'SELECT 0, kind, key, "values", provenance, created_revision, updated_revision',
    'SELECT 1, kind, key, "values", NULL::jsonb, NULL::text, NULL::text',
    "SELECT 2, kind, key, NULL::jsonb, NULL::jsonb, NULL::text, NULL::text",
)
# Links of several Relations from given keys (forward) and to given keys (inverse), the same way.
_LINK_COLUMNS = 'relation, from_key, to_key, "values", provenance, revision'
_LINKS_OF_KEYS = f"""
SELECT 'forward' AS direction, {_LINK_COLUMNS} FROM links
 WHERE domain_id = $1 AND branch = $2
   AND relation = ANY(CAST($3 AS text[])) AND from_key = ANY(CAST($4 AS text[]))
UNION ALL
SELECT 'inverse', {_LINK_COLUMNS} FROM links
 WHERE domain_id = $1 AND branch = $2
   AND relation = ANY(CAST($5 AS text[])) AND to_key = ANY(CAST($6 AS text[]))
"""

# The last hop of a context pack's walk, ranked. Per Relation and direction (a step): every Link's
# keys are read from an index (the primary key forward, links_to_from inverse, 0022) and numbered in
# the walk's order (`position`, by from key and to key; `nth` per Record walked from), its other end
# ranked by key (`rank`, the order the pack keeps its neighbours in). Returned: the first $10 Links
# of each step in the walk's order, and beyond them those whose other end is one of those Links'
# ends or one of the Records reached already ($11), unless max_fanout ($12) cuts them; whole only
# when their other end ranks among the first $9 of the step (the others with NULL values, never
# fetched from the table); each with the number of Links of its step (`total`). Exactly the steps
# asked ($7, $8: relation and key, length-prefixed), not every Relation with every key. Orders are
# by code point (COLLATE "C"), as keeper sorts: the walk's order must be keeper's whatever the
# database's collation.
_LINKS_RANKED = """
WITH hop AS (
  SELECT 'forward' AS direction, relation, from_key, to_key, from_key AS anchor, to_key AS other FROM links
   WHERE domain_id = $1 AND branch = $2
     AND relation = ANY(CAST($3 AS text[])) AND from_key = ANY(CAST($4 AS text[]))
     AND length(relation) || ':' || relation || from_key = ANY(CAST($7 AS text[]))
  UNION ALL
  SELECT 'inverse', relation, from_key, to_key, to_key, from_key FROM links
   WHERE domain_id = $1 AND branch = $2
     AND relation = ANY(CAST($5 AS text[])) AND to_key = ANY(CAST($6 AS text[]))
     AND length(relation) || ':' || relation || to_key = ANY(CAST($8 AS text[]))
), numbered AS (
  SELECT direction, relation, from_key, to_key, other,
         dense_rank() OVER (PARTITION BY direction, relation ORDER BY other COLLATE "C") AS rank,
         row_number() OVER (PARTITION BY direction, relation ORDER BY from_key COLLATE "C", to_key COLLATE "C")
           AS position,
         row_number() OVER (PARTITION BY direction, relation, anchor ORDER BY from_key COLLATE "C", to_key COLLATE "C")
           AS nth,
         count(*) OVER (PARTITION BY direction, relation) AS total
    FROM hop
), kept AS MATERIALIZED (
  SELECT * FROM numbered
   WHERE position <= $10
      OR (nth <= $12 AND (other = ANY(CAST($11 AS text[]))
                          OR other IN (SELECT other FROM numbered WHERE position <= $10)))
)
SELECT k.direction, k.relation, k.from_key, k.to_key, k.total, l."values", l.provenance, l.revision
  FROM kept k
  JOIN links l ON l.domain_id = $1 AND l.branch = $2
   AND l.relation = k.relation AND l.from_key = k.from_key AND l.to_key = k.to_key
 WHERE k.rank <= $9
UNION ALL
SELECT direction, relation, from_key, to_key, total, NULL, NULL, NULL FROM kept WHERE rank > $9
"""


def _record(row: Any) -> RecordRow:
    return RecordRow(
        row.kind, row.key, row.values, row.provenance, row.created_revision, row.updated_revision
    )


def _link(row: Any) -> LinkRow:
    return LinkRow(row.relation, row.from_key, row.to_key, row.values, row.provenance, row.revision)


_KEYS_OF_KIND = """
SELECT key FROM records WHERE domain_id = $1 AND branch = $2 AND kind = $3 ORDER BY key COLLATE "C"
"""


class RecordsTxn(TxnBase):
    async def get_records(
        self, domain_id: int, branch: str, kind: str, keys: list[str]
    ) -> dict[str, RecordRow]:
        if not keys:
            return {}
        rows = await self.conn.execute(
            select(records).where(
                records.c.domain_id == domain_id,
                records.c.branch == branch,
                records.c.kind == kind,
                records.c.key == any_(literal(list(keys), ARRAY(Text))),
            )
        )
        return {row.key: _record(row) for row in rows}

    async def records_of(
        self, domain_id: int, branch: str, refs: list[tuple[str, str]]
    ) -> dict[tuple[str, str], RecordRow]:
        """The Records of these (Kind, key) pairs, of any Kinds, in one statement."""
        wanted = set(refs)
        rows = await self._of_refs(_RECORDS_OF, domain_id, branch, wanted)
        return {
            (row["kind"], row["key"]): RecordRow(*row.values())
            for row in rows
            if (row["kind"], row["key"]) in wanted
        }

    async def values_of(
        self, domain_id: int, branch: str, refs: list[tuple[str, str]]
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """Only the values of these Records (no provenance to decode), in one statement."""
        wanted = set(refs)
        rows = await self._of_refs(_VALUES_OF, domain_id, branch, wanted)
        return {(kind, key): values for kind, key, values in rows if (kind, key) in wanted}

    async def existing_of(
        self, domain_id: int, branch: str, refs: list[tuple[str, str]]
    ) -> set[tuple[str, str]]:
        """Which of these Records exist, in one statement that reads no values."""
        wanted = set(refs)
        rows = await self._of_refs(_KEYS_OF, domain_id, branch, wanted)
        return {(kind, key) for kind, key in rows if (kind, key) in wanted}

    async def refs_read(
        self,
        domain_id: int,
        branch: str,
        *,
        rows: list[tuple[str, str]],
        values: list[tuple[str, str]],
        existing: list[tuple[str, str]],
    ) -> RefsRead:
        """In one statement (one round trip, one snapshot), what `records_of`, `values_of` and
        `existing_of` answer for `rows`, `values` and `existing`: a context pack reads its seeds,
        its near neighbours' values and which far neighbours exist at once."""
        asked = (set(rows), set(values), set(existing))
        arms: list[str] = []
        params: list[Any] = [domain_id, branch]
        for select_, refs in zip(_REFS_READ_ARMS, asked, strict=True):
            if refs:
                n = len(params)
                arms.append(
                    f"{select_} FROM records WHERE domain_id = $1 AND branch = $2"
                    f" AND kind = ANY(CAST(${n + 1} AS text[])) AND key = ANY(CAST(${n + 2} AS text[]))"
                )
                params += [sorted({kind for kind, _ in refs}), sorted({key for _, key in refs})]
        read = RefsRead({}, {}, set())
        if not arms:
            return read
        driver = await self.driver()
        for arm, kind, key, values_, provenance, created, updated in await driver.fetch(
            "\nUNION ALL\n".join(arms), *params
        ):
            if (kind, key) not in asked[arm]:  # another asked Kind that shares the key
                continue
            if arm == 0:
                read.rows[(kind, key)] = RecordRow(kind, key, values_, provenance, created, updated)
            elif arm == 1:
                read.values[(kind, key)] = values_
            else:
                read.existing.add((kind, key))
        return read

    async def _of_refs(self, sql: str, domain_id: int, branch: str, refs: set[tuple[str, str]]) -> Any:
        """Rows of `sql` (_RECORDS_OF or _VALUES_OF) for these refs: through the driver, prepared
        once per connection (every neighbourhood and context pack reads its Records so)."""
        if not refs:
            return []
        kinds = sorted({kind for kind, _ in refs})
        keys = sorted({key for _, key in refs})
        driver = await self.driver()
        return await driver.fetch(sql, domain_id, branch, kinds, keys)

    async def record_at_head(
        self, domain_id: int, branch: str, kind: str, key: str
    ) -> tuple[str | None, bool, RecordRow | None]:
        """In one statement: (head Revision, whether the branch exists, the Record or None)."""
        params = {"domain_id": domain_id, "branch": branch, "kind": kind, "key": key}
        row = (await self.conn.execute(_RECORD_AT_HEAD, params)).first()
        if row is None:
            return None, False, None
        record = None if row.key is None else _record(row)
        return row.head, True, record

    async def keys_with_value(
        self, domain_id: int, branch: str, kind: str, attribute: str, values: list[Any]
    ) -> dict[Any, list[str]]:
        """For a unique check: the keys of Records of `kind` holding each of `values` in `attribute`."""
        if not values:
            return {}
        if len(values) == 1:
            cond = records.c["values"].contains({attribute: values[0]})
        else:
            cond = records.c["values"][attribute].astext == any_(
                literal([str(v) for v in values], ARRAY(Text))
            )
        rows = await self.conn.execute(
            select(records.c.key, records.c["values"][attribute].label("v")).where(
                records.c.domain_id == domain_id, records.c.branch == branch, records.c.kind == kind, cond
            )
        )
        found: dict[Any, list[str]] = {}
        for row in rows:
            found.setdefault(row.v, []).append(row.key)
        return found

    async def records_of_kind(
        self, domain_id: int, branch: str, kind: str
    ) -> list[tuple[str, dict[str, Any]]]:
        rows = await self.conn.execute(
            select(records.c.key, records.c["values"])
            .where(records.c.domain_id == domain_id, records.c.branch == branch, records.c.kind == kind)
            .order_by(records.c.key)
        )
        return [(row.key, row.values) for row in rows]

    async def kind_has_records(self, domain_id: int, branch: str, kind: str) -> bool:
        """Whether a branch's materialised head holds any Record of `kind` (one index probe)."""
        rows = await self.conn.execute(
            select(records.c.key)
            .where(records.c.domain_id == domain_id, records.c.branch == branch, records.c.kind == kind)
            .limit(1)
        )
        return rows.first() is not None

    async def record_keys_of_kind(self, domain_id: int, branch: str, kind: str) -> list[str]:
        """The keys of a Kind's Records at a branch's materialised head, in key order (Python's: a
        schema change migrates a million of them, sorted again in linear time)."""
        driver = await self.driver()  # its rows are made as they arrive, not in one go
        rows = await driver.fetch(_KEYS_OF_KIND, domain_id, branch, kind)
        return [row[0] for row in rows]

    async def search_records(
        self,
        domain_id: int,
        branch: str,
        fields: dict[str, list[str]],
        text_: str,
        *,
        limit: int,
        snapshot: tuple[BranchChain, tuple[str, int]] | None = None,
    ) -> list[tuple[str, str, float]]:
        """(Kind, key, score) of the Records whose searchable text matches, best first.

        `fields` names, per Kind, the Attributes whose values make its text. A Record matches by
        substring, by full-text (the 'simple' configuration) or by similar spelling (pg_trgm word
        similarity); its score is the best of the full-text rank and the word similarity.
        With `snapshot` (chain, position), the Records are those of the history as of that position
        (an overlay branch, which has no materialised rows), scored the same way.
        """
        pattern = "%" + text_.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = literal(text_, Text)
        parts = []
        for kind, attributes in sorted(fields.items()):
            if not attributes:
                continue
            if snapshot is None:
                values, key = records.c["values"], records.c.key
                where = [records.c.domain_id == domain_id, records.c.branch == branch, records.c.kind == kind]
            else:
                latest = snapshot_of(domain_id, snapshot[0], snapshot[1], "record", kind)
                values, key = latest.c.after, latest.c.key
                where = [latest.c.change != "deleted"]
            document = func.concat_ws(" ", *[values[a].astext for a in attributes])
            vector = func.to_tsvector(literal("simple", REGCONFIG), document)
            tsquery = func.plainto_tsquery(literal("simple", REGCONFIG), query)
            similarity = func.word_similarity(query, document)
            score = func.greatest(func.ts_rank(vector, tsquery), similarity)
            parts.append(
                select(literal(kind, Text).label("kind"), key.label("key"), score.label("score")).where(
                    *where,
                    or_(document.ilike(pattern, escape="\\"), vector.op("@@")(tsquery), similarity > 0.5),
                )
            )
        if not parts:
            return []
        union = union_all(*parts).subquery("found")
        rows = await self.conn.execute(
            select(union).order_by(union.c.score.desc(), union.c.kind, union.c.key.collate("C")).limit(limit)
        )
        return [(row.kind, row.key, round(float(row.score), 6)) for row in rows]

    async def link_pairs(self, domain_id: int, branch: str, relation: str) -> list[tuple[str, str]]:
        rows = await self.conn.execute(
            select(links.c.from_key, links.c.to_key)
            .where(links.c.domain_id == domain_id, links.c.branch == branch, links.c.relation == relation)
            .order_by(links.c.from_key, links.c.to_key)
        )
        return [(row.from_key, row.to_key) for row in rows]

    async def copy_branch_rows(self, domain_id: int, source: str, target: str) -> None:
        """Copy every Record and Link of `source` to a new branch `target` (copy-mode branches)."""
        for table in (records, links):
            cols = [c for c in table.c if c.name != "branch"]
            await self.conn.execute(
                table.insert().from_select(
                    [c.name for c in cols] + ["branch"],
                    select(*cols, literal(target, table.c.branch.type)).where(
                        table.c.domain_id == domain_id, table.c.branch == source
                    ),
                )
            )

    # Links

    async def get_links(
        self, domain_id: int, branch: str, relation: str, pairs: list[tuple[str, str]]
    ) -> dict[tuple[str, str], LinkRow]:
        if not pairs:
            return {}
        # One end as an array in the index condition (one parameter, whatever the number of pairs),
        # the exact pairs kept here. A join against unnest()ed arrays lets a generic plan guess a
        # handful of rows and scan the Links once per pair; both ends as arrays make the index walk
        # every combination of them.
        wanted = set(pairs)
        result = await self.conn.execute(
            select(links).where(
                links.c.domain_id == domain_id,
                links.c.branch == branch,
                links.c.relation == relation,
                links.c.from_key == any_(literal(sorted({f for f, _ in pairs}), ARRAY(Text))),
            )
        )
        return {
            (row.from_key, row.to_key): _link(row) for row in result if (row.from_key, row.to_key) in wanted
        }

    async def links_of(
        self,
        domain_id: int,
        branch: str,
        relation: str,
        *,
        from_keys: list[str] | None = None,
        to_keys: list[str] | None = None,
        limit: int | None = None,
        after: tuple[str, str] | None = None,
    ) -> list[LinkRow]:
        cond = [links.c.domain_id == domain_id, links.c.branch == branch, links.c.relation == relation]
        if from_keys is not None:
            cond.append(links.c.from_key == any_(literal(list(from_keys), ARRAY(Text))))
        if to_keys is not None:
            cond.append(links.c.to_key == any_(literal(list(to_keys), ARRAY(Text))))
        if after is not None:
            cond.append(tuple_(links.c.from_key, links.c.to_key) > tuple_(*after))
        stmt = select(links).where(and_(*cond)).order_by(links.c.from_key, links.c.to_key)
        if limit is not None:
            stmt = stmt.limit(limit)
        return [_link(row) for row in await self.conn.execute(stmt)]

    async def links_of_keys(
        self,
        domain_id: int,
        branch: str,
        *,
        forward: list[tuple[str, str]],
        inverse: list[tuple[str, str]],
    ) -> list[tuple[str, LinkRow]]:
        """In one statement, the Links of each (Relation, from key) in `forward` and of each
        (Relation, to key) in `inverse`, each with its direction ("forward" or "inverse")."""
        if not forward and not inverse:
            return []
        wanted = {"forward": set(forward), "inverse": set(inverse)}
        driver = await self.driver()
        rows = await driver.fetch(
            _LINKS_OF_KEYS,
            domain_id,
            branch,
            sorted({relation for relation, _ in forward}),
            sorted({key for _, key in forward}),
            sorted({relation for relation, _ in inverse}),
            sorted({key for _, key in inverse}),
        )
        out = []
        for direction, *columns in rows:
            link = LinkRow(*columns)
            anchor = link.from_key if direction == "forward" else link.to_key
            if (link.relation, anchor) in wanted[direction]:
                out.append((direction, link))
        return out

    async def links_ranked(
        self,
        domain_id: int,
        branch: str,
        *,
        forward: list[tuple[str, str]],
        inverse: list[tuple[str, str]],
        whole: int,
        first: int,
        known: list[str],
        fanout: int,
    ) -> tuple[list[tuple[str, LinkRow | tuple[str, str, str]]], dict[tuple[str, str], int]]:
        """`links_of_keys` for a walk's last hop, ranked (_LINKS_RANKED): of each step (Relation and
        direction), the first `first` Links in the walk's order (from key, to key) and those beyond
        to the same Records or to `known` keys (within `fanout` per Record walked from); read whole
        only when their far end (the to key forward, the from key inverse) is among the `whole`
        first of the step by key, the others as (relation, from key, to key) from an index. And how
        many Links each step has in all, by (direction, relation)."""
        if not forward and not inverse:
            return [], {}
        driver = await self.driver()
        rows = await driver.fetch(
            _LINKS_RANKED,
            domain_id,
            branch,
            sorted({relation for relation, _ in forward}),
            sorted({key for _, key in forward}),
            sorted({relation for relation, _ in inverse}),
            sorted({key for _, key in inverse}),
            sorted({f"{len(relation)}:{relation}{key}" for relation, key in forward}),
            sorted({f"{len(relation)}:{relation}{key}" for relation, key in inverse}),
            whole,
            first,
            sorted(set(known)),
            fanout,
        )
        out: list[tuple[str, LinkRow | tuple[str, str, str]]] = []
        totals: dict[tuple[str, str], int] = {}
        for direction, relation, from_key, to_key, count, values, provenance, revision in rows:
            totals[(direction, relation)] = count
            if provenance is None:
                out.append((direction, (relation, from_key, to_key)))
            else:
                out.append((direction, LinkRow(relation, from_key, to_key, values, provenance, revision)))
        return out, totals

    async def link_counts(
        self,
        domain_id: int,
        branch: str,
        relation: str,
        *,
        from_key: str | None = None,
        to_key: str | None = None,
    ) -> int:
        cond = [links.c.domain_id == domain_id, links.c.branch == branch, links.c.relation == relation]
        if from_key is not None:
            cond.append(links.c.from_key == from_key)
        if to_key is not None:
            cond.append(links.c.to_key == to_key)
        return int(await self.conn.scalar(select(func.count()).select_from(links).where(*cond)) or 0)


__all__ = ["LinkRow", "RecordRow", "RecordsTxn", "RefsRead"]
