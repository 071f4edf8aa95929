"""Every read of Domain data (seed sections 2, 3 and 6): Records and their Links, history, lineage,
explain, diff, data health, the graph (neighborhood, traverse), query with coverage, search,
resolve, the schema as the caller may read it, and where a read stands (a branch head or an
earlier Revision). Embeddings are set here too: they are derived data that search and resolve
read, not a Revision.

Each read asks access/ what the caller may read and answers nothing else."""

from lorebase_keeper.reads.coverage import OMITTED, attributes_in, coverage, source_coverage
from lorebase_keeper.reads.diff import diff
from lorebase_keeper.reads.embeddings import check_vector, set_embedding
from lorebase_keeper.reads.explain import explain, explain_markdown
from lorebase_keeper.reads.graph import Caps, Ref, Step, Walk, load_records, parse_ref, steps_for, walk
from lorebase_keeper.reads.health import data_health, health_markdown
from lorebase_keeper.reads.history import get_history, get_lineage
from lorebase_keeper.reads.lineage import lineage_of, revision_summary
from lorebase_keeper.reads.listings import list_links, list_records
from lorebase_keeper.reads.neighborhood import neighborhood, traverse
from lorebase_keeper.reads.query import query_in, run_query
from lorebase_keeper.reads.records import get_links, get_record, links_along, load_record, title_of
from lorebase_keeper.reads.resolve import KEPT_COUNTS, resolve, vocabulary
from lorebase_keeper.reads.revisions import revision_view
from lorebase_keeper.reads.schema_view import visible_schema
from lorebase_keeper.reads.search import search, search_kinds, search_refs
from lorebase_keeper.reads.snapshots import ReadPoint, read_point
from lorebase_keeper.reads.value_counts import ValueCounts

__all__ = [
    "KEPT_COUNTS",
    "OMITTED",
    "Caps",
    "ReadPoint",
    "Ref",
    "Step",
    "ValueCounts",
    "Walk",
    "attributes_in",
    "check_vector",
    "coverage",
    "data_health",
    "diff",
    "explain",
    "explain_markdown",
    "get_history",
    "get_lineage",
    "get_links",
    "get_record",
    "health_markdown",
    "lineage_of",
    "list_links",
    "list_records",
    "links_along",
    "load_record",
    "load_records",
    "neighborhood",
    "parse_ref",
    "query_in",
    "read_point",
    "resolve",
    "revision_summary",
    "revision_view",
    "run_query",
    "search",
    "search_kinds",
    "search_refs",
    "set_embedding",
    "source_coverage",
    "steps_for",
    "title_of",
    "traverse",
    "visible_schema",
    "vocabulary",
    "walk",
]
