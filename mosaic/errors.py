"""One error vocabulary: why a log was evicted, what stops a run, and the API's error codes.

Every eviction reason of SPEC 3.1 (plus ``partial`` under ``--strict``) is a
member of :class:`Reason`, every ``error`` code the scheduler API answers a
member of :class:`ApiError`; both are ``StrEnum`` so they serialize to the
plain strings of the output contract and compare equal to them.
"""

from __future__ import annotations

from enum import StrEnum


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


MEMORY_BOUND = "needs more memory than a worker may use"  # detail of a too_large past RLIMIT_AS


class LogError(Exception):
    """A log that cannot be used; ``reason`` is a :class:`Reason`."""

    def __init__(self, reason: Reason | str, detail: str = ""):
        reason = Reason(reason)
        super().__init__(f"{reason}: {detail}" if detail else str(reason))
        self.reason = reason
        self.detail = detail


class EngineError(RuntimeError):
    """The cluster could not be started or reached, or lost every node."""


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
    TOO_LARGE = "too_large"  # 413: body past the limit (Reason.TOO_LARGE's string)
    UNSUPPORTED_ENCODING = "unsupported_encoding"  # 415
    INVALID_REQUEST = "invalid_request"  # 422: query, path or body parameters
    TOO_MANY_REQUESTS = "too_many_requests"  # 429: more pipelined requests queued than allowed
    HEADER_TOO_LARGE = "header_too_large"  # 431: request head past the limit
    TOO_MANY_CONNECTIONS = "too_many_connections"  # 503: dropped past the connection cap
    STORE_UNAVAILABLE = "store_unavailable"  # 503: store file gone, replaced, damaged or full
