"""Oversight of what agents ask and do: the suggestions Scribe mines from resolve misses, decided by
a person (suggestions.py), the reconciliation candidates Scribe finds, read, dismissed
(reconciliation.py) and accepted by merging the Records (record_merge.py, proposing.py), and the trace of an agent session, step by step, with its notes
(trace.py), and the list of sessions (sessions.py)."""

from lorebase_keeper.governance.reconciliation import candidate_not_found, stewards
from lorebase_keeper.governance.sessions import list_sessions
from lorebase_keeper.governance.suggestions import decide, list_suggestions
from lorebase_keeper.governance.trace import add_note, check_session, get_session, record_step

__all__ = [
    "add_note",
    "candidate_not_found",
    "check_session",
    "decide",
    "get_session",
    "list_sessions",
    "list_suggestions",
    "record_step",
    "stewards",
]
