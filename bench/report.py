"""The tables of `make bench`: a measure beside its raw baseline, their ratio and its target."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path

from bench import cpu

Row = tuple[str, "Measure", str, "Measure", float | None]


@dataclass
class Measure:
    name: str
    per_s: float
    p50_ms: float
    p99_ms: float
    errors: int = 0
    cpu: cpu.Usage | None = None


def machine() -> str:
    cpu_name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.node()} ({os.cpu_count()} cores, {cpu_name}, Python {platform.python_version()})"


def table_lines(rows: list[Row], ratio_name: str = "ratio") -> list[str]:
    """A table of measures beside their raw baselines, with the ratio and its target."""
    lines = [
        f"| measure | per s | p50 ms | p99 ms | baseline | per s | p50 ms | p99 ms | {ratio_name} | target |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, ours, base_name, raw, target in rows:
        ratio = ours.per_s / raw.per_s
        goal = "-" if target is None else f">= {target}x ({'met' if ratio >= target else 'missed'})"
        errors = f" ({ours.errors} non-2xx)" if ours.errors else ""
        lines.append(
            f"| {name}{errors} | {ours.per_s:.0f} | {ms(ours.p50_ms)} | {ms(ours.p99_ms)} | {base_name} | "
            f"{raw.per_s:.0f} | {ms(raw.p50_ms)} | {ms(raw.p99_ms)} | {ratio:.3f}x | {goal} |"
        )
    return lines


def ms(value: float) -> str:
    return "-" if value != value else f"{value:.2f}"  # NaN: a measure without latencies (an import)


def pair(pair: tuple[Measure, Measure], base_name: str) -> tuple[Measure, str, Measure]:
    return pair[0], base_name, pair[1]


def median_pair(pairs: list[tuple[Measure, Measure]]) -> tuple[Measure, Measure]:
    ordered = sorted(pairs, key=lambda pair: pair[0].per_s / pair[1].per_s)
    return ordered[len(ordered) // 2]


__all__ = ["Measure", "Row", "machine", "median_pair", "pair", "table_lines"]
