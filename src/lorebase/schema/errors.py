"""SchemaError: a schema document that cannot be loaded, with every problem found in it."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["SchemaError"]


class SchemaError(ValueError):
    """Every problem of a schema document, each as "path: message"; str() joins them with "; "."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))
