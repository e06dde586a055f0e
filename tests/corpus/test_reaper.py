"""The reaper: a run's dispynode never outlives the run (real processes, real signals)."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


@pytest.fixture
def workdir(tmp_path):
    """The run's ``mosaic-dispy-*`` folder the reaper removes."""
    folder = tmp_path / "mosaic-dispy-x"
    folder.mkdir()
    return folder


def reaper_command(workdir, run_pid: int, command: list[str]) -> list[str]:
    return [sys.executable, "-m", "mosaic.corpus.reaper", str(workdir), str(run_pid), "--", *command]


def wait_for_child(pid: int, timeout: float = 20.0) -> psutil.Process:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children = psutil.Process(pid).children()
        if children:
            return children[0]
        time.sleep(0.05)
    raise AssertionError(f"process {pid} started no child within {timeout} s")


def test_a_burst_of_signals_stops_the_command_and_removes_the_workdir(workdir):
    """Signals arriving back to back (the run's SIGTERM at its end, then the death
    signal of a run killed right after) once deadlocked the reaper in its own handler."""
    reaper = subprocess.Popen(reaper_command(workdir, os.getpid(), SLEEPER))
    try:
        command = wait_for_child(reaper.pid)
        deadline = time.monotonic() + 3.0  # a stream of the three signals it handles
        for signum in itertools.cycle((signal.SIGTERM, signal.SIGHUP, signal.SIGINT)):
            if reaper.poll() is not None or time.monotonic() > deadline:
                break
            os.kill(reaper.pid, signum)
        assert reaper.wait(timeout=20) == 0
        assert not command.is_running() or command.status() == psutil.STATUS_ZOMBIE
        assert not workdir.exists()
    finally:
        reaper.kill()


def test_a_sigkilled_run_takes_the_command_down(workdir):
    spawn = (
        f"import os, subprocess, time; args = {reaper_command(workdir, 0, SLEEPER)!r}; "
        "args[4] = str(os.getpid()); subprocess.Popen(args); time.sleep(120)"
    )
    run = subprocess.Popen([sys.executable, "-c", spawn])
    try:
        reaper = wait_for_child(run.pid)
        command = wait_for_child(reaper.pid)
        run.kill()
        run.wait()
        _, alive = psutil.wait_procs([reaper, command], timeout=20)
        assert alive == []
        assert not workdir.exists()
    finally:
        run.kill()


def test_a_run_that_died_before_the_reaper_started_is_not_waited_for(workdir, tmp_path):
    """The reaper's parent is not the run it was told of: the run is gone already,
    so the command never starts and the workdir goes."""
    marker = tmp_path / "started"
    command = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    reaper = subprocess.run(reaper_command(workdir, gone.pid, command), timeout=20)
    assert reaper.returncode == 0
    assert not marker.exists()
    assert not workdir.exists()


@pytest.mark.parametrize("code", [0, 3])
def test_a_command_that_exits_on_its_own_passes_its_status_and_keeps_the_workdir(workdir, code):
    command = [sys.executable, "-c", f"raise SystemExit({code})"]
    reaper = subprocess.run(reaper_command(workdir, os.getpid(), command), timeout=20)
    assert reaper.returncode == code
    assert workdir.exists()  # the run reads the node's log there
