"""Keep a run's helpers from outliving it, even when the run is SIGKILLed.

    python -m mosaic.corpus.reaper WORKDIR [-- COMMAND...]

`mosaic run` starts this small process as its child; it starts COMMAND (the
local dispynode) in a process group of its own and waits. When the run dies
(Linux: ``PR_SET_PDEATHSIG``; elsewhere: the parent pid changes, polled) or
sends SIGTERM, it stops COMMAND's whole group (SIGTERM, then SIGKILL after a
grace period: dispynode and its job processes) and removes WORKDIR (the
run's ``mosaic-dispy-*`` folder). If COMMAND exits on its own, the reaper
exits with its status and leaves WORKDIR for the run to read the node's log.

Standard library only: it must start in milliseconds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading

POLL_SECONDS = 0.2
GRACE_SECONDS = 3.0


def die_with_parent(signum: int = signal.SIGTERM) -> None:
    """Linux: deliver `signum` to this process when its parent dies (no-op elsewhere)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signum)


def stop_process_group(process: subprocess.Popen, grace_seconds: float = GRACE_SECONDS) -> None:
    """SIGTERM a process started with start_new_session, then SIGKILL its group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(grace_seconds)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def main(argv: list[str]) -> int:
    workdir, command = argv[0], argv[2:] if argv[1:2] == ["--"] else []
    parent = os.getppid()
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())
    die_with_parent()
    child = None
    if os.getppid() == parent:  # the run did not die before prctl took effect
        child = subprocess.Popen(command, start_new_session=True) if command else None
        while not stop.wait(POLL_SECONDS) and os.getppid() == parent:
            if child is not None and child.poll() is not None:
                return child.returncode
    if child is not None:
        stop_process_group(child)
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
