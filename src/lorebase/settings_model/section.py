"""What every section of settings is (`Section`: unknown keys refused, every key required; `Page`: a
page size within its largest), and the types of their values: counts, durations, fractions, ports,
names."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec
from msgspec import Meta

AtLeastOne = Annotated[int, Meta(ge=1)]
AtLeastZero = Annotated[int, Meta(ge=0)]
Seconds = Annotated[float, Meta(gt=0)]
GraceSeconds = Annotated[float, Meta(ge=0)]
Days = Annotated[float, Meta(gt=0)]
Fraction = Annotated[float, Meta(ge=0, le=1)]
Port = Annotated[int, Meta(ge=1, le=65535)]
# A JetStream stream name and a subject prefix (dot-separated tokens without wildcards or spaces).
StreamName = Annotated[str, Meta(pattern=r"\A[A-Za-z0-9_-]{1,64}\Z")]
SubjectPrefix = Annotated[str, Meta(pattern=r"\A[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\Z")]
LogLevel = Annotated[str, Meta(pattern=r"\A(?i:debug|info|warning|error|critical)\Z")]
Role = Literal["viewer", "editor", "reviewer", "admin"]
PrincipalType = Literal["service", "user"]
TrimStep = Literal[
    "lineage",
    "recent_changes",
    "far_neighbor_values",
    "far_neighbors",
    "schema_descriptions",
    "near_neighbor_values",
    "near_neighbors",
    "schema",
]


class Section(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A section of settings: unknown keys are refused, every key is required (the YAML has them)."""


class Page(Section, frozen=True):
    """A page size a request may name: a default (when it names none) within the largest allowed."""

    default_limit: AtLeastOne
    max_limit: AtLeastOne
    what: ClassVar[str] = "read"

    def __post_init__(self) -> None:
        if self.default_limit > self.max_limit:
            raise ValueError(
                f"default_limit ({self.default_limit}) is larger than max_limit ({self.max_limit}): every "
                f"{self.what} without a limit would be refused; lower default_limit or raise max_limit"
            )
