"""Categorization in worker processes for ``mosaic serve``.

Why processes: categorizing is CPU-bound numpy work (mean shift included: its
numpy implementation is the default, see ``Config.meanshift_implementation``) that would
stall the event loop, and a hostile log may crash a native library or never
finish. pebble's ProcessPool (a well-kept wrapper of multiprocessing) gives
each task its own timeout and notices a dead worker; it replaces only the
worker that died or hung, so the other requests in flight keep their worker
and their answer.

Each worker's address space may grow by ``Config.worker_memory_bytes`` at
most (RLIMIT_AS, set as it starts, the bound ``mosaic run`` uses too): a log
that would need more is evicted ``too_large`` at the allocation that crosses
it, instead of pinning gigabytes until its timeout.

The tests inject crashes, hangs and defects from outside this module
(``mosaic_testing.faulty_service`` replaces :func:`categorize_posted`): the
server carries no test hook.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import multiprocessing
import signal
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pebble

from mosaic.activity import build_activity, pack
from mosaic.analysis import IMPORTED_ON_FIRST_USE
from mosaic.analysis.categorize import TraceResult, categorize_trace
from mosaic.analysis.reasons import categorize_explained
from mosaic.config import Config
from mosaic.darshan.reader import unwrap
from mosaic.errors import MEMORY_BOUND, Reason
from mosaic.limits import limit_memory
from mosaic.logfile import evicted_result, guarded
from mosaic.service.fairqueue import FairQueue, Ticket
from mosaic.trace import build_trace, read_bounded

LOG = logging.getLogger("mosaic.service")
WORKER_FAILURES = (Reason.TIMEOUT, Reason.WORKER_CRASH)  # evictions that say nothing about the log
UPLOAD_PREFIX = "posted/sha256-"  # file name of a posted log: its content hash, never a path
UPLOAD_HASH_CHARS = 32
# Imported once in the fork server, so a (replacement) worker starts in milliseconds
# (scikit-learn only if a config asks for its MeanShift: it is imported lazily then),
# with what the analysis imports on first use.
PRELOAD = ["mosaic.service.pool", *IMPORTED_ON_FIRST_USE]


@dataclass(frozen=True)
class Answer:
    """A result object already encoded as JSON, so the event loop only forwards bytes."""

    status: str  # "ok" or "evicted"
    reason: str  # eviction reason; "" when ok
    body: bytes  # UTF-8 JSON of the SPEC 4 object or of the evicted one
    activity: bytes | None = None  # the run's packed activity (SPEC 3.10), recorded with a stored post


def encode(result: Mapping[str, Any]) -> Answer:
    """JSON of ``result``; NaN and infinities are not JSON, so such a result is evicted."""
    try:
        body = json.dumps(result, allow_nan=False).encode()
    except ValueError:
        result = evicted_result(
            result["file"], Reason.INTERNAL_ERROR, "result holds a non-finite number (analysis defect)"
        )
        body = json.dumps(result).encode()
    return Answer(result["status"], result.get("reason", ""), body)


def categorize_posted(source: bytes | str, config: Config, explain: bool = False) -> Answer:
    """Worker entry point: a posted log's bytes (or the file they were spooled to),
    named by the hash of the log without its outer gzip/bzip2 layer (re-compressing
    a log does not make it another run), categorized (with the reasons of its labels
    when ``explain``) and encoded off the event loop."""
    categorize = categorize_explained if explain else categorize_trace
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    file = posted_name(data)

    activity: bytes | None = None

    def work() -> TraceResult:
        nonlocal file, activity
        log, inflated = unwrap(data, config.max_inflated_bytes)
        if log is not data:
            file = posted_name(log)
        darshan = read_bounded(log, config, file, inflated)
        trace = build_trace(darshan, file, config)
        activity = pack(build_activity(darshan, config))  # SPEC 3.10, from the same read
        del darshan  # as trace_from_bytes did: the log is not kept through the analysis
        return categorize(trace, config)

    answer = encode(guarded(file, work))
    return replace(answer, activity=activity) if answer.status == "ok" else answer


def posted_name(log: bytes | bytearray) -> str:
    return UPLOAD_PREFIX + hashlib.sha256(log).hexdigest()[:UPLOAD_HASH_CHARS]


def _worker_init(memory_bytes: int) -> None:
    """Bound the worker's address space; leave Ctrl-C to the server, which stops workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    limit_memory(memory_bytes)


class WorkerPool:
    """A pebble process pool answering one log at a time per worker, handed out by a
    :class:`~mosaic.service.fairqueue.FairQueue`."""

    def __init__(self, workers: int, config: Config):
        self.workers = workers
        self.config = config
        self.queue = FairQueue(workers, config)
        # forkserver: workers (and their replacements) fork from a clean, single-threaded
        # process, never from the threaded server.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        self._pool = pebble.ProcessPool(
            max_workers=workers,
            initializer=_worker_init,
            initargs=(config.worker_memory_bytes,),
            context=context,
        )

    async def categorize(self, source: bytes | str, ticket: Ticket, explain: bool = False) -> Answer:
        """Categorize one posted log (bytes, or a spooled file's path) admitted with
        ``ticket``, once the queue gives it a worker."""
        async with self.queue.worker(ticket):
            return await self._run(source, explain)

    async def _run(self, source: bytes | str, explain: bool = False) -> Answer:
        """A crash or a hang of the worker evicts the log, and so does a MemoryError the
        worker raises outside the categorization's own guard (encoding or sending back a
        huge result): ``too_large``, as ``mosaic run`` evicts it."""
        timeout = self.config.trace_timeout_seconds
        future = self._pool.schedule(categorize_posted, (source, self.config, explain), timeout=timeout)
        try:
            return await asyncio.wrap_future(future)
        except TimeoutError:
            detail = f"no result within {timeout:g} s"
            reason = Reason.TIMEOUT
        except pebble.ProcessExpired as error:
            detail = f"worker process died (exit code {error.exitcode})"
            reason = Reason.WORKER_CRASH
        except MemoryError:
            detail = MEMORY_BOUND
            reason = Reason.TOO_LARGE
        file = posted_name(source) if isinstance(source, bytes) else f"posted/{Path(source).name}"
        replaced = "; its worker was replaced" if reason in WORKER_FAILURES else ""
        LOG.warning("%s: %s (%s)%s", file, reason, detail, replaced)
        return encode(evicted_result(file, reason, detail))

    async def warm_up(self) -> None:
        """Wait for a worker to answer (the fork server has imported everything).

        Called before the server reports ready, so that readiness means "can
        categorize now", not "will in a few seconds".
        """
        answer = await self._run(b"")  # before any request: no ticket needed
        if answer.reason in WORKER_FAILURES:
            raise RuntimeError(f"categorization workers do not work: {answer.body.decode()}")

    def close(self) -> None:
        self._pool.stop()  # type: ignore[no-untyped-call]  # pebble leaves it unannotated
        self._pool.join()
