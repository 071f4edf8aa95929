"""CPU seconds per request of each process of the stack, from /proc, for every measure of `make bench`.

Wall-clock rates on a shared machine drift with whatever else runs; the CPU a process spent
(utime + stime in /proc/<pid>/stat, in clock ticks) does not. A `Meter` knows the processes of
the stack by role (gateway, keeper, feed, scribe, PostgreSQL, NATS), takes a snapshot before and
after a measure, and divides each role's CPU by the number of requests the measure made.

PostgreSQL is the postmaster and all its backends: the live children's utime + stime, plus the
postmaster's cutime + cstime, which hold the CPU of the backends it has reaped (a pgbench or
asyncpg connection that closed during the measure still counts). The services are found among
the descendants of `lorebase up` by their command line (`-m lorebase <service>`); extra replicas
started by the scale-out step (bench/scale.py) are added with `Meter.add` and summed with their
role. One module-level meter (`METER`) is installed by bench/run.py so every measure uses it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import psutil

T = TypeVar("T")
TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")
ROLES = ("gateway", "keeper", "feed", "scribe", "postgres", "nats")
SERVICE_ROLES = ("gateway", "keeper", "feed", "scribe")


def _ticks(pid: int, *, children: bool = False) -> int:
    """utime + stime of `pid` (and cutime + cstime, the reaped children's, when `children`)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    # The command name (field 2) may hold spaces: the fields after it start past its ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17.
    used = int(fields[11]) + int(fields[12])
    if children:
        used += int(fields[13]) + int(fields[14])
    return used


def _rss_mb(pid: int) -> int:
    """VmRSS of `pid` in MB (0 when it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return 0


def _child_pids(pid: int) -> list[int]:
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def service_role(cmdline: list[str]) -> str | None:
    """The service a command line runs (`python -m lorebase keeper` → keeper), or None."""
    for index, arg in enumerate(cmdline[:-1]):
        if arg == "lorebase" and index > 0 and cmdline[index - 1] == "-m":
            name = cmdline[index + 1]
            return name if name in SERVICE_ROLES else None
    return None


@dataclass
class Usage:
    """CPU seconds per request of each role over one measure (`requests` requests)."""

    per_request_s: dict[str, float]
    requests: int

    @property
    def total_s(self) -> float:
        return sum(self.per_request_s.values())

    def ms(self, role: str) -> float:
        return self.per_request_s.get(role, 0.0) * 1000


@dataclass
class Meter:
    """The processes of one running stack by role; `snapshot` reads them all at once."""

    stack_pid: int | None = None
    postmaster_pid: int | None = None
    nats_pid: int | None = None
    extra: dict[int, str] = field(default_factory=dict)

    def add(self, pid: int, role: str) -> None:
        """A process started beside the stack (a second keeper or gateway) counted with `role`."""
        self.extra[pid] = role

    def services(self) -> dict[int, str]:
        """pid → role of every service process now running under `lorebase up`, and the extras."""
        found: dict[int, str] = {}
        if self.stack_pid is not None:
            for pid in _child_pids(self.stack_pid):
                try:
                    role = service_role(psutil.Process(pid).cmdline())
                except psutil.Error:
                    continue
                if role:
                    found[pid] = role
        found.update({pid: role for pid, role in self.extra.items() if psutil.pid_exists(pid)})
        return found

    def snapshot(self) -> dict[str, int]:
        """Clock ticks used so far by each role, and by the processes keeper started
        (`migration`: a schema change's migration process, its fork server); with `rss`, their
        VmRSS in MB now (`keeper_rss_mb`, `migration_rss_mb`)."""
        used = dict.fromkeys(ROLES, 0)
        used.update(migration=0, keeper_rss_mb=0, migration_rss_mb=0)
        for pid, role in self.services().items():
            used[role] += _ticks(pid)
            if role == "keeper":
                used["keeper_rss_mb"] += _rss_mb(pid)
                for child in _child_pids(pid):
                    used["migration"] += _ticks(child, children=True)
                    used["migration_rss_mb"] += _rss_mb(child)
        if self.postmaster_pid is not None:
            used["postgres"] = _ticks(self.postmaster_pid, children=True) + sum(
                _ticks(pid) for pid in _child_pids(self.postmaster_pid)
            )
        if self.nats_pid is not None:
            used["nats"] = _ticks(self.nats_pid, children=True)
        return used

    def usage(self, before: dict[str, int], after: dict[str, int], requests: int) -> Usage:
        count = max(1, requests)
        return Usage({role: (after[role] - before[role]) * TICK_S / count for role in ROLES}, requests)

    def measure(self, run: Callable[[], T], requests: Callable[[T], int]) -> tuple[T, Usage]:
        """Run `run()`; its result and the CPU per request (`requests(result)` requests)."""
        before = self.snapshot()
        result = run()
        return result, self.usage(before, self.snapshot(), requests(result))


# Installed by bench/run.py once the stack is up; None (no CPU columns) when run without it.
METER: Meter | None = None


def measured(run: Callable[[], T], requests: Callable[[T], int]) -> tuple[T, Usage | None]:
    """`run()` under the installed meter: its result and the CPU per request (None without a meter)."""
    if METER is None:
        return run(), None
    return METER.measure(run, requests)


def begin() -> dict[str, int] | None:
    """A snapshot under the installed meter (None without one), for code that cannot be a callable
    (an async loop); `end` turns it into the CPU per request."""
    return None if METER is None else METER.snapshot()


def end(before: dict[str, int] | None, requests: int) -> Usage | None:
    if METER is None or before is None:
        return None
    return METER.usage(before, METER.snapshot(), requests)


def table(rows: Iterable[tuple[str, Usage | None, str]]) -> list[str]:
    """The per-process table: CPU milliseconds per request of each role, the total, and the ratio
    of the measure (`rows`: name, usage, ratio text)."""
    lines = [
        "CPU per request by process (ms of utime + stime from /proc; PostgreSQL is the postmaster and all"
        " its backends):",
        "",
        "| measure | requests | " + " | ".join(ROLES) + " | total | ratio |",
        "| --- | --- | " + " | ".join("---" for _ in ROLES) + " | --- | --- |",
    ]
    for name, usage, ratio in rows:
        if usage is None:
            continue
        cells = " | ".join(f"{usage.ms(role):.3f}" for role in ROLES)
        lines.append(f"| {name} | {usage.requests} | {cells} | {usage.total_s * 1000:.3f} | {ratio} |")
    return [*lines, ""]


__all__ = ["METER", "Meter", "Usage", "begin", "end", "measured", "service_role", "table"]
