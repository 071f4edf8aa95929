"""Records at a branch's materialised head: one Record (`record_at_head`, the hottest read), the
Records of one Kind (by key, by value for a unique check, all of them, their keys), the search of
Records by text, and the copy of a branch's rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Text, and_, any_, bindparam, func, literal, or_, select, union_all
from sqlalchemy.dialects.postgresql import ARRAY, REGCONFIG

from lorebase_store.branch_history import BranchChain
from lorebase_store.snapshots import snapshot_of
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


def _record(row: Any) -> RecordRow:
    return RecordRow(
        row.kind, row.key, row.values, row.provenance, row.created_revision, row.updated_revision
    )


_KEYS_OF_KIND = """
SELECT key FROM records WHERE domain_id = $1 AND branch = $2 AND kind = $3 ORDER BY key COLLATE "C"
"""


class RecordReadsTxn(TxnBase):
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


__all__ = ["RecordReadsTxn", "RecordRow"]
