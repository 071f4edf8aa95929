"""Process plumbing shared by the embedded servers: ports, owned children, stopping, logs."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


class EmbeddedServerError(RuntimeError):
    """An embedded server could not be set up, started or stopped; the message says why."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_PR_SET_PDEATHSIG = 1


def _die_with_parent(death_signal: signal.Signals) -> Callable[[], None] | None:
    """A preexec_fn asking Linux to send `death_signal` to the child when we die, even by SIGKILL.

    Only from the only thread: the kernel signals when the *thread* that forked exits, and
    preexec_fn is unsafe while other threads run. Elsewhere the caller's own cleanup has to do.
    """
    if not sys.platform.startswith("linux") or threading.active_count() != 1:
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def setup() -> None:
        prctl(_PR_SET_PDEATHSIG, int(death_signal))
        if os.getppid() != parent:  # we died before prctl took effect
            os.kill(os.getpid(), death_signal)

    return setup


def owned_child(death_signal: signal.Signals) -> dict[str, Any]:
    """Popen arguments for a child that we stop ourselves, in order: in its own process group, so
    that a Ctrl-C in the terminal reaches only us (we then stop the children one after the other,
    the servers last), and signalled with `death_signal` by the kernel should we die without
    stopping it (Linux)."""
    options: dict[str, Any] = {"process_group": 0} if os.name == "posix" else {}
    setup = _die_with_parent(death_signal)
    if setup is not None:
        options["preexec_fn"] = setup
    return options


def _log_tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


def _port_accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _stop_process(process: subprocess.Popen[bytes], first: signal.Signals, timeout_s: float) -> int:
    """Send `first`, wait up to `timeout_s`, then SIGKILL; the exit code."""
    if process.poll() is None:
        process.send_signal(first)
        try:
            return process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
    return process.wait()


def _open_log(path: Path) -> int:
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
