"""Keep a run's helpers from outliving it, even when the run is SIGKILLed.

    python -m mosaic.corpus.reaper WORKDIR RUN_PID [-- COMMAND...]

`mosaic run` (process RUN_PID) starts this small process as its child; it
starts COMMAND (the local dispynode) in a process group of its own and waits.
When the run dies (Linux: ``PR_SET_PDEATHSIG``; elsewhere, and for a run that
died before this process started: the parent pid is not RUN_PID, polled) or
sends SIGTERM, it stops COMMAND's whole group (SIGTERM, then SIGKILL after a
grace period: dispynode and its job processes) and removes WORKDIR (the
run's ``mosaic-dispy-*`` folder). If COMMAND exits on its own, the reaper
exits with its status and leaves WORKDIR for the run to read the node's log.

Standard library only: it must start in milliseconds. Its signal handler only
appends to a list: a handler runs between any two bytecodes of the main
thread, even inside a lock it holds, so one that took a lock (``Event.set``)
deadlocked the reaper when two signals came close together (the run's SIGTERM
at its end, then the death signal of a run killed right after).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time

POLL_SECONDS = 0.2
GRACE_SECONDS = 3.0


def die_with_parent(signum: int = signal.SIGTERM) -> None:
    """Linux: deliver `signum` to this process when its parent dies (no-op elsewhere)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signum)


def die_with(parent: int, signum: int = signal.SIGKILL) -> None:
    """`signum` to this process when `parent`, the process that started it, ends; at once
    if it has already (then this process has another parent: the signal would never come)."""
    die_with_parent(signum)
    if os.getppid() != parent:
        os.kill(os.getpid(), signum)


def stop_process_group(process: subprocess.Popen[bytes], grace_seconds: float = GRACE_SECONDS) -> None:
    """SIGTERM a process started with start_new_session, then SIGKILL its group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(grace_seconds)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def main(argv: list[str]) -> int:
    workdir, run_pid = argv[0], int(argv[1])
    command = argv[3:] if argv[2:3] == ["--"] else []
    stopped: list[int] = []
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda signum, _: stopped.append(signum))
    die_with_parent()
    child = None
    if os.getppid() == run_pid:  # the run did not die before prctl took effect
        child = subprocess.Popen(command, start_new_session=True) if command else None
        while not stopped and os.getppid() == run_pid:
            if child is not None and child.poll() is not None:
                return child.returncode
            time.sleep(POLL_SECONDS)
    if child is not None:
        stop_process_group(child)
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    # No interpreter shutdown: it restores the default handlers, and a signal
    # still in flight would then end the reaper by that signal, not its status.
    os._exit(main(sys.argv[1:]))
