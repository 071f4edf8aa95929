"""Supervision for `lorebase up`: a part of the stack that dies is started again, with backoff.

Each part (the embedded PostgreSQL and NATS, and the keeper, feed, scribe and gateway processes) is
a `Unit`. The `Supervisor` polls them; one that has exited is started again after a delay that
doubles with each consecutive restart (`supervisor.backoff_initial_s` up to
`supervisor.backoff_max_s`; a unit that ran for `supervisor.window_s` starts from the initial delay
again), with the same command, ports and environment, so that the others reach it where they did.
Every restart is said on stderr (`lorebase: feed exited with code -9; restarting in 0.5 s (restart
1)`). A unit that exits again after `supervisor.max_restarts` restarts within `supervisor.window_s`
is in a crash loop: the supervisor raises `CrashLoop`, naming it with its last log lines, and `up`
stops the stack. This is what systemd's `Restart=on-failure` with `StartLimitBurst` or a Kubernetes
pod's restart backoff do.

An embedded server comes back on the same port with the same data; the services reconnect to it by
themselves (their database pools drop broken connections, the feed's relay listens again and its
NATS client reconnects without end). A service's output goes through a pipe: the supervisor copies
it to its own stderr as it comes and keeps the last lines for the crash loop's message. Everything
runs on the one thread of `up` (a `selectors` loop), so that children keep being started from the
only thread (lorebase.embedded._process: the kernel stops them should `up` die).
"""

from __future__ import annotations

import fcntl
import math
import os
import select
import selectors
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from lorebase.config import Settings
from lorebase.embedded import EmbeddedServerError
from lorebase.embedded._process import _log_tail

# Lines of a unit's output kept for the crash loop's message.
TAIL_LINES = 20
# A pipe this large lets a service log for a while when `up` is busy starting a server again.
_PIPE_BYTES = 1 << 20


