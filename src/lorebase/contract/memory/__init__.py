"""Agent memory (docs/memory.md): records, their commands and reads, and memory grants go to
keeper's MemoryStore (records.py); the change journal and consumer checkpoints to feed's
MemoryJournal (journal.py). Bodies are limited to memory.max_body_bytes and every answer carries
Cache-Control: no-store.

Each body is a Struct with the members and bounds of docs/memory.md; the gateway decodes it at the
edge and the service again (lorebase.contract.decode). A body that does not fit answers its
endpoint's `invalid_status`, the status the services answered before the models: 422
validation-failed for the commands and grants, 400 for the query, the journal and checkpoints.
What a model cannot say is the service's to check, after the credential: a rule across members or
requests (an idempotency key from the body or the header, at least one change in an update,
distinct derived_from and capabilities), one that needs a setting (content within
memory.max_content_bytes), and content that is null (so that a revoked key still answers 401
before such a body answers 422).
"""

from lorebase.contract.memory import journal, records
from lorebase.contract.memory.journal import (
    ChangesBody,
    ChangesQuery,
    CheckpointDeletion,
    CheckpointSave,
    JournalPosition,
)
from lorebase.contract.memory.records import (
    DerivedMemory,
    EmbeddingBinding,
    GrantedScope,
    MemoryDeletion,
    MemoryGrantBody,
    MemoryQueryBody,
    MemoryReviewCommand,
    MemoryUpdate,
    NewMemory,
    ScopeRef,
)

ENDPOINTS = [*records.ENDPOINTS, *journal.ENDPOINTS]

__all__ = [
    "ENDPOINTS",
    "ChangesBody",
    "ChangesQuery",
    "CheckpointDeletion",
    "CheckpointSave",
    "DerivedMemory",
    "EmbeddingBinding",
    "GrantedScope",
    "JournalPosition",
    "MemoryDeletion",
    "MemoryGrantBody",
    "MemoryQueryBody",
    "MemoryUpdate",
    "NewMemory",
    "MemoryReviewCommand",
    "ScopeRef",
]
