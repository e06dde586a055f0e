"""What `mosaic serve` logs when SIGTERM cancels requests still under way: one line.

Why: past ``service_shutdown_seconds`` uvicorn cancels every request task and
each one logs "Exception in ASGI application" with a whole traceback of its
``CancelledError`` (before 2026-11-29, 16 queued posts wrote ~1,000 lines at
every stop), which reads as 16 defects where there is none. This filter on
uvicorn's ``uvicorn.error`` logger turns uvicorn's "Cancel N running task(s)"
into one warning naming the requests and the bound, and drops the cancelled
requests' tracebacks that follow it; any other error, and a ``CancelledError``
before that line (a defect), is logged as before.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

GRACEFUL_TIMEOUT = "Cancel %s running task(s), timeout graceful shutdown exceeded"  # uvicorn 0.54's words
CANCELLED = (
    "shutdown: %s request(s) still under way after %s s (service_shutdown_seconds) cancelled, unanswered"
)


class CancelledRequests(logging.Filter):
    """Once uvicorn cancels the requests at shutdown: its line reworded, their tracebacks dropped."""

    def __init__(self, shutdown_seconds: float) -> None:
        super().__init__()
        self.shutdown_seconds = shutdown_seconds
        self.cancelling = False

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == GRACEFUL_TIMEOUT:
            self.cancelling = True
            tasks = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            record.msg, record.args = CANCELLED, (tasks, f"{self.shutdown_seconds:g}")
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            return True
        error = record.exc_info[1] if record.exc_info else None
        return not (self.cancelling and isinstance(error, asyncio.CancelledError))


def log_config(shutdown_seconds: float) -> dict[str, Any]:
    """uvicorn's logging configuration with :class:`CancelledRequests` on its error logger."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["filters"] = {"cancelled": {"()": CancelledRequests, "shutdown_seconds": shutdown_seconds}}
    config["loggers"]["uvicorn.error"]["filters"] = ["cancelled"]
    return config