def say(message: str) -> None:
    print(f"lorebase: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class RestartPolicy:
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 10.0
    max_restarts: int = 5
    window_s: float = 60.0

    @classmethod
    def from_settings(cls, settings: Settings) -> RestartPolicy:
        """The `supervisor` settings (their ranges are checked when the settings load)."""
        supervisor = settings.model.supervisor
        return cls(
            backoff_initial_s=supervisor.backoff_initial_s,
            backoff_max_s=supervisor.backoff_max_s,
            max_restarts=supervisor.max_restarts,
            window_s=supervisor.window_s,
        )

    def delay(self, consecutive: int) -> float:
        """The wait before the `consecutive`-th restart in a row (1, 2, ...)."""
        return min(self.backoff_initial_s * 2 ** (consecutive - 1), self.backoff_max_s)


class CrashLoop(Exception):
    """A unit exited again after max_restarts restarts within window_s; the message says which."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class Unit(Protocol):
    name: str

    def start(self) -> None: ...

    def poll(self) -> int | None: ...

    def stop(self) -> None: ...

    def tail(self) -> str: ...


class ServiceProcess:
    """`python -m lorebase <name>`, its output copied through to stderr, its last lines kept."""

    def __init__(
        self,
        name: str,
        command: Sequence[str],
        env: dict[str, str],
        popen_options: Callable[[], dict[str, Any]],
        stop_timeout_s: float,
    ) -> None:
        self.name = name
        self.command = list(command)
        self.env = env
        self.popen_options = popen_options
        self.stop_timeout_s = stop_timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        self.lines: deque[str] = deque(maxlen=TAIL_LINES)
        self._partial = b""

    @property
    def output(self) -> int | None:
        """The read end of the running process's output pipe."""
        if self.process is None or self.process.stdout is None or self.process.stdout.closed:
            return None
        return self.process.stdout.fileno()

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.command,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            **self.popen_options(),
        )
        assert self.process is not None and self.process.stdout is not None
        fd = self.process.stdout.fileno()
        os.set_blocking(fd, False)
        if hasattr(fcntl, "F_SETPIPE_SZ"):
            try:
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
            except OSError:
                pass

    def poll(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def pump(self) -> bool:
        """Copy what the process has written to stderr; False at the end of its output."""
        data = self._read()
        if data is None:
            return True
        if not data:
            if self._partial:
                self.lines.append(self._partial.decode("utf-8", errors="replace"))
                self._partial = b""
            return False
        sys.stderr.buffer.write(data)
        sys.stderr.buffer.flush()
        *lines, self._partial = (self._partial + data).split(b"\n")
        self.lines.extend(line.decode("utf-8", errors="replace") for line in lines)
        return True

    def drain(self) -> None:
        """Copy what is left in the pipe of an exited process (never waiting), and close it."""
        while self._readable() and self.pump():
            pass
        if self._partial:
            self.lines.append(self._partial.decode("utf-8", errors="replace"))
            self._partial = b""
        self.close_output()

    def close_output(self) -> None:
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()

    def _readable(self) -> bool:
        fd = self.output
        return fd is not None and bool(select.select([fd], [], [], 0)[0])

    def _read(self) -> bytes | None:
        """What the pipe holds (b"": its end; None: nothing now)."""
        fd = self.output
        if fd is None:
            return b""
        try:
            return os.read(fd, 65536)
        except BlockingIOError:
            return None
        except OSError:
            return b""

    def stop(self) -> None:
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                say(f"{self.name} did not stop within {self.stop_timeout_s:.0f} s; killing it")
                process.kill()
        code = process.wait()
        self.drain()
        if code not in (0, -15):
            say(f"{self.name} exited with code {code}")

    def tail(self) -> str:
        return "\n".join(self.lines) or "(no output)"


class ServerProcess:
    """An embedded server (EmbeddedPostgres, EmbeddedNats) as a unit; its log is its output."""

    class _Server(Protocol):
        log_path: Path

        def start(self) -> str: ...

        def poll(self) -> int | None: ...

        def stop(self) -> None: ...

    def __init__(self, name: str, server: _Server) -> None:
        self.name = name
        self.server = server

    def start(self) -> None:
        self.server.stop()  # reap the dead process; the server keeps its port
        self.server.start()

    def poll(self) -> int | None:
        return self.server.poll()

    def stop(self) -> None:
        self.server.stop()

    def tail(self) -> str:
        return _log_tail(self.server.log_path, TAIL_LINES)


@dataclass
class _State:
    started_at: float
    restarts: deque[float]  # when each restart within the window was decided
    total: int = 0
    consecutive: int = 0
    restart_at: float | None = None  # while down: when to start it again
    code: int = 0


class Supervisor:
    """Watches units (in start order) and starts again those that exit; see the module docstring."""

    def __init__(self, policy: RestartPolicy) -> None:
        self.policy = policy
        self.units: list[Unit] = []
        self._states: dict[str, _State] = {}
        self._selector = selectors.DefaultSelector()

    def add(self, unit: Unit) -> None:
        """Start `unit` and watch it (stop() stops it even when its start failed half-way)."""
        self.units.append(unit)
        self._states[unit.name] = _State(time.monotonic(), deque())
        unit.start()
        self._watch_output(unit)

    def adopt(self, unit: Unit) -> None:
        """Watch `unit`, started already (servers that start together, as a NATS cluster's nodes)."""
        self.units.append(unit)
        self._states[unit.name] = _State(time.monotonic(), deque())
        self._watch_output(unit)

    def remove(self, unit: Unit) -> None:
        """Stop watching `unit` and stop it (it is replaced, as a pod by a newer one)."""
        self.units.remove(unit)
        self._states.pop(unit.name, None)
        self._unwatch_output(unit)
        unit.stop()

    def down(self) -> list[str]:
        return [unit.name for unit in self.units if self._states[unit.name].restart_at is not None]

    def watch(self, seconds: float) -> None:
        """Copy output and handle exits and due restarts for `seconds`; CrashLoop ends it early."""
        deadline = time.monotonic() + seconds
        while True:
            self._check()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self._pump(min(remaining, 0.1))

    def stop(self) -> None:
        """Stop every unit, the last started first."""
        for unit in reversed(self.units):
            # A service that is down was reaped when it exited; a server is reaped by its stop().
            if self._states[unit.name].restart_at is None or isinstance(unit, ServerProcess):
                self._unwatch_output(unit)
                unit.stop()
        self.units.clear()
        self._selector.close()

    def _check(self) -> None:
        now = time.monotonic()
        for unit in self.units:
            state = self._states[unit.name]
            if state.restart_at is None:
                code = unit.poll()
                if code is not None:
                    self._exited(unit, code, now, f"exited with code {code}")
            elif now >= state.restart_at:
                try:
                    unit.start()
                except (EmbeddedServerError, OSError) as exc:
                    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                    self._exited(unit, state.code, now, f"could not start again ({first})")
                    continue
                state.restart_at, state.started_at = None, time.monotonic()
                self._watch_output(unit)

    def _exited(self, unit: Unit, code: int, now: float, what: str) -> None:
        state = self._states[unit.name]
        self._unwatch_output(unit)
        if isinstance(unit, ServiceProcess):
            unit.drain()
        state.code = code
        while state.restarts and state.restarts[0] < now - self.policy.window_s:
            state.restarts.popleft()
        if len(state.restarts) >= self.policy.max_restarts:
            state.restart_at = math.inf  # down for good: stop() has nothing left to stop
            raise CrashLoop(
                f"{unit.name} is in a crash loop: it {what} after {len(state.restarts)} restarts within "
                f"{self.policy.window_s:g} s (supervisor.max_restarts, supervisor.window_s); "
                f"its last lines:\n{unit.tail()}",
                code,
            )
        if state.restart_at is None and now - state.started_at >= self.policy.window_s:
            state.consecutive = 0  # it had been running fine: start from the initial delay
        state.consecutive += 1
        state.total += 1
        state.restarts.append(now)
        delay = self.policy.delay(state.consecutive)
        state.restart_at = now + delay
        say(f"{unit.name} {what}; restarting in {delay:g} s (restart {state.total})")

    def _watch_output(self, unit: Unit) -> None:
        if isinstance(unit, ServiceProcess) and unit.output is not None:
            self._selector.register(unit.output, selectors.EVENT_READ, unit)

    def _unwatch_output(self, unit: Unit) -> None:
        if isinstance(unit, ServiceProcess) and unit.output is not None:
            try:
                self._selector.unregister(unit.output)
            except (KeyError, ValueError):
                pass

    def _pump(self, timeout: float) -> None:
        if not self._selector.get_map():
            time.sleep(timeout)
            return
        for key, _ in self._selector.select(timeout):
            unit = key.data
            if not unit.pump():
                self._selector.unregister(key.fd)
                unit.close_output()


__all__ = ["CrashLoop", "RestartPolicy", "ServerProcess", "ServiceProcess", "Supervisor", "Unit", "say"]
