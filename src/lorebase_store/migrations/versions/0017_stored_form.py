"""The smaller stored form (lorebase_store/stored_form.py, issue 29): provenance naming the Revision
behind most of its values once (`$all`), and the created history rows of Records unchanged since
their creation without `after` (read through the Record's row). Converts the existing Domains:

- records, links and history rows whose provenance has an entry for exactly the Attributes holding
  a value (a string each) store it as {"$all": <most frequent Revision>, <the others>, <$ notes>};
- a created Record's history row whose Record is, on the branch that created it, still as that
  Revision made it stores `after` NULL.

Downgrade writes every map and `after` whole again.

Revision ID: 0017
Revises: 0016
"""

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

# The stored form of `provenance` over `values` (a table alias t): NULL when it has none.
_COMPACT = """
(SELECT CASE WHEN top.revision IS NULL THEN NULL ELSE
        jsonb_build_object('$all', top.revision)
        || COALESCE((SELECT jsonb_object_agg(p.key, p.value) FROM jsonb_each({t}.provenance) p
                      WHERE p.key LIKE '$%' OR p.value <> to_jsonb(top.revision)), '{{}}'::jsonb) END
   FROM (SELECT (SELECT e.r FROM (SELECT p.value #>> '{{}}' AS r FROM jsonb_each({t}.provenance) p
                                   WHERE p.key NOT LIKE '$%') e
                  GROUP BY e.r ORDER BY count(*) DESC, e.r COLLATE "C" LIMIT 1) AS revision) top
  WHERE jsonb_typeof({t}.{values}) = 'object'
    AND {t}.{values} <> '{{}}'::jsonb
    AND NOT {t}.provenance ? '$all'
    AND NOT EXISTS (SELECT 1 FROM jsonb_object_keys({t}.{values}) k
                     WHERE jsonb_typeof({t}.provenance -> k) IS DISTINCT FROM 'string')
    AND NOT EXISTS (SELECT 1 FROM jsonb_object_keys({t}.provenance) k
                     WHERE k NOT LIKE '$%' AND NOT {t}.{values} ? k))
"""

# The whole map of a stored one.
_EXPAND = """
(SELECT jsonb_object_agg(k.key, k.value) FROM (
    SELECT p.key, p.value FROM jsonb_each({t}.provenance) p WHERE p.key <> '$all'
    UNION ALL
    SELECT v.key, {t}.provenance -> '$all' FROM jsonb_object_keys({t}.{values}) v(key)
     WHERE NOT {t}.provenance ? v.key) k)
"""


def upgrade() -> None:
    for table, values in (("records", '"values"'), ("links", '"values"'), ("history", "after")):
        compact = _COMPACT.format(t="t", values=values)
        op.execute(f"UPDATE {table} t SET provenance = {compact} WHERE {compact} IS NOT NULL")
    op.execute(
        """
UPDATE history h SET after = NULL
  FROM records r
 WHERE h.entity = 'record' AND h.change = 'created' AND h.after IS NOT NULL
   AND r.domain_id = h.domain_id AND r.branch = h.branch AND r.kind = h.name AND r.key = h.key
   AND r.created_revision = h.revision AND r.updated_revision = h.revision AND r."values" = h.after
"""
    )


def downgrade() -> None:
    op.execute(
        """
UPDATE history h SET after = r."values"
  FROM records r
 WHERE h.entity = 'record' AND h.change = 'created' AND h.after IS NULL
   AND r.domain_id = h.domain_id AND r.branch = h.branch AND r.kind = h.name AND r.key = h.key
   AND r.created_revision = h.revision AND r.updated_revision = h.revision
"""
    )
    for table, values in (("records", '"values"'), ("links", '"values"'), ("history", "after")):
        op.execute(
            f"UPDATE {table} t SET provenance = {_EXPAND.format(t='t', values=values)} "
            "WHERE t.provenance ? '$all'"
        )
