"""Herald's tools: each one REST call (or two) of docs/rest.md, with a JSON schema for its input.

A tool gets the REST client of the caller (its credential, never Herald's own) and the Domain it
defaults to, and answers text: Markdown where the REST call has a Markdown format (context, explain,
health), else the JSON answer. Problems come back as tool errors carrying the problem document.

How a tool is declared, and how its arguments are made from the endpoint declarations, is
`declare.py`. The tools, in the order TOOLS lists them (the order the modules are imported below):

- `reads.py`: lorebase_context, lorebase_search, lorebase_schema, lorebase_resolve, lorebase_query
- `graph.py`: lorebase_record, lorebase_links, lorebase_neighborhood, lorebase_traverse
- `lineage.py`: lorebase_explain, lorebase_history, lorebase_lineage
- `changes.py`: lorebase_health, lorebase_diff, lorebase_changes
- `review.py`: lorebase_proposals, lorebase_reconciliation
- `writes.py`: lorebase_execute, lorebase_reconcile (and `idempotency_key`)

The REST endpoints with no tool, each with the reason, are `refused.py` (NOT_IN_HERALD).
"""

from __future__ import annotations

# Each tool module registers its tools in TOOLS as it is imported: keep this order (TOOLS' order is
# the order tools/list answers).
# isort: off
from lorebase.herald.tools import reads as reads
from lorebase.herald.tools import graph as graph
from lorebase.herald.tools import lineage as lineage
from lorebase.herald.tools import changes as changes
from lorebase.herald.tools import review as review
from lorebase.herald.tools import writes as writes

# isort: on
from lorebase.herald.tools.declare import TOOLS, Answer, Arg, HeraldTool, for_tool, tool
from lorebase.herald.tools.refused import NOT_IN_HERALD
from lorebase.herald.tools.writes import idempotency_key

TOOLS_BY_NAME = {t.name: t for t in TOOLS}

__all__ = [
    "NOT_IN_HERALD",
    "TOOLS",
    "TOOLS_BY_NAME",
    "Answer",
    "Arg",
    "HeraldTool",
    "for_tool",
    "idempotency_key",
    "tool",
]
