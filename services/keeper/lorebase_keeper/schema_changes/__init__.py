"""Schema change sets on a branch: the new schema version and its data migration as one Revision
(docs/schema.md, "Changing a schema")."""

from lorebase_keeper.schema_changes.catch_up import Ahead, ToStage, catch_up, staged_ahead, to_stage
from lorebase_keeper.schema_changes.change import change_schema, plan_of
from lorebase_keeper.schema_changes.jobs import (
    Preferences,
    accept,
    fail_abandoned,
    get_job,
    list_jobs,
    preferences,
)
from lorebase_keeper.schema_changes.migrate import BATCH, Migration, migrate
from lorebase_keeper.schema_changes.staged import clear_staged

__all__ = [
    "Ahead",
    "BATCH",
    "Migration",
    "Preferences",
    "ToStage",
    "accept",
    "catch_up",
    "change_schema",
    "clear_staged",
    "fail_abandoned",
    "get_job",
    "list_jobs",
    "migrate",
    "plan_of",
    "preferences",
    "staged_ahead",
    "to_stage",
]
