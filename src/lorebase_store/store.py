"""`Txn`: every table family's methods on one transaction object."""

from __future__ import annotations

from lorebase_store.commits import CommitsTxn
from lorebase_store.domains import DomainsTxn
from lorebase_store.embeddings import EmbeddingsTxn
from lorebase_store.extractions import ExtractionsTxn
from lorebase_store.memory import MemoryTxn
from lorebase_store.memory_journal import MemoryJournalTxn
from lorebase_store.memory_writes import MemoryWritesTxn
from lorebase_store.outbox import OutboxTxn
from lorebase_store.principals import PrincipalsTxn
from lorebase_store.proposals import ProposalsTxn
from lorebase_store.query import QueryTxn
from lorebase_store.receipts import ReceiptsTxn
from lorebase_store.reconciliation import ReconciliationTxn
from lorebase_store.records import RecordsTxn
from lorebase_store.revisions import RevisionsTxn
from lorebase_store.schema_jobs import SchemaJobsTxn
from lorebase_store.schema_versions import SchemaVersionsTxn
from lorebase_store.sources import SourcesTxn
from lorebase_store.statistics import StatisticsTxn
from lorebase_store.suggestions import SuggestionsTxn
from lorebase_store.tags import TagsTxn
from lorebase_store.trace import TraceTxn
from lorebase_store.vault import VaultTxn
from lorebase_store.webhooks import WebhooksTxn


class Txn(
    CommitsTxn,
    DomainsTxn,
    EmbeddingsTxn,
    ExtractionsTxn,
    MemoryTxn,
    MemoryJournalTxn,
    MemoryWritesTxn,
    PrincipalsTxn,
    ProposalsTxn,
    RevisionsTxn,
    SchemaJobsTxn,
    SchemaVersionsTxn,
    RecordsTxn,
    ReceiptsTxn,
    ReconciliationTxn,
    OutboxTxn,
    QueryTxn,
    SourcesTxn,
    StatisticsTxn,
    SuggestionsTxn,
    TagsTxn,
    TraceTxn,
    VaultTxn,
    WebhooksTxn,
):
    """One transaction of the store (see lorebase_store.db.Database.run_interaction)."""


__all__ = ["Txn"]
