"""A plain dispy client, unrelated to mosaic, that tries to run a function on a node.

    python -m mosaic_testing.foreign_client NODE_HOST NODE_PORT CLIENT_PORT MARKER [SECRET [bypass]]

The function writes MARKER; with ``bypass`` the client skips its own check of the
node's answer (dispy refuses a node whose answer shows another secret), as an
attacker's modified client would, so that only the node's own check stops it.
The client waits up to WAIT_SECONDS for it to run, prints ``ran`` or ``did not
run`` as its last line, and exits 0 either way; dispy's own log lines (before
it) say how far it got ("secret" mismatch, "Failed to setup"). Once dispy has
logged one of those, the node is known to refuse: the client waits only
GRACE_SECONDS more (a job that ran anyway would still be seen) instead of the
whole WAIT_SECONDS, which made each refused client cost 10 s.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import TextIO

import dispy

WAIT_SECONDS = 10.0
GRACE_SECONDS = 1.0
REFUSALS = ('"secret" mismatch', "Failed to setup")


class _RefusalWatch:
    """dispy's log stream, passed through, noting when a line says the node refused."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.refused = threading.Event()

    def write(self, text: str) -> int:
        if any(refusal in text for refusal in REFUSALS):
            self.refused.set()
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


class _Anything(bytes):
    """Equal to any bytes: dispy's client compares its own auth code with what it receives."""

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = bytes.__hash__


def _skip_the_client_check() -> None:
    dispy._Cluster.auth = property(lambda self: _Anything(b"x" * 40), lambda self, value: None)


def write_marker(path):  # type: ignore[no-untyped-def]  # shipped to the node as source
    with open(path, "w") as fh:
        fh.write("ran")
    return 0


def main(argv: list[str]) -> None:
    host, node_port, client_port, marker = argv[0], int(argv[1]), int(argv[2]), argv[3]
    secret = argv[4] if len(argv) > 4 else ""
    if argv[5:] == ["bypass"]:
        _skip_the_client_check()
    watch = _RefusalWatch(sys.stdout)
    dispy.logger.stream = watch
    cluster = dispy.JobCluster(
        write_marker,
        nodes=[dispy.NodeAllocate(host, node_port)],
        host="127.0.0.1",
        dispy_port=client_port,
        secret=secret,
        loglevel=logging.WARNING,
    )
    try:
        job = cluster.submit(marker)
        deadline = time.monotonic() + WAIT_SECONDS
        while not job.finish.wait(0.05) and time.monotonic() < deadline:
            if watch.refused.is_set():
                deadline = min(deadline, time.monotonic() + GRACE_SECONDS)
        ran = job.finish.is_set() and job.status == dispy.DispyJob.Finished
        print("ran" if ran else "did not run", flush=True)
    finally:
        cluster.close(timeout=0, terminate=True)
        cluster.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
