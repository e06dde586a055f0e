"""Categorization in worker processes for ``mosaic serve``.

Why processes: categorizing is CPU-bound numpy / scikit-learn work that would
stall the event loop, and a hostile log may crash a native library or never
finish. pebble's ProcessPool (a well-kept wrapper of multiprocessing) gives
each task its own timeout and notices a dead worker; it replaces only the
worker that died or hung, so the other requests in flight keep their worker
and their answer.

Test-only hook: when the environment variable ``MOSAIC_SERVICE_TEST_HOOKS``
is set in the server's environment, a posted body containing ``CRASH_MARKER``
makes its worker abort (as a segfault would) and one containing
``HANG_MARKER`` makes it hang. Production servers never set it; it exists so
the tests can prove the server survives both.
"""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import os
import signal
import threading
from dataclasses import dataclass

import pebble

from mosaic.analysis.categorize import categorize_trace, evicted_result, guarded
from mosaic.config import Config
from mosaic.errors import Reason
from mosaic.trace import trace_from_bytes

LOG = logging.getLogger("mosaic.service")
WORKER_FAILURES = (Reason.TIMEOUT, Reason.WORKER_CRASH)  # evictions that say nothing about the log
TEST_HOOKS_ENV = "MOSAIC_SERVICE_TEST_HOOKS"
CRASH_MARKER = b"MOSAIC-TEST-CRASH"
HANG_MARKER = b"MOSAIC-TEST-HANG"
# Imported once in the fork server, so a (replacement) worker starts in milliseconds and
# its first periodic trace does not pay for the imports mean shift makes lazily.
PRELOAD = ["mosaic.service.pool", "sklearn.cluster", "scipy.spatial"]


@dataclass(frozen=True)
class Answer:
    """A result object already encoded as JSON, so the event loop only forwards bytes."""

    status: str  # "ok" or "evicted"
    reason: str  # eviction reason; "" when ok
    body: bytes  # UTF-8 JSON of the SPEC 4 object or of the evicted one


def encode(result: dict) -> Answer:
    """JSON of ``result``; NaN and infinities are not JSON, so such a result is evicted."""
    try:
        body = json.dumps(result, allow_nan=False).encode()
    except ValueError:
        result = evicted_result(result["file"], Reason.UNREADABLE,
                                "result holds a non-finite number (analysis defect)")
        body = json.dumps(result).encode()
    return Answer(result["status"], result.get("reason", ""), body)


def categorize_to_json(data: bytes, file: str, config: Config) -> Answer:
    """Worker entry point: categorize and encode, off the event loop."""
    return encode(categorize_bytes(data, file, config))


def categorize_bytes(data: bytes, file: str, config: Config) -> dict:
    """The SPEC 4 object of a log's bytes, or an evicted one; never raises on a bad log."""
    if os.environ.get(TEST_HOOKS_ENV):
        _test_hooks(data)
    return guarded(file, lambda: categorize_trace(trace_from_bytes(data, file, config), config))


def _test_hooks(data: bytes) -> None:
    if CRASH_MARKER in data:
        os.abort()
    if HANG_MARKER in data:
        threading.Event().wait()


def _worker_init() -> None:
    """Workers leave Ctrl-C to the server, which stops them itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class WorkerPool:
    """A pebble process pool answering one log at a time per worker."""

    def __init__(self, workers: int, config: Config):
        self.workers = workers
        self.config = config
        # forkserver: workers (and their replacements) fork from a clean, single-threaded
        # process, never from the threaded server.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        self._pool = pebble.ProcessPool(max_workers=workers, initializer=_worker_init,
                                        context=context)

    async def categorize(self, data: bytes, file: str) -> Answer:
        """Categorize one log's bytes; a crash or a hang of its worker evicts it."""
        timeout = self.config.trace_timeout_seconds
        future = self._pool.schedule(categorize_to_json, (data, file, self.config),
                                     timeout=timeout)
        try:
            return await asyncio.wrap_future(future)
        except TimeoutError:
            detail = f"no result within {timeout:g} s"
            reason = Reason.TIMEOUT
        except pebble.ProcessExpired as error:
            detail = f"worker process died (exit code {error.exitcode})"
            reason = Reason.WORKER_CRASH
        LOG.warning("%s: %s (%s); its worker was replaced", file, reason, detail)
        return encode(evicted_result(file, reason, detail))

    async def warm_up(self) -> None:
        """Wait for a worker to answer (the fork server has imported everything).

        Called before the server reports ready, so that readiness means "can
        categorize now", not "will in a few seconds".
        """
        answer = await self.categorize(b"", "warm-up")
        if answer.reason in WORKER_FAILURES:
            raise RuntimeError(f"categorization workers do not work: {answer.body.decode()}")

    def close(self) -> None:
        self._pool.stop()
        self._pool.join()
