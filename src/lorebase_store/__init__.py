"""The storage layer: the only package that speaks SQL. Store methods take and return plain values."""

from lorebase_store.commits import CommitRows
from lorebase_store.db import Database
from lorebase_store.domains import BranchRow, DomainRow
from lorebase_store.extractions import ExtractionRow
from lorebase_store.memory import MemoryGrantRow, MemoryPrincipal, MemoryReceipt, MemoryRecordRow
from lorebase_store.memory_journal import CheckpointRow, JournalEntryRow, JournalPage, JournalRow
from lorebase_store.memory_writes import MemoryGroupState, MemoryRows, ReceiptTaken
from lorebase_store.migrate import DatabaseTooNew, upgrade
from lorebase_store.outbox import OutboxEvent
from lorebase_store.principals import CredentialRow, GrantRow, PrincipalRow
from lorebase_store.proposals import AttemptRow, ConflictRow, ProposalRow, ReviewRow
from lorebase_store.query import OrderBy, QuerySpec
from lorebase_store.receipts import Receipt
from lorebase_store.reconciliation import CandidateRow, ScanRow
from lorebase_store.records import LinkRow, RecordRow, RefsRead
from lorebase_store.revisions import RENAMED_FROM, BranchChain, HistoryRow, RevisionRow
from lorebase_store.schema_jobs import NewSchemaJob, SchemaJobRow
from lorebase_store.sources import SourceState, SourceSyncRow
from lorebase_store.statistics import KindStatistics
from lorebase_store.store import Txn
from lorebase_store.suggestions import SuggestionRow
from lorebase_store.tags import TagRow
from lorebase_store.trace import TraceSessionRow
from lorebase_store.unavailable import store_unavailable
from lorebase_store.vault import ErasureRow, VaultEntry

__all__ = [
    "AttemptRow",
    "ConflictRow",
    "ProposalRow",
    "ReviewRow",
    "BranchChain",
    "CandidateRow",
    "CheckpointRow",
    "JournalEntryRow",
    "JournalPage",
    "JournalRow",
    "MemoryGrantRow",
    "MemoryGroupState",
    "MemoryPrincipal",
    "MemoryReceipt",
    "MemoryRecordRow",
    "MemoryRows",
    "BranchRow",
    "CommitRows",
    "Database",
    "store_unavailable",
    "DatabaseTooNew",
    "DomainRow",
    "ErasureRow",
    "ExtractionRow",
    "GrantRow",
    "HistoryRow",
    "RENAMED_FROM",
    "KindStatistics",
    "LinkRow",
    "OrderBy",
    "OutboxEvent",
    "PrincipalRow",
    "NewSchemaJob",
    "SchemaJobRow",
    "TraceSessionRow",
    "CredentialRow",
    "QuerySpec",
    "Receipt",
    "ReceiptTaken",
    "RecordRow",
    "RefsRead",
    "RevisionRow",
    "ScanRow",
    "SourceState",
    "SourceSyncRow",
    "SuggestionRow",
    "TagRow",
    "Txn",
    "VaultEntry",
    "upgrade",
]
