"""The memory regime every analysing process runs under (batch workers, service
workers, the command line): a bounded address space, and a heap kept between logs."""

from __future__ import annotations

import ctypes
import functools
import os
import resource

# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
# Blocks up to this size come from the heap, not from a fresh mmap: a heavy log's
# regions inflate to megabytes (15 MB for 21,000 POSIX records), and each mmap'ed
# block is faulted in page by page again. 32 MiB is the most mallopt accepts.
HEAP_BLOCK_MAX_BYTES = 32 << 20
# Free heap kept at its top before any is given back to the system (then faulted in
# again): twice the block size, as glibc's adaptive thresholds pair them.
HEAP_KEEP_BYTES = 64 << 20


@functools.cache
def keep_heap() -> bool:
    """Let glibc's malloc keep freed memory for the next log instead of returning it.

    By default glibc maps blocks over its (adaptive) threshold with mmap and
    trims the heap's free top at twice that: a process categorizing one
    heavy log after another had its buffers unmapped and page-faulted in again
    for every log (525 faults and ~1.1 ms of system time per 206 kB log,
    a fifth of its categorization; benchmarks/README.md). The fixed thresholds
    are the highest glibc's own adaptation reaches, set from the start.
    False where the C library has no ``mallopt`` (not glibc): the defaults
    stay, nothing else changes.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_MMAP_THRESHOLD, HEAP_BLOCK_MAX_BYTES)) & bool(
        mallopt(_M_TRIM_THRESHOLD, HEAP_KEEP_BYTES)
    )


def limit_memory(extra_bytes: int) -> None:
    """Cap this process's address space at its current size plus `extra_bytes`
    (RLIMIT_AS): past it, allocations fail with MemoryError (evicted
    ``too_large``) instead of the machine swapping. Relative, because a worker
    forked from a warm parent already maps numpy and scipy; never above an
    existing hard limit. The heap is kept between logs (:func:`keep_heap`):
    at most ``HEAP_KEEP_BYTES`` of the bound may stay mapped while free.
    """
    keep_heap()
    with open("/proc/self/statm") as fh:
        mapped = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    limit = mapped + extra_bytes
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
