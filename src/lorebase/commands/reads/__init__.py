"""Read commands: context, search, query, resolve, record, links, neighborhood, traverse,
health and diff (docs/cli.md; the REST calls are in docs/rest.md and the seed's agent guide).

One module per family of commands, in the order `lorebase --help` lists them (the order the modules
are imported below):

- `context.py`: context
- `search.py`: search, query, resolve
- `pages.py`: revision, records, relation-links (paged listings)
- `record.py`: record (get, history, lineage, explain)
- `graph.py`: links, neighborhood, traverse
- `health.py`: health
- `diff.py`: diff

What they share (a KIND/KEY argument, --branch and --at, values on one line) is `_common.py`.
"""

from __future__ import annotations

# Each module registers its commands in lorebase.subcommands.COMMANDS as it is imported: keep this
# order (COMMANDS' order is the order `lorebase --help` lists them in).
# isort: off
from lorebase.commands.reads import context as context
from lorebase.commands.reads import search as search
from lorebase.commands.reads import pages as pages
from lorebase.commands.reads import record as record
from lorebase.commands.reads import graph as graph
from lorebase.commands.reads import health as health
from lorebase.commands.reads import diff as diff

# isort: on
from lorebase.commands.reads.record import _history_human as _history_human
from lorebase.commands.reads.record import _lineage_human as _lineage_human

__all__ = ["context", "diff", "graph", "health", "pages", "record", "search"]
