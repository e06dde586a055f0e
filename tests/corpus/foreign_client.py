"""A plain dispy client, unrelated to mosaic, that tries to run a function on a node.

    python -m corpus.foreign_client NODE_HOST NODE_PORT CLIENT_PORT MARKER [SECRET]

The function writes MARKER; the client waits up to WAIT_SECONDS for it to run,
prints ``ran`` or ``did not run`` as its last line, and exits 0 either way.
dispy's own log lines (before it) say whether it reached the node ("secret" mismatch).
"""

from __future__ import annotations

import logging
import sys

import dispy

WAIT_SECONDS = 10.0


def write_marker(path):  # type: ignore[no-untyped-def]  # shipped to the node as source
    with open(path, "w") as fh:
        fh.write("ran")
    return 0


def main(argv: list[str]) -> None:
    host, node_port, client_port, marker = argv[0], int(argv[1]), int(argv[2]), argv[3]
    secret = argv[4] if len(argv) > 4 else ""
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
        ran = job.finish.wait(WAIT_SECONDS) and job.status == dispy.DispyJob.Finished
        print("ran" if ran else "did not run", flush=True)
    finally:
        cluster.close(timeout=0, terminate=True)
        cluster.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
