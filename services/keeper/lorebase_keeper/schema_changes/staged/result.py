"""What a staged migration is (`Staged`): where its rows are staged, what the Revision needs of
them, what the answer says, and how a staging in a process of its own sends it back as JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from lorebase_keeper.schema_changes.counts import StagedCounts
from lorebase_keeper.schema_changes.migrate import (
    Checked,
    Writes,
)
from lorebase_keeper.writes import (
    ChangeSummary,
    Head,
)


@dataclass
class Staged:
    """A migration planned over `head`: its rows staged in the database under `staging` (None: none
    were, a dry run or a refused one), what the Revision's id and event need of its changes
    (`summary`), and what the answer says (`migrated`, `writes`)."""

    head: Head
    migration: Checked  # the Migration itself in this process; what it found, from another
    staging: str | None
    summary: ChangeSummary
    count: int  # staged rows (changes)
    counts: dict[str, int]  # Records and Links migrated (Staged.migrated)
    written: Writes
    caught_up: int = 0  # Records and Links migrated again at the commit
    cleared_meanwhile: list[dict[str, Any]] = field(default_factory=list)  # by the catch-up
    # The (Kind, Attribute) its Record changes name (each lists them, as its history row will).
    named: set[tuple[str, str]] = field(default_factory=set)
    # What its rows do to resolve's value counts (counts.py), once taken; kept up by the catch-up.
    values: StagedCounts | None = None

    @property
    def violations(self) -> list[dict[str, Any]]:
        return self.migration.violations

    @property
    def violation_count(self) -> int:
        return self.migration.violation_count

    @property
    def cleared(self) -> list[dict[str, Any]]:
        """The values on_invalid: clear cleared (the staged migration's and the catch-up's)."""
        # A Record migrated again at the catch-up is named once, as the catch-up left it.
        by_path = {entry["path"]: entry for entry in self.migration.cleared + self.cleared_meanwhile}
        return list(by_path.values())

    def migrated(self) -> dict[str, int]:
        """How many Records and Links the migration changes; one a rename moved (deleted under its
        old name, created under the new one) counts once."""
        return dict(self.counts)

    def writes(self) -> dict[str, Any]:
        """What the migration writes (Migration.writes), over the staged and the caught-up changes."""
        return self.written.document()

    def document(self) -> dict[str, Any]:
        """As JSON, for a staging in a process of its own (process.py) to send back; `of_document`
        makes it again (with `migration` what it found: `Checked`)."""
        written = self.written
        return {
            "head": [self.head.revision, self.head.generation, self.head.schema],
            "migration": Checked.document(self.migration),
            "staging": self.staging,
            "summary": asdict(self.summary),
            "count": self.count,
            "counts": self.counts,
            "written": [
                written.keep,
                written.counts,
                written.derived,
                written.sample,
                written.derived_sample,
            ],
            "named": sorted(self.named),
        }

    @classmethod
    def of_document(cls, document: dict[str, Any]) -> Staged:
        return cls(
            Head(*document["head"]),
            Checked.of_document(document["migration"]),
            document["staging"],
            ChangeSummary(**document["summary"]),
            document["count"],
            document["counts"],
            Writes(*document["written"]),
            named={(kind, name) for kind, name in document["named"]},
        )
