"""Agent memory (docs/memory.md): commands on memory records checked and committed in groups per
journal, memory grants, and the reads of records.

It needs the database and its own committer only, never the Runtime (which holds the committer):
the servicer (api/memory.py) decodes each body into its model (lorebase.contract.memory), passes
`rt.db` and runs a command with `rt.memory.run`."""

from lorebase_keeper.memory.commands import (
    COMMANDS,
    Command,
    CommandBody,
    command_of,
    not_found,
    now_millis,
    readable_record,
    visible,
)
from lorebase_keeper.memory.commit import MemoryCommitter
from lorebase_keeper.memory.grants import create_grant, delete_grant
from lorebase_keeper.memory.plan import GroupPlan, Misrouted
from lorebase_keeper.memory.reads import get_record, query_records
from lorebase_keeper.memory.records import (
    availability,
    content_digest,
    embedding_digest,
    invalid,
    issue,
    record_document,
    record_scope,
    state_digest,
)

__all__ = [
    "COMMANDS",
    "Command",
    "CommandBody",
    "GroupPlan",
    "MemoryCommitter",
    "Misrouted",
    "availability",
    "command_of",
    "content_digest",
    "create_grant",
    "delete_grant",
    "embedding_digest",
    "get_record",
    "invalid",
    "issue",
    "not_found",
    "now_millis",
    "query_records",
    "readable_record",
    "record_document",
    "record_scope",
    "state_digest",
    "visible",
]
