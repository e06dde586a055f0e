"""Faults for the service's workers, injected from outside the server's code.

    python -m mosaic_testing.faulty_service serve ARGS...

runs ``mosaic serve ARGS...`` whose workers categorize through
:func:`faulty_categorize_posted` instead of the pool's own entry point: a
posted body holding ``CRASH_MARKER`` aborts its worker (as a segfault would),
``HANG_MARKER`` hangs it, ``MEMORY_MARKER`` allocates past the worker's memory
limit outside the categorization's guard (as encoding a huge result would),
and ``DEFECT_MARKER`` raises inside it (a defect of ours: ``internal_error``).
Any other body is categorized as the server would. The workers import this
module by name when they unpickle the function, so the server's environment
must let them (:func:`mosaic_testing.faults.node_path`).
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
from pathlib import Path

from mosaic.config import Config
from mosaic.service import pool
from mosaic.service.pool import Answer
from mosaic.service.pool import categorize_posted as real_categorize_posted

CRASH_MARKER = b"MOSAIC-TEST-CRASH"
HANG_MARKER = b"MOSAIC-TEST-HANG"
MEMORY_MARKER = b"MOSAIC-TEST-MEMORY"
DEFECT_MARKER = b"MOSAIC-TEST-DEFECT"


def _defect(*_args: object, **_kwargs: object) -> None:
    raise ZeroDivisionError("an injected defect")


def faulty_categorize_posted(source: bytes | str, config: Config, explain: bool = False) -> Answer:
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    if CRASH_MARKER in data:
        faulthandler.disable()  # an intended crash: no traceback dump
        os.abort()
    if HANG_MARKER in data:
        threading.Event().wait()
    if MEMORY_MARKER in data:
        bytearray(2 * config.worker_memory_bytes)  # past RLIMIT_AS: MemoryError
    if DEFECT_MARKER in data:  # this worker's own module: restored before it answers again
        real = pool.build_trace
        pool.build_trace = _defect  # type: ignore[assignment]
        try:
            return real_categorize_posted(source, config, explain)
        finally:
            pool.build_trace = real
    return real_categorize_posted(source, config, explain)


def main(argv: list[str]) -> None:
    from mosaic.cli import main as mosaic_main
    from mosaic_testing import faulty_service  # by its importable name, as the workers import it

    pool.categorize_posted = faulty_service.faulty_categorize_posted
    sys.argv = ["mosaic", *argv]
    mosaic_main()


if __name__ == "__main__":
    main(sys.argv[1:])
