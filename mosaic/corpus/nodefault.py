"""A node that cannot see a log the parent scanned: a fact of the node, never the log's eviction.

Without a shared file system (and without ``--ship-logs``), or on a node started in
another mount namespace or root, a worker meets the parent's paths as missing files,
or as other files. Until 2026-11-29 it evicted each such log as ``unreadable``
(2,879 of 3,000 logs of one run across network namespaces, exit status 0), and a
rerun kept those evictions. Now:

* on the worker (:func:`node_bytes`), a log file it cannot open, or whose size or
  modification time (to the second: file systems keep different fractions) is not
  what the scan saw, raises :class:`~mosaic.errors.NodeFault`; the task returns it
  as a result of status ``node_fault`` (:func:`fault`), which is never stored;
* on the parent (:func:`settle`), the file is read again. When the parent cannot
  read it either, the log is evicted for what the parent met (a fact of the file,
  as any run on this machine would find it); when it can, the run stops (exit
  status 1) with a message naming the node, the path and the two fixes, after the
  batch's other results are saved. Nothing is recorded for such a log, so a rerun
  redoes exactly those (``--ship-logs`` sends the bytes the parent reads).

Stores of older runs still hold such evictions (details beginning ``no such
file:`` or ``cannot open``): every rerun validates and categorizes those logs again
(:meth:`mosaic.corpus.store.Store.mark_seen`, ``begin_run``).
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from mosaic.corpus.scan import LogRef, Stamp, read_regular
from mosaic.darshan.archive import open_regular, read_opened
from mosaic.errors import EngineError, NodeFault

NODE_FAULT = "node_fault"  # the status of a task's result for a log its worker could not see


def node_bytes(ref: LogRef, max_bytes: int) -> bytes:
    """The bytes of a scanned log file, read on this node (see the module docstring);
    NodeFault when this node cannot open it, or opens another file than the one scanned."""
    try:
        fd = open_regular(ref.location)
    except OSError as error:
        raise NodeFault(f"cannot open {ref.location}: {error.strerror}") from None
    info = os.fstat(fd)
    if ref.stamp is not None and (info.st_size, _second(info.st_mtime_ns)) != _scanned(ref.stamp):
        os.close(fd)
        raise NodeFault(
            f"{ref.location} is another file here (size {info.st_size}, modified "
            f"{_when(info.st_mtime_ns)}) than the one scanned (size {ref.stamp.size}, "
            f"modified {_when(ref.stamp.mtime_ns)})"
        )
    return read_opened(fd, ref.location, max_bytes)


def _second(ns: int) -> int:
    return ns // 1_000_000_000


def _scanned(stamp: Stamp) -> tuple[int, int]:
    return stamp.size, _second(stamp.mtime_ns)


def _when(ns: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(_second(ns)))


def fault(ref: LogRef, error: NodeFault) -> dict[str, Any]:
    """The task's result for a log this worker could not see: what the parent needs to settle it."""
    return {
        "file": ref.name,
        "status": NODE_FAULT,
        "ref": ref,
        "node": socket.gethostname(),
        "detail": str(error),
    }


def settle(result: dict[str, Any], max_bytes: int) -> tuple[str, str] | EngineError:
    """A ``node_fault`` result, on the parent: the (reason, detail) of the log's eviction when
    this machine cannot read the file either, else the EngineError that stops the run."""
    ref: LogRef = result["ref"]
    problem = read_regular(ref.location, max_bytes)[1]
    if problem is not None:
        return problem
    return EngineError(
        f"node {result['node']} cannot read a log this machine reads: {result['detail']}. The nodes "
        "must see the logs at the paths this machine does (one shared file system, mounted at the "
        "same place), or add --ship-logs to send each log's bytes with its job. Nothing was recorded "
        "for the logs a node could not read: rerun the same command to resume."
    )
