"""Operation executions (seed section 4): checked (prepare.py), refused for review with the calls
that move them on (review.py), committed or dry-run on a branch (work.py), or run as an agent task
on a task branch with a Proposal (agent_tasks.py); `execute` chooses (execute.py)."""

from lorebase_keeper.operations.agent_tasks import execute_task, normalise_task
from lorebase_keeper.operations.execute import execute
from lorebase_keeper.operations.prepare import (
    Prepared,
    operation_kinds,
    parse_execute,
    prepare,
    unknown_operation,
)
from lorebase_keeper.operations.review import needs_review, review_required
from lorebase_keeper.operations.work import dry_run, make_work

__all__ = [
    "Prepared",
    "dry_run",
    "execute",
    "execute_task",
    "make_work",
    "needs_review",
    "normalise_task",
    "operation_kinds",
    "parse_execute",
    "prepare",
    "review_required",
    "unknown_operation",
]
