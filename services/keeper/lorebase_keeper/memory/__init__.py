"""Agent memory (docs/memory.md): commands on memory records checked and committed in groups per
journal, memory grants, and the reads of records.

It needs the database and its own committer only, never the Runtime (which holds the committer):
the servicer (api/memory.py) passes `rt.db` and runs a command with `rt.memory.run`."""

from lorebase_keeper.memory.commands import (
    COMMANDS,
    Command,
    not_found,
    now_millis,
    parse_command,
    readable_record,
    visible,
)
from lorebase_keeper.memory.commit import MemoryCommitter
from lorebase_keeper.memory.grants import create_grant, delete_grant
from lorebase_keeper.memory.plan import GroupPlan, Misrouted
from lorebase_keeper.memory.reads import get_record, query_records
from lorebase_keeper.memory.records import (
    REVIEW_DECISIONS,
    availability,
    content_member,
    embedding_digest,
    embedding_member,
    invalid,
    issue,
    record_document,
    record_scope,
    revision_member,
    state_digest,
    unknown_members,
    valid_until_member,
)

__all__ = [
    "COMMANDS",
    "REVIEW_DECISIONS",
    "Command",
    "GroupPlan",
    "MemoryCommitter",
    "Misrouted",
    "availability",
    "content_member",
    "create_grant",
    "delete_grant",
    "embedding_digest",
    "embedding_member",
    "get_record",
    "invalid",
    "issue",
    "not_found",
    "now_millis",
    "parse_command",
    "query_records",
    "readable_record",
    "record_document",
    "record_scope",
    "revision_member",
    "state_digest",
    "unknown_members",
    "valid_until_member",
    "visible",
]
