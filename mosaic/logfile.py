"""One log file in, one result object out: reading, and the eviction of a bad log.

:mod:`mosaic.analysis` computes on a :class:`~mosaic.trace.Trace` and does no
I/O; this module is the boundary around it that the command line, the batch
pipeline and the service share: it reads the file, and it turns whatever a
bad log raises (a :class:`~mosaic.errors.LogError`, a ``MemoryError`` past
the worker's memory limit, a reader bug met on odd bytes) into the evicted
result object of SPEC 3.1 and 4.
"""

from __future__ import annotations

from collections.abc import Callable
from os import PathLike
from pathlib import Path
from typing import TypedDict, TypeVar

from mosaic.analysis.categorize import TraceResult, categorize_trace
from mosaic.analysis.reasons import categorize_explained
from mosaic.config import Config
from mosaic.errors import MEMORY_BOUND, LogError, NodeFault, Reason, internal_error
from mosaic.trace import read_trace


class EvictedResult(TypedDict):
    """The result object of a log that could not be categorized (SPEC 4)."""

    file: str
    status: str  # "evicted"
    reason: str  # a Reason
    detail: str


Result = TypeVar("Result")


def evicted_result(file: str | PathLike[str], reason: str, detail: str = "") -> EvictedResult:
    """The result object of a log that could not be categorized (SPEC 3.1, 4)."""
    return {"file": str(file), "status": "evicted", "reason": reason, "detail": detail}


def log_present(location: str | PathLike[str]) -> bool:
    """The log at ``location`` (a file, or ARCHIVE/MEMBER) is there to read."""
    path = Path(location)
    return path.is_file() or any(parent.is_file() for parent in path.parents)


def guarded(file: str | PathLike[str], work: Callable[[], Result]) -> Result | EvictedResult:
    """``work()``, or the eviction of ``file``: a bad log never escapes as an exception.

    A :class:`~mosaic.errors.LogError` keeps its reason; any other
    exception is a defect of ours met on this log, evicted as
    ``internal_error`` (never ``unreadable``: a bug must not pass for bad
    data) with the exception and where it was raised as detail, so one log
    cannot stop a batch of hundreds of thousands, nor fail a service request
    with a traceback. A :class:`~mosaic.errors.NodeFault` is not the log's: it
    goes up to the batch task, which reports it as such.
    """
    try:
        return work()
    except NodeFault:
        raise
    except LogError as error:
        return evicted_result(file, error.reason, error.detail)
    except MemoryError:  # past the worker's memory limit (RLIMIT_AS)
        return evicted_result(file, Reason.TOO_LARGE, MEMORY_BOUND)
    except Exception as error:  # noqa: BLE001 - a batch must survive any defect
        defect = internal_error(error)
        return evicted_result(file, defect.reason, defect.detail)


def categorize_file(
    path: str | PathLike[str], config: Config, explain: bool = False
) -> TraceResult | EvictedResult:
    """Read and categorize one log; never raises on a bad log (see :func:`guarded`).

    ``explain``: the result also carries the reasons of its labels
    (:func:`mosaic.analysis.reasons.categorize_explained`).
    """
    categorize = categorize_explained if explain else categorize_trace
    return guarded(path, lambda: categorize(read_trace(path, config), config))
