"""Links at a branch's materialised head: the Links of a Relation (by pairs, from or to some keys, in
pages, counted), the Links of several Relations from and to given keys in one statement, and the
ranked last hop of a context pack's walk (`links_ranked`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Text, and_, any_, func, literal, select, tuple_
from sqlalchemy.dialects.postgresql import ARRAY

from lorebase_store.stored_form import ALL, expand
from lorebase_store.tables import links
from lorebase_store.txn import TxnBase


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


def _link(row: Any) -> LinkRow:
    return LinkRow(row.relation, row.from_key, row.to_key, row.values, row.provenance, row.revision)


class LinksTxn(TxnBase):
    async def link_pairs(self, domain_id: int, branch: str, relation: str) -> list[tuple[str, str]]:
        rows = await self.conn.execute(
            select(links.c.from_key, links.c.to_key)
            .where(links.c.domain_id == domain_id, links.c.branch == branch, links.c.relation == relation)
            .order_by(links.c.from_key, links.c.to_key)
        )
        return [(row.from_key, row.to_key) for row in rows]

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


__all__ = ["LinkRow", "LinksTxn"]
