"""One error vocabulary: why a log was evicted, and what stops a run.

Every eviction reason of SPEC 3.1 (plus ``partial`` under ``--strict``) is a
member of :class:`Reason`; a ``StrEnum`` so it serializes to the plain strings
of the output contract and compares equal to them.
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


class LogError(Exception):
    """A log that cannot be used; ``reason`` is a :class:`Reason`."""

    def __init__(self, reason: Reason | str, detail: str = ""):
        reason = Reason(reason)
        super().__init__(f"{reason}: {detail}" if detail else str(reason))
        self.reason = reason
        self.detail = detail


class EngineError(RuntimeError):
    """The cluster could not be started or reached, or lost every node."""
