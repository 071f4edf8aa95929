"""The generated Domains of the analyst questions, by name: the test (tests/integration/test_analyst.py)
and `make bench` (bench/analyst.py) create and import each the same way."""

from __future__ import annotations

from types import ModuleType

from examples.analyst import energy, fleet

GENERATED: dict[str, ModuleType] = {"fleet": fleet, "energy": energy}

__all__ = ["GENERATED"]
