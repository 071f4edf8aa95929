"""Examples for the OpenAPI document, from the seed, adapted to the supply example so they are true:
the answers (lorebase.contract.examples.answers) and the request bodies that go with them
(lorebase.contract.examples.bodies). Every one fits its model (tests/unit/test_answers.py)."""

from __future__ import annotations

from lorebase.contract.examples import bodies
from lorebase.contract.examples.answers import (
    CHANGES,
    CONTEXT_PACK,
    HEAD,
    IMPORT,
    OPERATION_EVENT,
    RESOLVE,
    REVISION_EVENT,
)

__all__ = [
    "CHANGES",
    "CONTEXT_PACK",
    "HEAD",
    "IMPORT",
    "OPERATION_EVENT",
    "RESOLVE",
    "REVISION_EVENT",
    "bodies",
]
