"""Keeper's settings (keeper): its auth (auth.py), read cache, agents' writes, Operations, rate
limits, commits, imports and schema change sets."""

from __future__ import annotations

import string
from typing import Annotated, Literal

from msgspec import Meta

from lorebase import names
from lorebase.settings_model.auth import (
    Auth,
)
from lorebase.settings_model.section import (
    AtLeastOne,
    AtLeastZero,
    Days,
    PrincipalType,
    Role,
    Seconds,
    Section,
)


class AgentWrites(Section, frozen=True):
    enabled: bool
    principal_types: list[PrincipalType]
    auto_propose: bool
    auto_merge: bool
    allowed_roles_for_auto_merge: list[Role]
    max_open_branches_per_principal: AtLeastZero
    branch_prefix: str
    branch_mode: Literal["overlay", "copy"]
    delete_branch_on_merge: bool
    max_task_length: AtLeastOne
    title_template: str
    summary_parameter_values: bool
    summary_value_chars: AtLeastOne
    max_summary_operations: AtLeastZero

    def __post_init__(self) -> None:
        # The title is `title_template.format(principal=..., task=...)`: any other field would fail
        # when the first task Proposal opens.
        try:
            fields = [
                name for _, name, _, _ in string.Formatter().parse(self.title_template) if name is not None
            ]
        except ValueError as exc:
            raise ValueError(f"title_template is not a format string: {exc}") from None
        unknown = sorted({name for name in fields if name not in ("principal", "task")})
        if unknown:
            raise ValueError(
                f"title_template may use {{principal}} and {{task}} only, not {', '.join(unknown)}"
            )
        # Task branches are <branch_prefix><principal>/<task>: the prefix must keep them valid names.
        why = names.BRANCH.problem(f"{self.branch_prefix}usr_x/task")
        if why:
            raise ValueError(f"branch_prefix {self.branch_prefix!r} makes task branch names invalid: {why}")


class Operations(Section, frozen=True):
    side_effect_max_edits: AtLeastZero
    idempotency_retention_days: Days


class Bucket(Section, frozen=True):
    per_second: Annotated[float, Meta(gt=0)]
    burst: Annotated[float, Meta(ge=1)]


class RateLimits(Section, frozen=True):
    enabled: bool
    reads: Bucket
    writes: Bucket


class Commit(Section, frozen=True):
    max_group: AtLeastOne


class Imports(Section, frozen=True):
    max_items: AtLeastOne


class SchemaChanges(Section, frozen=True):
    batch_records: AtLeastOne
    catch_up_max: AtLeastZero
    duty: Annotated[float, Meta(gt=0, le=1)]
    nice: Annotated[int, Meta(ge=0, le=19)]
    job_deadline_s: Seconds
    job_heartbeat_s: Seconds
    job_lease_s: Seconds
    job_wait_max_s: Seconds
    job_retention_s: Seconds


class ReadCache(Section, frozen=True):
    max_entries: AtLeastZero


class Keeper(Section, frozen=True):
    auth: Auth
    read_cache: ReadCache
    check_answers: bool
    agent_writes: AgentWrites
    operations: Operations
    rate_limits: RateLimits
    commit: Commit
    imports: Imports
    schema_changes: SchemaChanges
