"""Every error type of mosaic in one place, and what each means.

- :class:`Reason`: why a log was evicted (SPEC 3.1, plus ``partial`` under
  ``--strict`` and ``internal_error`` for a defect of ours);
  :class:`LogError` carries one out of the reader and the analysis.
- :class:`NodeFault`: a batch worker cannot see a log the parent scanned (not the
  log's fault: never its eviction).
- :class:`EngineError`: a batch run cannot go on (no cluster, OUT locked by
  another run, a damaged store); :class:`DamagedStore` is the last, with
  what to do about it.
- :class:`StoreUnavailable`: the service's store cannot be used now (gone,
  replaced, damaged, full); the service answers 503 ``store_unavailable``.
- :class:`ApiError`: every ``error`` code the scheduler API answers.

``Reason`` and ``ApiError`` are ``StrEnum``: they serialize to the plain
strings of the output contract and compare equal to them.
"""

from __future__ import annotations

import shlex
import traceback
from enum import StrEnum
from pathlib import Path


class Reason(StrEnum):
    UNREADABLE = "unreadable"  # not a Darshan log, empty, bad magic
    TRUNCATED = "truncated"  # regions past the end of the file
    CORRUPT_STREAM = "corrupt_stream"  # a compressed region does not decompress
    UNSUPPORTED_VERSION = "unsupported_version"
    BAD_JOB = "bad_job"  # end before start, no run time, nprocs < 1
    NO_IO_MODULES = "no_io_modules"  # no POSIX/STDIO/DXT data
    TIMEOUT = "timeout"  # longer than the per-trace limit
    TOO_LARGE = "too_large"  # file, member or inflated data past the size limit
    WORKER_CRASH = "worker_crash"  # the process analysing it died
    PARTIAL = "partial"  # a module ran out of record memory (--strict only)
    INTERNAL_ERROR = "internal_error"  # a defect of mosaic met on this log, not bad data: report it


TRACEBACK_FRAMES = 4  # innermost frames an internal_error's detail names
MEMORY_BOUND = "needs more memory than a worker may use"  # detail of a too_large past RLIMIT_AS


class LogError(Exception):
    """A log that cannot be used; ``reason`` is a :class:`Reason`."""

    def __init__(self, reason: Reason | str, detail: str = ""):
        reason = Reason(reason)
        super().__init__(f"{reason}: {detail}" if detail else str(reason))
        self.reason = reason
        self.detail = detail


def internal_error(error: BaseException, where: str = "") -> LogError:
    """The eviction of a log that met a defect of ours: the exception's type and
    message and the innermost frames of its traceback, so the defect can be found
    from ``evicted.jsonl`` alone and is never counted as bad data."""
    frames = traceback.extract_tb(error.__traceback__)[-TRACEBACK_FRAMES:]
    trail = " <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(frames))
    on = f" on {where}" if where else ""
    return LogError(Reason.INTERNAL_ERROR, f"{type(error).__name__}{on}: {error} [at {trail}]")


class NodeFault(Exception):
    """A worker cannot see a log file the parent scanned: it cannot open it, or what it opens
    is another file. A fact of the node (no shared file system, another root), never of the
    log: it is not the log's eviction (mosaic/corpus/nodefault.py says what becomes of it)."""


class EngineError(RuntimeError):
    """A batch run cannot go on: the cluster could not be started or reached or lost
    every node, OUT is locked by another run, or the store is damaged (the message
    says which and what to do)."""


class DamagedStore(EngineError):
    """A store SQLite cannot read (truncated, overwritten): says what to do and what is lost."""

    def __init__(self, path: Path, detail: str) -> None:
        quoted = shlex.quote(str(path))
        super().__init__(
            f"{path} is damaged ({detail}) and cannot be repaired in place. Move it aside "
            f"(mv {quoted} {quoted}.damaged) and run `mosaic run` again: it validates and "
            "categorizes every log anew and writes the same outputs, but the scheduler lookups "
            "then hold only this run's corpus; what the store held besides (runs recorded "
            "through the service with ?store=true, groups of earlier runs on other inputs) is "
            "lost, unless sqlite3's `.recover` salvages it from the moved file."
        )


class NewerStore(EngineError):
    """A store whose layout a newer mosaic wrote: refused, never misread nor rewritten."""

    def __init__(self, path: Path, layout: int, known: int) -> None:
        super().__init__(
            f"{path} has lookup layout {layout}, written by a newer mosaic; this one reads "
            f"layouts up to {known}. Open it with that release or a later one (nothing was "
            "changed in the file), or restore a backup made by this release."
        )


class StoreUnavailable(Exception):
    """The service's store cannot be used now; the message says why (answered 503)."""


class ApiError(StrEnum):
    """Every ``error`` code of the scheduler API's JSON errors (``mosaic serve``); a
    ``StrEnum`` like :class:`Reason`, so it is the wire string itself."""

    BAD_REQUEST = "bad_request"  # 400: malformed framing (bare LF, obs-fold, both body framings)
    BAD_ENCODING = "bad_encoding"  # 400: Content-Encoding gzip, body not gzip
    UNAUTHORIZED = "unauthorized"  # 401: missing or wrong bearer token
    STORE_READ_ONLY = "store_read_only"  # 403: store=true on a server without a write token
    NOT_FOUND = "not_found"  # 404: no such route
    UNKNOWN_APPLICATION = "unknown_application"  # 404: no stored (uid, app) group
    UNKNOWN_JOB = "unknown_job"  # 404: no stored job id
    METHOD_NOT_ALLOWED = "method_not_allowed"  # 405
    REQUEST_TIMEOUT = "request_timeout"  # 408: head or body not received in time
    JOB_CONFLICT = "job_conflict"  # 409: the job id is stored under another uid
    JOB_MISMATCH = "job_mismatch"  # 409: the log's job id or uid is not the one the poster named
    JOB_FINISHED = "job_finished"  # 409: a start of a job the registry has seen end (or start later)
    TOO_LARGE = "too_large"  # 413: body past the limit (Reason.TOO_LARGE's string)
    UNSUPPORTED_ENCODING = "unsupported_encoding"  # 415
    INVALID_REQUEST = "invalid_request"  # 422: query, path or body parameters
    TOO_MANY_REQUESTS = "too_many_requests"  # 429: too many requests pipelined or categorizations queued
    HEADER_TOO_LARGE = "header_too_large"  # 431: request head past the limit
    TOO_MANY_CONNECTIONS = "too_many_connections"  # 503: dropped past the connection cap
    STORE_UNAVAILABLE = "store_unavailable"  # 503: store file gone, replaced, damaged or full
    QUEUE_TIMEOUT = "queue_timeout"  # 503: no worker free for the categorization in time
    REGISTRY_FULL = "registry_full"  # 503: running_max_jobs jobs already registered as running
