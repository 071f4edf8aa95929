"""Supervision (lorebase.supervision): a unit that exits is started again with a doubling delay, and
one that exits again after max_restarts restarts within the window stops the stack (CrashLoop).

The units here are stand-ins whose exits the test decides; the processes themselves are killed in
tests/e2e/test_supervision.py."""

from __future__ import annotations

import sys

import pytest

from lorebase.config import load_settings
from lorebase.embedded import EmbeddedServerError
from lorebase.supervision import CrashLoop, RestartPolicy, ServiceProcess, Supervisor


class FakeUnit:
    """Runs until told to exit; each start is counted. `failing_starts` starts raise first."""

    def __init__(self, name: str, *, failing_starts: int = 0) -> None:
        self.name = name
        self.starts = 0
        self.code: int | None = None
        self.failing_starts = failing_starts
        self.stopped = False

    def start(self) -> None:
        self.starts += 1
        if self.starts > 1 and self.failing_starts:
            self.failing_starts -= 1
            raise EmbeddedServerError("the port is taken\nmore detail")
        self.code = None

    def poll(self) -> int | None:
        return self.code

    def stop(self) -> None:
        self.stopped = True

    def tail(self) -> str:
        return f"the last words of {self.name}"


FAST = RestartPolicy(backoff_initial_s=0.001, backoff_max_s=0.004, max_restarts=3, window_s=3600)


def _until_started(supervisor: Supervisor, unit: FakeUnit, starts: int) -> None:
    while unit.starts < starts:
        supervisor.watch(0.001)


def test_a_unit_that_exits_is_started_again_with_a_doubling_delay(capsys: pytest.CaptureFixture[str]) -> None:
    supervisor, feed, keeper = Supervisor(FAST), FakeUnit("feed"), FakeUnit("keeper")
    supervisor.add(keeper)
    supervisor.add(feed)
    for restart in (1, 2, 3):
        feed.code = -9
        supervisor.watch(0)
        assert supervisor.down() == ["feed"]
        _until_started(supervisor, feed, restart + 1)
        assert supervisor.down() == []
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lorebase:")]
    assert said == [
        "lorebase: feed exited with code -9; restarting in 0.001 s (restart 1)",
        "lorebase: feed exited with code -9; restarting in 0.002 s (restart 2)",
        "lorebase: feed exited with code -9; restarting in 0.004 s (restart 3)",
    ]
    assert keeper.starts == 1
    supervisor.stop()
    assert keeper.stopped and feed.stopped


def test_one_more_exit_after_max_restarts_in_the_window_is_a_crash_loop() -> None:
    supervisor, scribe = Supervisor(FAST), FakeUnit("scribe")
    supervisor.add(scribe)
    for restart in range(1, FAST.max_restarts + 1):
        scribe.code = 2
        supervisor.watch(0)
        _until_started(supervisor, scribe, restart + 1)
    scribe.code = 2
    with pytest.raises(CrashLoop) as raised:
        supervisor.watch(0)
    assert raised.value.code == 2
    message = str(raised.value)
    assert message.startswith(
        "scribe is in a crash loop: it exited with code 2 after 3 restarts within 3600 s"
    )
    assert "supervisor.max_restarts" in message and message.endswith("the last words of scribe")
    supervisor.stop()
    assert not scribe.stopped, "a unit that is down for good has nothing to stop"


def test_exits_older_than_the_window_do_not_count() -> None:
    policy = RestartPolicy(backoff_initial_s=0.001, backoff_max_s=0.001, max_restarts=1, window_s=0.05)
    supervisor, gateway = Supervisor(policy), FakeUnit("gateway")
    supervisor.add(gateway)
    for restart in range(1, 4):
        supervisor.watch(policy.window_s)  # the previous restart leaves the window
        gateway.code = 1
        supervisor.watch(0)
        _until_started(supervisor, gateway, restart + 1)
    supervisor.stop()


def test_a_start_that_fails_counts_as_an_exit(capsys: pytest.CaptureFixture[str]) -> None:
    supervisor, postgres = Supervisor(FAST), FakeUnit("PostgreSQL", failing_starts=1)
    supervisor.add(postgres)
    postgres.code = -9
    supervisor.watch(0)
    _until_started(supervisor, postgres, 3)
    assert supervisor.down() == []
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lorebase:")]
    assert said == [
        "lorebase: PostgreSQL exited with code -9; restarting in 0.001 s (restart 1)",
        "lorebase: PostgreSQL could not start again (the port is taken); restarting in 0.002 s (restart 2)",
    ]
    supervisor.stop()


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("BACKOFF_INITIAL_S", "0"),
        ("BACKOFF_MAX_S", "0.1"),
        ("MAX_RESTARTS", "-1"),
        ("WINDOW_S", "0"),
    ],
)
def test_settings_out_of_range_are_refused(variable: str, value: str) -> None:
    with pytest.raises(ValueError, match="supervisor."):  # refused when the settings load
        load_settings({f"LOREBASE_SUPERVISOR__{variable}": value})


def test_the_defaults_come_from_the_settings_file() -> None:
    assert RestartPolicy.from_settings(load_settings({})) == RestartPolicy(0.5, 10.0, 5, 60.0)


_CHATTY = (
    "import sys; print('first'); print('second', flush=True); sys.stderr.write('last words'); sys.exit(3)"
)


def test_a_service_output_passes_through_and_its_last_lines_are_kept(
    capfd: pytest.CaptureFixture[str],
) -> None:
    service = ServiceProcess("feed", [sys.executable, "-c", _CHATTY], {}, lambda: {}, stop_timeout_s=5)
    supervisor = Supervisor(RestartPolicy(max_restarts=0))
    supervisor.add(service)
    with pytest.raises(CrashLoop) as raised:
        while True:
            supervisor.watch(0.05)
    assert raised.value.code == 3
    assert str(raised.value).endswith("its last lines:\nfirst\nsecond\nlast words")
    assert "first\nsecond\nlast words" in capfd.readouterr().err
    supervisor.stop()
